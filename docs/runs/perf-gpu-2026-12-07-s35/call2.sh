# Session 35, call 2 (carry .carry and .peers). On an H200, the card issue 36's targets are set on:
# session 32's next-h200.sh (the forwards of the sdpa targets around sdpa, the GDN layer beside FLA,
# the hybrid step beside torch + FLA compiled; ~560 s). On an H100 (whose figures for those are
# sessions 32-34's): Nsight Compute's sections of three memory-bound kernels of the 50 % hybrid
# training step, one launch each after a whole step (--launch-skip one step's count): where their
# time goes against their bytes (speed of light, occupancy, warp states, memory workload).
case $(nvidia-smi --query-gpu=name --format=csv,noheader) in
*H200*) exec sh docs/runs/perf-gpu-2026-12-07-s32/next-h200.sh ;;
esac
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
make -j16 build/gpu/bench_cuda_model >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
el build
for k in rmsnorm_dx_dw_kernel:57 ce_stats_kernel:5 swiglu_backward_kernel:28; do
    timeout 150 ncu --clock-control none -k regex:${k%:*} --launch-skip ${k#*:} --launch-count 1 \
        --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
        --section MemoryWorkloadAnalysis build/gpu/bench_cuda_model train-hybrid >$R/ncu-${k%:*}.txt 2>&1
    echo "== ${k%:*} rc $?"
    grep -E "Duration|Memory Throughput|DRAM Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Limit|Warp Cycles Per Issued|Stall" $R/ncu-${k%:*}.txt | head -14
    el ${k%:*}
done
tar -C $L -czf $R/misc.tar.gz .
