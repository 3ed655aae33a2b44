# lease 1 of session 14 (the first GPU since session 10): make test-gpu on the head (the
# wgmma attention backward, the four GDN local-gradient forms, the kept WY products: none of it
# had run on a GPU), the GDN layer and core backward per form beside FLA in the same call, then
# the attention kernels with the wgmma backward beside the mma.sync one. FLA's Triton autotuning
# runs once while graft builds (Triton's cache), the timed peer run after graft's benchmarks.
set -u
. .carry/env.sh
R=$OUT
t0=$(date +%s)
el() { echo "== $(( $(date +%s)-t0 )) s: $*"; }
left() { echo $(( $1 - ($(date +%s) - t0) )); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader
mkdir -p .peers/fla && tar -xJf .peers/fla.tar.xz -C .peers/fla
export GRAFT_FLA_PATH=$PWD/.peers/fla GRAFT_BENCH_GDN_NAIVE_TOKENS=0
L=$(mktemp -d)
(cd tests/gpu/peers && timeout 300 python3 peer_gdn.py) >$L/peer_gdn_warm.jsonl 2>$L/peer_gdn_warm.log &
warm=$!
make -j12 gpu-tests >$L/build.log 2>&1 || { grep -m 20 -E "error|warning" $L/build.log; tar -C $L -czf $R/misc.tar.gz .; exit 1; }
el built
GRAFT_GPU_CALL_S=250 sh tests/gpu/device_run.sh test 2>&1 | grep -E "PASS|FAIL|SKIP|passed|STOPPED|done in"
el test-gpu
wait $warm; echo "peer_gdn warm-up rc $?"
show() { python3 -c "
import json,sys
for l in sys.stdin:
    try: d=json.loads(l)
    except Exception: continue
    if 'ms' in d: print(f'{d[\"what\"][:92]:92s} {d[\"ms\"]:8.3f} ms floor {d.get(\"of_floor\",0):.3f}')"; }
timeout 110 build/gpu/bench_gdn 2>$L/bench_gdn.log | tee $R/bench_gdn.jsonl | show
el bench_gdn
t=$(left 420); [ $t -gt 150 ] && t=150
(cd tests/gpu/peers && timeout $t python3 peer_gdn.py) >$R/peer_gdn.jsonl 2>$L/peer_gdn.log
echo "peer_gdn rc $?"; show <$R/peer_gdn.jsonl; tail -2 $L/peer_gdn.log
el peer_gdn
t=$(left 575)
if [ $t -gt 60 ]; then
    timeout $t build/gpu/bench_attention 2>$L/bench_attention.log | tee $R/bench_attention.jsonl | show
    el bench_attention
fi
tar -C $L -czf $R/misc.tar.gz .
