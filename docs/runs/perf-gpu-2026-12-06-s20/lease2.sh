# lease 2 of session 20: every training-side ratio again on the head, as session 17's lease 2 took
# it: the hybrid step (Qwen2.5-1.5B shape, 4 x 2048, 50 % GDN) twice, Stage 2 twice (its whole
# bench now with session 18's host set-up of a layer: the normals drawn on several threads, the
# gates' download only; never timed on a GPU), the plain step, then torch + FLA compiled training
# of the same hybrid (peer_train.py); then the teacher forward with statistics and transformers'
# sdpa forward (peer_forward.py) in the same call. Carry .carry, .peers.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
make -j14 gpu-tests >$L/build.log 2>&1 || { grep -m 20 -E "error|warning" $L/build.log; exit 1; }
el built
for k in train-hybrid train-hybrid stage2 stage2 train-plain; do
    timeout 60 build/gpu/bench_cuda_model $k 2>>$L/train.log | grep '"model"' | tee -a $R/train.jsonl | show
    el $k
done
mkdir -p .peers/fla && tar -xJf .peers/fla.tar.xz -C .peers/fla
export GRAFT_FLA_PATH=$PWD/.peers/fla
t=$(left 400); [ $t -gt 220 ] && t=220
(cd tests/gpu/peers && GRAFT_PEER_TRAIN=hybrid GRAFT_PEER_COMPILE=1 timeout $t python3 peer_train.py) >$R/peer_train.jsonl 2>$L/peer_train.log
echo "peer_train rc $?"; grep -v '^{"note' $R/peer_train.jsonl | show; tail -2 $L/peer_train.log
el peer_train
t=$(left 480)
if [ $t -gt 40 ]; then
    timeout $t build/gpu/bench_cuda_model forward 2>>$L/forward.log | grep '"model"' | tee $R/forward.jsonl | show
    el forward
fi
t=$(left 575)
if [ $t -gt 40 ]; then
    (cd tests/gpu/peers && GRAFT_PEER_EAGER=0 GRAFT_PEER_CASES=qwen2.5-1.5b:4:2048,qwen2.5-1.5b:1:8192 timeout $t python3 peer_forward.py) >$R/peer_forward.jsonl 2>$L/peer_forward.log
    echo "peer_forward rc $?"; show <$R/peer_forward.jsonl
    el peer_forward
fi
tar -C $L -czf $R/misc.tar.gz .
