# lease 1 of session 9: the head fc813ea (the review's behaviour-preserving GDN mends) checked on
# the GPU, and FLA's GDN layer measured in the same call as graft's. FLA's Triton autotuning
# (> 235 s) runs once while graft builds, to fill Triton's compile cache; the figures are from
# its second run, on a quiet machine, after make test-gpu and bench_gdn.
set -u
. .carry/env.sh
R=$OUT
t0=$(date +%s)
el() { echo "== $(( $(date +%s)-t0 )) s: $*"; }
mkdir -p .peers/fla && tar -xJf .peers/fla.tar.xz -C .peers/fla
export GRAFT_FLA_PATH=$PWD/.peers/fla GRAFT_BENCH_GDN_NAIVE_TOKENS=0
(cd tests/gpu/peers && timeout 330 python3 peer_gdn.py) >$R/peer_gdn_warm.jsonl 2>$R/peer_gdn_warm.log &
warm=$!
make -j12 gpu-tests >$R/build.log 2>&1 || { grep -m 10 -E "error|warning" $R/build.log; exit 1; }
el built
wait $warm; echo "peer_gdn (warm-up, during the build) rc $?"
el "peer warm-up"
show() { python3 -c "
import json,sys
for l in sys.stdin:
    try: d=json.loads(l)
    except Exception: continue
    if 'ms' in d: print(f'{d[\"what\"][:88]:88s} {d[\"ms\"]:8.3f} ms roofline {d.get(\"of_roofline\",0):.3f} floor {d.get(\"of_floor\",0):.3f}')"; }
show <$R/peer_gdn_warm.jsonl
GRAFT_GPU_CALL_S=200 sh tests/gpu/device_run.sh test 2>&1 | tail -4
el test-gpu
timeout 100 build/gpu/bench_gdn 2>$R/bench_gdn.log | tee $R/bench_gdn.jsonl | show
el bench_gdn
left=$(( 570 - ($(date +%s) - t0) ))
(cd tests/gpu/peers && timeout $left python3 peer_gdn.py) >$R/peer_gdn.jsonl 2>$R/peer_gdn.log
echo "peer_gdn rc $?"; show <$R/peer_gdn.jsonl; grep -h "o_rel" $R/peer_gdn.jsonl | head -2; tail -2 $R/peer_gdn.log
el peer_gdn
