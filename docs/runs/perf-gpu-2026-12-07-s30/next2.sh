# For the next session (written in session 30, not run): call B of two, on the H200, the card
# (carry .carry only; ~585 s). What the standing table says was never measured there:
# 1. Nsight Compute's per-kernel sums of the forward with statistics and logits at 4 x 2048 and at
#    1 x 8192 (profile_steps.sh; the marker is the embedding kernel, one a forward), and of one 50 %
#    hybrid training step: where the H200's time goes for the two missed forward targets and the
#    missed hybrid ratio (the only per-kernel accounts so far are H100s': sessions 17 and 20);
# 2. the forwards untuned and with GRAFT_CUDA_GEMM_TUNE=8 (a fresh choice file, filled by its first
#    process) beside sdpa: the timing's effect on the H200, never measured;
# 3. the hybrid step untuned and tuned, alternating, while BUDGET (585) s last.
# At most seven files come back (a call brings back eight at most: session 30's first call lost two).
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
B=${BUDGET:-585}
make -j16 build/gpu/bench_cuda_model >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
el build
{
    timeout 110 sh tests/gpu/bench/profile_steps.sh fwd4k embedding_kernel 0 2000 forward-targets 2>&1 | tail -20
    timeout 110 sh tests/gpu/bench/profile_steps.sh fwd8k embedding_kernel 0 2000 forward-long 2>&1 | tail -20
} | tee $R/profile-forward.txt | grep -E "whole step|GEMM|attn|swiglu"
el profiled forward
timeout 150 sh tests/gpu/bench/profile_steps.sh hybrid embedding_kernel 400 4500 train-hybrid 2>&1 |
    tail -30 | tee $R/profile-hybrid.txt | grep -E "whole step|GEMM|adamw|attn|gdn_bwd_local"
el profiled hybrid
export GRAFT_CUDA_GEMM_TUNE_FILE=/tmp/gemm-choices-next.json
rm -f $GRAFT_CUDA_GEMM_TUNE_FILE
if [ $(left $B) -gt 150 ]; then
    for tune in 0 8; do tuned_model forward-targets $tune 1 60; done
    sdpa_forward
fi
for tune in 8 0; do [ $(left $B) -gt 60 ] && tuned_model forward-targets $tune 2 60; done
el forward
for round in 1 2 3 4 5; do
    for tune in 8 0; do
        [ $(left $B) -gt 40 ] || break 2
        tuned_model train-hybrid $tune $round 40
    done
done
el hybrid
cp $GRAFT_CUDA_GEMM_TUNE_FILE $R/gemm-choices.json 2>/dev/null
tar -C $L -czf $R/misc.tar.gz .
