# For the next session (written in session 28; not run). One call, carry .carry: what the standing
# table says was never measured on the H200 (docs/benchmarks.md, "Where the second performance round
# stands": the hybrid step "not profiled per kernel on the H200"). Nsight Compute's per-kernel sums
# of one plain and one 50 % hybrid training step (profile_train.sh), untuned, then the same two steps'
# wall time untuned and with GRAFT_CUDA_GEMM_TUNE=8 (its choice file filled by the first tuned run),
# alternating, while the call's 585 s last. Run it on the card the figures are wanted for; the
# table's lines name it.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
make -j16 build/gpu/bench_cuda_model >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
el build
timeout $(left 420) sh tests/gpu/bench/profile_train.sh build $L/prof 2>&1 | tee $R/profile-train.txt |
    grep -E "step:|whole step|GEMM|gdn|attention|adamw|sumsq|swiglu"
el profiled
export GRAFT_CUDA_GEMM_TUNE_FILE=/tmp/gemm-choices.json
for kind in hybrid plain hybrid plain; do
    for tune in 0 8; do
        [ $(left 585) -gt 45 ] || break 2
        v=$([ $tune = 0 ] || echo $tune)
        GRAFT_CUDA_GEMM_TUNE=$v timeout 40 build/gpu/bench_cuda_model train-$kind 2>>$L/train-$tune.log |
            grep '"model"' | sed "s/^{/{\"tune\":$tune,/" | tee -a $R/train.jsonl | show | grep "^\[model" |
            sed "s/^/tune $tune: /"
    done
done
el train
cp /tmp/gemm-choices.json $R/ 2>/dev/null
tar -C $L -czf $R/misc.tar.gz .
