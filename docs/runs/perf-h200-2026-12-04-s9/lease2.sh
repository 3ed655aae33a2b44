# lease 2 of session 9: the GDN prep kernels without the conv compiled as their own kernels
# (64 / 48 registers: 4 / 5 blocks a multiprocessor, were 2 / 3). Checks (test_cuda_gdn under the
# three slab rules), bench_gdn, FLA's layer in the same call (its autotuning run once during the
# build to fill Triton's cache, the figures from a second run on a quiet machine, as lease 1).
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
for a in "" "--slab 16" "--slab 32"; do timeout 60 build/gpu/test_cuda_gdn $a 2>&1 | tail -1; done
el checks
timeout 100 build/gpu/bench_gdn 2>$R/bench_gdn.log | tee $R/bench_gdn.jsonl | show
el bench_gdn
(cd tests/gpu/peers && timeout 120 python3 peer_gdn.py) >$R/peer_gdn.jsonl 2>$R/peer_gdn.log
echo "peer_gdn rc $?"; show <$R/peer_gdn.jsonl; tail -1 $R/peer_gdn.log
el peer_gdn
timeout 100 build/gpu/bench_gdn 2>>$R/bench_gdn.log | tee $R/bench_gdn2.jsonl | show
el "bench_gdn again"
