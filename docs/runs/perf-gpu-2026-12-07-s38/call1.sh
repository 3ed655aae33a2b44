# Session 38's first call (carry .carry with sep3.patch and nogqa.patch, and .peers; ~585 s):
# make test-gpu on the head first (46ff468, the review mend of the one-launch conversion, has not run on
# a GPU), with the two earlier trees building beside it; then, on an H200 only, the forwards of the
# sdpa targets around sdpa (last measured there in session 27), and once with GRAFT_CUDA_GEMM_TUNE=8; then the attention backward's launches
# under Nsight Compute per tree, caches left alone as in a step: head (one conversion launch), sep3
# (the three launches before c3fb71a), nogqa (the per-query-head dK / dV copies and group_sum before
# f9e13a7); then the 50 % hybrid step under head / sep3 / nogqa in turn while the call lasts.
# The patches, made on the head (a worktree at HEAD):
#   git revert --no-commit 46ff468 c3fb71a && git diff HEAD -- engine/backend/cuda > .carry/sep3.patch; git reset --hard
#   git revert --no-commit 46ff468 c3fb71a 425a2f7 f9e13a7 && git diff HEAD -- engine/backend/cuda > .carry/nogqa.patch
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
make -j16 build/gpu/bench_cuda_model >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
(tree_build sep3 build/gpu/bench_cuda_model && tree_build nogqa build/gpu/bench_cuda_model) >$L/trees.log 2>&1 &
[ "${TESTS:-1}" = 0 ] || test_gpu_in head .
wait
cat $L/trees.log
[ -x /tmp/sep3/build/gpu/bench_cuda_model ] && [ -x /tmp/nogqa/build/gpu/bench_cuda_model ] || exit 1
el build
case $(nvidia-smi --query-gpu=name --format=csv,noheader) in *H200*) forward_rounds; tuned_model forward-targets 8 1 60 ;; esac
attn_bwd_parts head sep3 nogqa
trees_turn 6 585 train-hybrid head sep3 nogqa
el done
tar -C $L -czf $R/misc.tar.gz .
