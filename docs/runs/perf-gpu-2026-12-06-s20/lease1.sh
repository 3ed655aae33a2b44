# lease 1 of session 20: make test-gpu on the head (the first GPU run of the CUDA commits since
# a051298: the fused RMSNorm backward's grid and constant, 4a31a17 and 51816d8), then Nsight
# Compute's per-kernel sums of one plain and one hybrid training step on the head, to set beside
# session 18's lease 2 (a72515d's engine: rmsnorm_dx_kernel + col_parts_kernel + rstd_kernel +
# add_kernel) on the same kind of board, and the steps' wall time. Carry .carry.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
GRAFT_GPU_CALL_S=260 sh tests/gpu/device_run.sh test 2>&1 | tee $L/test-gpu.txt | grep -E "FAIL|SKIP|passed|STOPPED|done in"
el test-gpu
timeout $(left 470) sh tests/gpu/bench/profile_train.sh build $L/head 2>&1 | tee $R/profile-train-lease1.txt |
    grep -E "step:|whole step|rmsnorm|col_parts|rstd|add_kernel|GEMM|adamw|sumsq"
el profiled
for kind in hybrid plain hybrid plain; do
    [ $(left 560) -gt 20 ] || break
    timeout $(left 570) build/gpu/bench_cuda_model train-$kind 2>>$L/train.log | grep '"model"' | tee -a $R/train-lease1.jsonl | show | grep -E "^\[model\]"
done
el train
tar -C $L -czf $R/misc.tar.gz .
