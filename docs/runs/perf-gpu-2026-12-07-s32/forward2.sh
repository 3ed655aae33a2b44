# Session 32, call 3 (carry .carry; ~150 s): call 2's forwards ran beside its background peer warm-up
# (FLA's autotuning and torch.compile on the same GPU), so they are not figures: the forwards of the
# sdpa targets again on a quiet GPU, default plan, rounds 1 and 2 around transformers' sdpa forward.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
make -j16 build/gpu/bench_cuda_model >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
el build
forward_rounds
