# Session 29, the short call (carry .carry; .peers not needed): written when the session's device time
# had gone to asks that found no machine, so that one call of BUDGET (420) s does the most: no FLA and
# no compiled training peer (their first runs take minutes), only peers that start in seconds.
# 1. test_cuda_ops (the GEMM choice file's first GPU run: a second tuned run must take every choice
#    from the first run's file and time none; a foreign file refused at open; five refused values of
#    GRAFT_CUDA_GEMM_TUNE) and test_cuda_convert (gpu_open_refused), the GPU programs that session
#    28's last commits changed;
# 2. the forward untuned and with GRAFT_CUDA_GEMM_TUNE=8 (its choice file filled by one run first),
#    then transformers' sdpa forward (peer_forward.py), one pair;
# 3. the 50 % hybrid training step untuned and tuned, alternating, while the budget lasts.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
B=${BUDGET:-420}
make -j16 build/gpu/test_cuda_ops build/gpu/test_cuda_convert build/gpu/bench_cuda_model >$L/build.log 2>&1 ||
    { tail -20 $L/build.log; exit 1; }
el build
for t in test_cuda_ops test_cuda_convert; do
    build/gpu/$t >$R/$t.txt 2>&1; echo "$t rc $?: $(tail -n 1 $R/$t.txt)"
done
grep -E "tuned|tune |FAIL" $R/test_cuda_ops.txt | head -20
el tests
export GRAFT_CUDA_GEMM_TUNE_FILE=/tmp/gemm-choices.json
GRAFT_CUDA_GEMM_TUNE=8 timeout 60 build/gpu/bench_cuda_model forward >/dev/null 2>$L/tune-fill-forward.log
GRAFT_CUDA_GEMM_TUNE=8 timeout 60 build/gpu/bench_cuda_model train-hybrid >/dev/null 2>$L/tune-fill-train.log
echo "choice file filled: $(cat $L/tune-fill-*.log | grep -c "the heuristic's first") shapes timed"
el fill
for tune in 0 8; do tuned_model forward $tune 1 90; done
sdpa_forward
el forward
for round in 1 2 3 4 5 6; do
    for tune in 0 8; do
        [ $(left $B) -gt 40 ] || break 2
        tuned_model train-hybrid $tune $round 40
    done
done
echo "kept from the file in the timed runs: $(cat $L/train-8.log $L/forward-8.log | grep -c 'from the choice file'), timed: $(cat $L/train-8.log $L/forward-8.log | grep -c "the heuristic's first")"
cp /tmp/gemm-choices.json $R/ 2>/dev/null
tar -C $L -czf $R/misc.tar.gz .
el done
