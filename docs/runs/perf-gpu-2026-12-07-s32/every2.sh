# For the next session (written in session 32, not run: no device time was left): cfg 32, cfg 23 with
# the block's barrier once every two tiles (overlap 4: five stages, two tiles computed, two in flight,
# one V kept), against cfg 23, on any Hopper card (carry .carry; ~200 s). Session 32's profile of cfg 23
# put 7.8 % of its warps' samples at the barrier every tile, where the three warpgroups, whose products
# take turns on the tensor cores, meet. test_cuda_ops (every shape against the CPU backend, cfg 32's
# first GPU run), bench_attention twice, then the forwards of the sdpa targets under cfg 23 and cfg 32
# in turn around sdpa (common.sh's attn_cfg_ab).
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
attn_cfg_ab 32 every2
