# For the next session (not run: written after session 26's device time was spent). One call, carry
# .carry after `cp docs/runs/perf-gpu-2026-12-06-s26/dkreg.patch .carry/`: the local backward's dK in
# registers (dkreg.patch: in the kFix kernel each warp's one 16 x 32 dK tile stays in its registers
# through phases a, b, c and f, where it went through a 33.8 KB fp32 shared tile, a load and a store
# an element a phase, and out by store_rows_f32; the same adds in the same order: the emulated
# test_cuda_gdn printed every figure as at 919e311 with GRAFT_SEED=42, passed in three fiber orders
# and with 32-row slabs; dk's last two 8-column tiles stored from the first two failed 6 of 603;
# ptxas: 82 registers, no spill, as the head). Builds it beside the head, test_cuda_gdn on it,
# bench_gdn alternating, two rounds, one launch of the local backward under each, and make test-gpu
# on the tree pick_tree keeps.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
tree_beside dkreg || exit 1
bench_trees 2 400 $R/bench_gdn-dkreg.jsonl head=. dkreg=/tmp/dkreg
for t in head=. dkreg=/tmp/dkreg; do ncu_launch gdn_bwd_local_kernel ${t%%=*} ${t#*=} $R/ncu-dkreg.txt; done
el ncu
keep=$(pick_tree $R/bench_gdn-dkreg.jsonl $R/test_cuda_gdn-dkreg.txt head dkreg "core bwd")
echo "== kept: $keep"
if [ "$keep" = dkreg ]; then test_gpu_in dkreg /tmp/dkreg; else test_gpu_in head .; fi
