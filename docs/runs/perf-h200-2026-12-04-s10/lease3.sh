# lease 3 of session 10: make test-gpu on the head (the attention forward's Hopper shapes the
# default on this GPU: cfg 23), the hybrid training step twice (its attention forward now cfg 23),
# then torch + FLA compiled training in the same call (peer_train.py, FLA bc3b101d).
set -u
. .carry/env.sh
R=$OUT
t0=$(date +%s)
el() { echo "== $(( $(date +%s)-t0 )) s: $*"; }
GRAFT_GPU_CALL_S=200 sh tests/gpu/device_run.sh test 2>&1 | tail -4
el test-gpu
show() { python3 -c "
import json,sys
for l in sys.stdin:
    try: d=json.loads(l)
    except Exception: continue
    if 'ms' in d: print(f'{d[\"what\"][:88]:88s} {d[\"ms\"]:8.3f} ms roofline {d.get(\"of_roofline\",0):.3f} floor {d.get(\"of_floor\",0):.3f}')"; }
B=build/gpu/bench_cuda_model
for k in train-hybrid train-hybrid train-plain; do timeout 60 $B $k 2>/dev/null | grep '"model"' | tee -a $R/train.jsonl | show; done
el "train"
mkdir -p .peers/fla && tar -xJf .peers/fla.tar.xz -C .peers/fla
export GRAFT_FLA_PATH=$PWD/.peers/fla
left=$(( 570 - ($(date +%s) - t0) ))
(cd tests/gpu/peers && GRAFT_PEER_TRAIN=hybrid GRAFT_PEER_COMPILE=1 timeout $left python3 peer_train.py) >$R/peer_train.jsonl 2>$R/peer_train.log
echo "peer_train rc $?"; grep -v '^{"note' $R/peer_train.jsonl | show; tail -2 $R/peer_train.log
el peer_train
