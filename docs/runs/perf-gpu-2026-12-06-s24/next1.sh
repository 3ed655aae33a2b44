# For the next session's first call (not run: written after session 24's device time was spent).
# Carry .carry, with `cp docs/runs/perf-gpu-2026-12-06-s24/nt4f.patch .carry/` made here first: the
# 8-warp GDN kernels (the forward's WY and output kernels, the backward's V' kernel) on 16 x 32 tiles
# in their C 64 / d 128 forms, as the local backward has been since d8ef733 (-4.6 % on the core
# backward). In a tree beside the head with the patch: test_cuda_gdn on the GPU first, then bench_gdn
# under the head (nt4) and nt4f alternating, two rounds, then Nsight Compute's duration of one launch
# of each changed kernel at 16 x 2048 under both, then make test-gpu in the tree to be submitted:
# nt4f when its test passed and the core forward and backward are not slower at either shape (the
# mean of the rounds), else the head. Apply the patch in the tree only on that condition.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
tree_beside nt4f || exit 1
bench_trees 2 260 $R/bench_gdn-nt4f.jsonl nt4=. nt4f=/tmp/nt4f
el bench_gdn
for k in gdn_wy_kernel gdn_out_kernel gdn_bwd_v_kernel; do
    for t in nt4=. nt4f=/tmp/nt4f; do
        [ $(left 400) -gt 40 ] && ncu_launch $k ${t%%=*} ${t#*=} $R/ncu-nt4f.txt
    done
done
el ncu
winner=$(pick_tree $R/bench_gdn-nt4f.jsonl $R/test_cuda_gdn-nt4f.txt nt4 nt4f "core fwd" "core bwd")
echo "== submitted tree: $winner"; echo $winner >/tmp/graft-winner
dir=.; [ "$winner" = nt4f ] && dir=/tmp/nt4f
test_gpu_in $winner $dir
