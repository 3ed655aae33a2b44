# lease 4 of session 8: + 32-row slabs from B 2 on (12 heads), the prep kernels' next
# token prefetched into L1. Checks, then graft's GDN layer, hybrid training step and
# Stage 2, then the peers in the same call: torch + FLA compiled training, FLA's layer
set -u
. .carry/env.sh
R=$OUT
t0=$(date +%s)
el() { echo "== $(( $(date +%s)-t0 )) s: $*"; }
make -j16 gpu-tests >$R/build.log 2>&1 || { grep -m 10 -E "error|warning" $R/build.log; exit 1; }
el built
for a in "" "--slab 16"; do timeout 60 build/gpu/test_cuda_gdn $a 2>&1 | tail -1; done
el checks
show() { python3 -c "
import json,sys
for l in sys.stdin:
    try: d=json.loads(l)
    except Exception: continue
    if 'ms' in d: print(f'{d[\"what\"][:88]:88s} {d[\"ms\"]:8.3f} ms roofline {d.get(\"of_roofline\",0):.3f} floor {d.get(\"of_floor\",0):.3f}')"; }
timeout 100 build/gpu/bench_gdn 2>$R/bench_gdn.log | tee $R/bench_gdn.jsonl | show
el bench_gdn
B=build/gpu/bench_cuda_model
for k in train-hybrid train-hybrid stage2; do timeout 60 $B $k 2>/dev/null | grep '"model"' | tee -a $R/train.jsonl | show; done
el "train, stage2"
mkdir -p .peers/fla && tar -xJf .peers/fla.tar.xz -C .peers/fla
export GRAFT_FLA_PATH=$PWD/.peers/fla
(cd tests/gpu/peers && GRAFT_PEER_TRAIN=hybrid GRAFT_PEER_COMPILE=1 timeout 250 python3 peer_train.py) >$R/peer_train.jsonl 2>$R/peer_train.log
echo "peer_train rc $?"; grep -v '^{"note' $R/peer_train.jsonl | show; tail -2 $R/peer_train.log
el peer_train
left=$(( 575 - ($(date +%s) - t0) ))
(cd tests/gpu/peers && timeout $left python3 peer_gdn.py) >$R/peer_gdn.jsonl 2>$R/peer_gdn.log
echo "peer_gdn rc $?"; show <$R/peer_gdn.jsonl; grep -i "sanity\|relative" $R/peer_gdn.log | head -3; tail -2 $R/peer_gdn.log
el peer_gdn
