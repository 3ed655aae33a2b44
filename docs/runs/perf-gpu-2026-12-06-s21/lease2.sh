# lease 2 of session 21 (on lease 1's warm machine): the training-side ratio against torch + FLA
# compiled under both attention backward kernels in one call: the hybrid step (Qwen2.5-1.5B shape,
# 4 x 2048, 50 % GDN) and the plain step under GRAFT_CUDA_ATTN_BWD=wgmma and wgmma2, before and
# after the peer (peer_train.py, as session 17's lease 2 runs it), the order reversed in the second
# round; then the teacher forward and transformers' sdpa forward if time is left. Carry .carry, .peers.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
make -j14 gpu-tests >$L/build.log 2>&1 || { grep -m 20 -E "error|warning" $L/build.log; exit 1; }
el built
step() { # step KIND BWD ROUND
    [ $(left 580) -gt 30 ] || return
    GRAFT_CUDA_ATTN_BWD=$2 timeout 60 build/gpu/bench_cuda_model train-$1 2>>$L/train.log | grep '"model"' |
        sed "s/^{/{\"attn_bwd\":\"$2\",\"round\":$3,/" | tee -a $R/train.jsonl | show | grep -E "^\[model\]" | sed "s/^/$2: /"
}
step hybrid wgmma 1; step hybrid wgmma2 1; step plain wgmma2 1; step plain wgmma 1
el round 1
mkdir -p .peers/fla && tar -xJf .peers/fla.tar.xz -C .peers/fla
export GRAFT_FLA_PATH=$PWD/.peers/fla
t=$(left 420); [ $t -gt 220 ] && t=220
(cd tests/gpu/peers && GRAFT_PEER_TRAIN=hybrid GRAFT_PEER_COMPILE=1 timeout $t python3 peer_train.py) >$R/peer_train.jsonl 2>$L/peer_train.log
echo "peer_train rc $?"; grep -v '^{"note' $R/peer_train.jsonl | show; tail -2 $L/peer_train.log
el peer_train
step hybrid wgmma2 2; step hybrid wgmma 2; step plain wgmma 2; step plain wgmma2 2
el round 2
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
