# For the next session (written in session 27 after its device time was spent; not run). One call,
# carry .carry after `cp docs/runs/perf-gpu-2026-12-06-s27/sigfast.patch .carry/`: the GDN layer's
# element-wise kernels with a sigmoid of two MUFU operations (sigfast.patch: ex2.approx and
# rcp.approx where expf and an IEEE division took ~20 instructions and a branch; one an element of
# q, k, v in the prep kernels and of the output gate in the gated norm's, forward and backward;
# sm_90 SASS of the bf16 kernels without the conv: prep 592 -> 360 instructions, prep backward
# 1160 -> 912, gated norm 552 -> 336, its backward 888 -> 680; registers the same or fewer, except
# the conv's prep backward, 8 -> 20 bytes of spill at its 128). In the emulation (which keeps exp2f
# and divides) test_cuda_gdn passes, 603, with errors of the same size as before; the exponent's
# factor 0.1 % off fails 111 of 603. Builds it beside the head, test_cuda_gdn on it on the GPU (the
# approximations' own errors are checked there only: fp32 tolerance 1e-4, their ~1e-7), bench_gdn
# alternating, two rounds (the prep and gated-norm lines are the kernels'), then make test-gpu on
# the tree pick_tree keeps by the layer's forward + backward.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
tree_beside sigfast || exit 1
bench_trees 2 400 $R/bench_gdn-sigfast.jsonl head=. sigfast=/tmp/sigfast
grep -h '"what"' $R/bench_gdn-sigfast.jsonl | show | grep -E "prep|gated norm" | sort | uniq
keep=$(pick_tree $R/bench_gdn-sigfast.jsonl $R/test_cuda_gdn-sigfast.txt head sigfast "layer fwd+bwd")
echo "== kept: $keep"
if [ "$keep" = sigfast ]; then test_gpu_in sigfast /tmp/sigfast; else test_gpu_in head .; fi
