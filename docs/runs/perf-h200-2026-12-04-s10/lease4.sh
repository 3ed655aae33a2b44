# lease 4 of session 10: the one check of make test-gpu that lease 3's call had no time left for
# (cli_train; the other 14 passed there), then graft's hybrid step and torch + FLA compiled training
# again in the same call, the peer with dynamo's recompile limit raised past the layer count (lease
# 3's peer hit the limit of 8).
set -u
. .carry/env.sh
R=$OUT
t0=$(date +%s)
el() { echo "== $(( $(date +%s)-t0 )) s: $*"; }
make -j16 gpu-tests >$R/build.log 2>&1 || { grep -m 10 -E "error|warning" $R/build.log; exit 1; }
el built
timeout 120 sh tests/gpu/cli/train.sh >$R/cli_train.log 2>&1; echo "cli_train rc $?"; grep -cE "^PASS" $R/cli_train.log; grep -E "^FAIL" $R/cli_train.log
el cli_train
show() { python3 -c "
import json,sys
for l in sys.stdin:
    try: d=json.loads(l)
    except Exception: continue
    if 'ms' in d: print(f'{d[\"what\"][:88]:88s} {d[\"ms\"]:8.3f} ms roofline {d.get(\"of_roofline\",0):.3f} floor {d.get(\"of_floor\",0):.3f}')"; }
timeout 60 build/gpu/bench_cuda_model train-hybrid 2>/dev/null | grep '"model"' | tee -a $R/train.jsonl | show
el "train"
mkdir -p .peers/fla && tar -xJf .peers/fla.tar.xz -C .peers/fla
export GRAFT_FLA_PATH=$PWD/.peers/fla
left=$(( 575 - ($(date +%s) - t0) ))
(cd tests/gpu/peers && GRAFT_PEER_TRAIN=hybrid GRAFT_PEER_COMPILE=1 timeout $left python3 peer_train.py) >$R/peer_train.jsonl 2>$R/peer_train.log
echo "peer_train rc $?"; grep -v '^{"note' $R/peer_train.jsonl | show; grep -c recompile_limit $R/peer_train.log; tail -2 $R/peer_train.log
el peer_train
