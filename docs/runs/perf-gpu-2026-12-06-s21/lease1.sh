# lease 1 of session 21: make test-gpu on the head (the first GPU run of 69ddc90, the attention
# backward on two warpgroups, and 9543d4e, GRAFT_CUDA_GDN_SLAB), then session 20's
# next-attention-bwd.sh with the rest of the call. Carry .carry.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
GRAFT_GPU_CALL_S=260 sh tests/gpu/device_run.sh test 2>&1 | tee $L/test-gpu.txt | grep -E "FAIL|SKIP|passed|STOPPED|done in"
el test-gpu
BUDGET=$(left 580) sh docs/runs/perf-gpu-2026-12-06-s20/next-attention-bwd.sh
el all
