# Session 35, call 4 (carry .carry and .peers; BUDGET, the seconds the call may take, from what the
# session has left). On an H200: session 32's next-h200.sh under BUDGET. Otherwise: the 50 % hybrid
# training step on the head (3b23934's loss_exp and 8549205's RMSNorm kernels in it), untuned and
# with GRAFT_CUDA_GEMM_TUNE=8, beside torch + FLA compiled (peer_train.py), rounds while BUDGET
# lasts: session 34's call3.sh with a budget.
B=${BUDGET:-470}
case $(nvidia-smi --query-gpu=name --format=csv,noheader) in
*H200*) BUDGET=$B exec sh docs/runs/perf-gpu-2026-12-07-s32/next-h200.sh ;;
esac
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
make -j16 build/gpu/bench_cuda_model >$L/b.log 2>&1 || { tail $L/b.log; exit 1; }
peers_warm
export GRAFT_CUDA_GEMM_TUNE_FILE=/tmp/gemm-choices.json
GRAFT_CUDA_GEMM_TUNE=8 timeout 60 build/gpu/bench_cuda_model train-hybrid >/dev/null 2>$L/fill-busy.log
wait; el warm; tail -2 $L/train_warm.log
rm -f /tmp/gemm-choices.json
GRAFT_CUDA_GEMM_TUNE=8 timeout 60 build/gpu/bench_cuda_model train-hybrid >/dev/null 2>$L/fill.log
echo "filled: $(grep -c "the heuristic's first" $L/fill.log)"
for round in 1 2 3 4; do
    [ $(left $B) -gt 75 ] || break
    for tune in 0 8; do tuned_model train-hybrid $tune $round 40 | cut -c1-130; done
    (cd tests/gpu/peers && GRAFT_PEER_TRAIN=hybrid GRAFT_PEER_COMPILE=1 timeout $(left $((B + 15))) python3 peer_train.py) \
        >>$R/peer_train.jsonl 2>>$L/peer_train.log
    echo "peer rc $?"; el round $round
done
grep -v '^{"note' $R/peer_train.jsonl | show | cut -c1-150
tar -C $L -czf $R/misc.tar.gz .
