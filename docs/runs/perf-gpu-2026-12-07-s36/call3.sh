# Session 36, call 3 (carry .carry with both.patch, and .peers). The 50 % hybrid training step with
# call 2's two changes (both.patch = chunk.patch + gqa.patch: the logits in one chunk, the attention
# backward's dK / dV atomics), untuned and with GRAFT_CUDA_GEMM_TUNE=8, beside torch + FLA compiled
# (peer_train.py), rounds while BUDGET lasts: session 35's call4.sh on the patched tree.
B=${BUDGET:-500}
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
peers_warm
tree_build both build/gpu/bench_cuda_model || exit 1
el build
top=$PWD
cd /tmp/both
export GRAFT_CUDA_GEMM_TUNE_FILE=/tmp/gemm-choices.json
GRAFT_CUDA_GEMM_TUNE=8 timeout 60 build/gpu/bench_cuda_model train-hybrid >/dev/null 2>$L/fill-busy.log
wait; el warm; tail -2 $L/train_warm.log
rm -f /tmp/gemm-choices.json
GRAFT_CUDA_GEMM_TUNE=8 timeout 60 build/gpu/bench_cuda_model train-hybrid >/dev/null 2>$L/fill.log
echo "filled: $(grep -c "the heuristic's first" $L/fill.log)"
for round in 1 2 3 4; do
    [ $(left $B) -gt 75 ] || break
    for tune in 0 8; do tuned_model train-hybrid $tune $round 40 | cut -c1-130; done
    (cd $top/tests/gpu/peers && GRAFT_PEER_TRAIN=hybrid GRAFT_PEER_COMPILE=1 timeout $(left $((B + 15))) python3 peer_train.py) \
        >>$R/peer_train.jsonl 2>>$L/peer_train.log
    echo "peer rc $?"; el round $round
done
cd $top
grep -v '^{"note' $R/peer_train.jsonl | show | cut -c1-150
tar -C $L -czf $R/misc.tar.gz .
