# lease 2 of session 15: the hybrid training step (Qwen2.5-1.5B shape, 4 x 2048, 50 % GDN), the
# plain step and Stage 2 on the head (the GDN checkpoint's states in bf16) and on the base
# (common.sh), alternating; then torch + FLA compiled training of the same hybrid in the same call
# (peer_train.py, FLA bc3b101d; carry .peers too).
. docs/runs/perf-gpu-2026-12-06-s15/common.sh
make -j16 gpu-tests >$L/build.log 2>&1 || { grep -m 20 -E "error|warning" $L/build.log; exit 1; }
base_build build/gpu/bench_cuda_model
el built
for k in train-hybrid train-hybrid stage2 stage2; do
    echo "-- head $k"; timeout 60 build/gpu/bench_cuda_model $k 2>>$L/train.log | grep '"model"' | tee -a $R/train_head.jsonl | show
    echo "-- base $k"; (cd $B && timeout 60 build/gpu/bench_cuda_model $k 2>>$L/train.log) | grep '"model"' | tee -a $R/train_base.jsonl | show
    el $k
done
timeout 60 build/gpu/bench_cuda_model train-plain 2>>$L/train.log | grep '"model"' | tee -a $R/train_head.jsonl | show
el train-plain
mkdir -p .peers/fla && tar -xJf .peers/fla.tar.xz -C .peers/fla
export GRAFT_FLA_PATH=$PWD/.peers/fla
(cd tests/gpu/peers && GRAFT_PEER_TRAIN=hybrid GRAFT_PEER_COMPILE=1 timeout $(left 575) python3 peer_train.py) >$R/peer_train.jsonl 2>$L/peer_train.log
echo "peer_train rc $?"; grep -v '^{"note' $R/peer_train.jsonl | show; tail -2 $L/peer_train.log
el peer_train
tar -C $L -czf $R/misc.tar.gz .
