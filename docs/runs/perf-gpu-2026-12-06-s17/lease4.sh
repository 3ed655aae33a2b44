# lease 4 of session 17: where the 1 x 8192 teacher forward's kernel time goes on the head (the
# residual adds in the epilogues), and a Stage 2 step's on this H100 (3.5-3.7 s in lease 2 against
# 1.93 s on session 8's H200): tests/gpu/bench/profile_steps.sh, Nsight Compute, one metric.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
make -j14 build/gpu/bench_cuda_model >$L/build.log 2>&1 || { grep -m 20 -E "error|warning" $L/build.log; exit 1; }
el built
timeout 150 sh tests/gpu/bench/profile_steps.sh fwd8k embedding_kernel 0 3000 forward-long 2>&1 | tail -30 | tee $R/profile-fwd8k.txt
el fwd8k
[ $(left 200) -gt 60 ] && { EVERY=2 timeout $(left 200) sh tests/gpu/bench/profile_steps.sh stage2 mse_kernel 5000 1200 stage2 2>&1 | tail -32 | tee $R/profile-stage2.txt; el stage2; }
