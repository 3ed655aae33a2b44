# Session 30, call 5 (carry .carry): the last of the session's device time (~320 s, of which the
# start takes ~120) on the card if one comes: the two forwards the sdpa targets name
# (bench_cuda_model forward-targets: 4 x 2048 and 1 x 8192 with logits), untuned, then with
# GRAFT_CUDA_GEMM_TUNE=8 (its first process times and fills a fresh choice file), then sdpa, then
# the tuned (choices from the file) and untuned ones again while BUDGET (190) s last.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
B=${BUDGET:-190}
make -j16 build/gpu/bench_cuda_model >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
el build
export GRAFT_CUDA_GEMM_TUNE_FILE=/tmp/gemm-choices-s30.json
rm -f $GRAFT_CUDA_GEMM_TUNE_FILE
tuned_model forward-targets 0 1 40
tuned_model forward-targets 8 1 50
el round 1
sdpa_forward
el sdpa
for tune in 8 0; do
    [ $(left $B) -gt 25 ] || break
    tuned_model forward-targets $tune 2 $(left $B)
done
el done
cp $GRAFT_CUDA_GEMM_TUNE_FILE $R/ 2>/dev/null
tar -C $L -czf $R/misc.tar.gz .
