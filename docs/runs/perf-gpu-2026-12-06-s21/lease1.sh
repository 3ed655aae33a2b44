# lease 1 of session 21: make test-gpu on the head (the first GPU run of 69ddc90, the attention
# backward on two warpgroups, and 9543d4e, GRAFT_CUDA_GDN_SLAB), then session 20's
# next-attention-bwd.sh with the rest of the call. Carry .carry.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
GRAFT_GPU_CALL_S=260 sh tests/gpu/device_run.sh test 2>&1 | tee $L/test-gpu.txt | grep -E "FAIL|SKIP|passed|STOPPED|done in"
el test-gpu
# the SM clock, power and throttle reasons every 100 ms while the steps run: Nsight Compute's
# per-kernel sums (kernels replayed one by one, clocks left alone) come to 174 ms of a 187 ms hybrid
# step; whether the 13 ms are gaps between launches or a lower clock under the step's sustained power
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active \
    --format=csv,noheader -lms 100 >$R/clocks-lease1.csv 2>&1 &
smi=$!
BUDGET=$(left 580) sh docs/runs/perf-gpu-2026-12-06-s20/next-attention-bwd.sh
kill $smi
el all
