# lease 2 of session 8: the GDN kernels' k loops software-pipelined and the sequential
# passes' slab updates as strided multi-tile mma: checks, per-kernel times at B 4 and
# B 16 x T 2048, and the hybrid training step
set -u
. .carry/env.sh
R=$OUT
t0=$(date +%s)
el() { echo "== $(( $(date +%s)-t0 )) s: $*"; }
make -j16 gpu-tests >$R/build.log 2>&1 || { grep -m 10 -E "error|warning" $R/build.log; exit 1; }
el built
for a in "" "--slab 16" "--slab 32"; do timeout 60 build/gpu/test_cuda_gdn $a 2>&1 | tail -1; done
el checks
for t in 8192 32768; do
    GRAFT_BENCH_GDN_TOKENS=$t timeout 120 sh tests/gpu/bench/gdn_ncu.sh build >$R/gdn_ncu_$t.txt 2>&1; tail -7 $R/gdn_ncu_$t.txt
    el "gdn_ncu $t"
done
B=build/gpu/bench_cuda_model
for k in train-hybrid; do $B $k 2>/dev/null | grep '"model"' | tee -a $R/train.jsonl | python3 -c "
import json,sys
for l in sys.stdin:
    d=json.loads(l)
    if 'ms' in d: print(f'{d[\"what\"][:80]:80s} {d[\"ms\"]:8.2f} ms roofline {d.get(\"of_roofline\",0):.3f}')"; done
el train
