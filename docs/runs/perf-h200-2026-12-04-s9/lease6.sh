# call 6 of session 9 (the last 326 s of device time): 16-token runs in the prep backward
# without the conv (more, shorter blocks: at B 4 x T 2048 the 32-token runs made 576 blocks
# for 528 places). Checks, the layer's figures and the hybrid step; no peers (no time for them).
set -u
. .carry/env.sh
R=$OUT
t0=$(date +%s)
el() { echo "== $(( $(date +%s)-t0 )) s: $*"; }
make -j16 gpu-tests >$R/build.log 2>&1 || { grep -m 10 -E "error|warning" $R/build.log; exit 1; }
el built
show() { python3 -c "
import json,sys
for l in sys.stdin:
    try: d=json.loads(l)
    except Exception: continue
    if 'ms' in d: print(f'{d[\"what\"][:88]:88s} {d[\"ms\"]:8.3f} ms roofline {d.get(\"of_roofline\",0):.3f} floor {d.get(\"of_floor\",0):.3f}')"; }
timeout 40 build/gpu/test_cuda_gdn 2>&1 | tail -1
el checks
timeout 60 build/gpu/bench_gdn 2>$R/bench_gdn.log | tee $R/bench_gdn.jsonl | show | grep -E "prep|layer fwd\+bwd"
el bench_gdn
for k in train-hybrid train-hybrid; do timeout 50 build/gpu/bench_cuda_model $k 2>/dev/null | grep '"model"' | tee -a $R/train.jsonl | show; done
el train
