# Not run yet (written at the end of session 18, its device time spent): whether the training
# step's trimmed passes (cb49869, 54f706b: the norms' 1/rms kept, dw in the norm backward's dx
# kernel, the residuals in the products' epilogues) shortened its kernels, which lease 5's whole-step
# times could not resolve. Nsight Compute's per-kernel sums of one plain and one hybrid step
# (profile_train.sh) on the head and on prev (.carry/prev.patch: git diff HEAD a051298 -- engine),
# the rows to compare: rmsnorm_dx_dw_kernel against rmsnorm_dx_kernel + col_parts_kernel (the norms'
# share) + rstd_kernel; add_kernel; cuBLAS (C != D). Carry .carry; ~450 s on a fresh machine.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
(tree_build prev build/gpu/bench_cuda_model) >$L/trees.log 2>&1 &
trees=$!
make -j12 build/gpu/bench_cuda_model >$L/build.log 2>&1 || { grep -m 20 -E "error|warning" $L/build.log; exit 1; }
el built
timeout 220 sh tests/gpu/bench/profile_train.sh build $L/head 2>&1 | tee $R/profile-train-head.txt | grep -E "step:|rmsnorm|col_parts|rstd|add_kernel|GEMM"
el head profiled
wait $trees; cat $L/trees.log
(cd /tmp/prev && timeout $(left 560) sh tests/gpu/bench/profile_train.sh build $L/prev) 2>&1 | tee $R/profile-train-prev.txt |
    grep -E "step:|rmsnorm|col_parts|rstd|add_kernel|GEMM"
el prev profiled
tar -C $L -czf $R/misc.tar.gz .
