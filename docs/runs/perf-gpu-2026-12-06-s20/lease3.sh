# lease 3 of session 20: what bounds the hybrid step's two largest kernels above their floors, for
# the kernel work that 1.2x and the GDN layer's 2x need: Nsight Compute's full set of sections (speed
# of light, compute and memory workload, warp states, scheduler, occupancy, source counters) for
# one launch each of attn_bwd_wg_kernel, gdn_bwd_local_kernel and gdn_bwd_state_kernel inside
# bench_cuda_model's hybrid step (Qwen2.5-1.5B shape, 4 x 2048; past the warm-up steps' launches).
# With RUN_TESTS=1 first make test-gpu. Carry .carry.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
if [ "${RUN_TESTS:-0}" = 1 ]; then
    GRAFT_GPU_CALL_S=260 sh tests/gpu/device_run.sh test 2>&1 | tee $L/test-gpu.txt | grep -E "FAIL|SKIP|passed|STOPPED|done in"
    el test-gpu
else
    make -j14 build/gpu/bench_cuda_model >$L/build.log 2>&1 || { grep -m 20 -E "error|warning" $L/build.log; exit 1; }
    el built
fi
for k in attn_bwd_wg_kernel gdn_bwd_local_kernel gdn_bwd_state_kernel; do
    [ $(left 560) -gt 30 ] || break
    # 14 launches of each a step; skip the two warm-up steps' 28
    timeout $(left 570) ncu --clock-control none --set full --import-source yes --kernel-name regex:"$k" \
        --launch-skip 30 --launch-count 1 -o $L/$k build/gpu/bench_cuda_model train-hybrid >$L/ncu-$k.log 2>&1
    ncu --import $L/$k.ncu-rep --print-details all >$R/ncu-$k.txt 2>&1
    grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|Registers Per|Achieved Occupancy|Issue Slots Busy|No Eligible|Stall" $R/ncu-$k.txt | head -20
    el $k
done
tar -C $L -czf $R/ncu-reports.tar.gz $(cd $L && ls *.ncu-rep 2>/dev/null)
