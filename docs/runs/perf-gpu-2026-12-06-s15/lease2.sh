# lease 2 of session 15: the hybrid training step (Qwen2.5-1.5B shape, 4 x 2048, 50 % GDN), the
# plain step and Stage 2 on the head (the GDN checkpoint's states in bf16) and on the base (the same
# tree with them in fp32: .carry/base.patch applied to a copy), alternating; then torch + FLA
# compiled training of the same hybrid in the same call (peer_train.py, FLA bc3b101d).
set -u
. .carry/env.sh
R=$OUT
t0=$(date +%s)
el() { echo "== $(( $(date +%s)-t0 )) s: $*"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader
L=$(mktemp -d)
make -j16 gpu-tests >$L/build.log 2>&1 || { grep -m 20 -E "error|warning" $L/build.log; exit 1; }
B=/tmp/base
if [ ! -x $B/build/gpu/bench_cuda_model ] || ! cmp -s .carry/base.patch $B/.carry/base.patch; then
    rm -rf $B; mkdir -p $B; tar --exclude=./.peers -cf - . | tar -xf - -C $B
    (cd $B && patch -s -p1 <.carry/base.patch)
fi
(cd $B && make -j16 build/gpu/bench_cuda_model >$L/build-base.log 2>&1) || { echo "base build failed"; tail -5 $L/build-base.log; }
el built
show() { python3 -c "
import json,sys
for l in sys.stdin:
    try: d=json.loads(l)
    except Exception: continue
    if 'ms' in d: print(f'{d[\"what\"][:88]:88s} {d[\"ms\"]:8.3f} ms roofline {d.get(\"of_roofline\",0):.3f} floor {d.get(\"of_floor\",0):.3f}')"; }
for k in train-hybrid train-hybrid stage2 stage2; do
    echo "-- head $k"; timeout 60 build/gpu/bench_cuda_model $k 2>>$L/train.log | grep '"model"' | tee -a $R/train_head.jsonl | show
    echo "-- base $k"; (cd $B && timeout 60 build/gpu/bench_cuda_model $k 2>>$L/train.log) | grep '"model"' | tee -a $R/train_base.jsonl | show
    el $k
done
timeout 60 build/gpu/bench_cuda_model train-plain 2>>$L/train.log | grep '"model"' | tee -a $R/train_head.jsonl | show
el train-plain
mkdir -p .peers/fla && tar -xJf .peers/fla.tar.xz -C .peers/fla
export GRAFT_FLA_PATH=$PWD/.peers/fla
left=$(( 575 - ($(date +%s) - t0) ))
(cd tests/gpu/peers && GRAFT_PEER_TRAIN=hybrid GRAFT_PEER_COMPILE=1 timeout $left python3 peer_train.py) >$R/peer_train.jsonl 2>$L/peer_train.log
echo "peer_train rc $?"; grep -v '^{"note' $R/peer_train.jsonl | show; tail -2 $L/peer_train.log
el peer_train
tar -C $L -czf $R/misc.tar.gz .
