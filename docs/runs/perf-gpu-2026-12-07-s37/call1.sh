# Session 37's first call (carry .carry with sep3.patch and nogqa.patch, and .peers; ~585 s):
# make test-gpu on the head first (no GPU run has checked the code since session 36's call 1), then
# on an H200 the card's missed targets: the GDN layer beside FLA's chunk kernel and the 50 %
# hybrid step beside torch + FLA compiled (the peers warm in the background during the tests); on
# an H100 the attention backward's launches under Nsight Compute, caches left alone (as in a step):
# head (c3fb71a: dK / dV atomics, one conversion launch), sep3 (f9e13a7's three conversion launches),
# nogqa (the per-query-head dK / dV copies and group_sum before f9e13a7); then the hybrid step, head
# and nogqa in turn. TESTS=0 leaves the tests out (a second call).
# Make the patches on the head first (a worktree at HEAD):
#   git revert --no-commit c3fb71a && git diff HEAD -- engine/backend/cuda > .carry/sep3.patch; git reset --hard
#   git revert --no-commit c3fb71a 425a2f7 f9e13a7 && git diff HEAD -- engine/backend/cuda > .carry/nogqa.patch
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
case $(nvidia-smi --query-gpu=name --format=csv,noheader) in *H200*) h200=1 ;; *) h200=0 ;; esac
make -j16 build/gpu/bench_cuda_model build/gpu/bench_gdn >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
# on an H200 the peers warm while the tests run; on an H100 the two trees build meanwhile
if [ $h200 = 1 ]; then peers_warm; else (tree_build sep3 build/gpu/bench_cuda_model && tree_build nogqa build/gpu/bench_cuda_model) >$L/trees.log 2>&1 & fi
[ "${TESTS:-1}" = 0 ] || test_gpu_in head .
if [ $h200 = 1 ]; then
    wait
    el warm
    gdn_beside_fla
    hybrid_pairs 4 585
else
    wait
    cat $L/trees.log
    [ -x /tmp/sep3/build/gpu/bench_cuda_model ] && [ -x /tmp/nogqa/build/gpu/bench_cuda_model ] || exit 1
    el build
    attn_bwd_parts head sep3 nogqa
    trees_turn 6 585 train-hybrid head nogqa
fi
el done
tar -C $L -czf $R/misc.tar.gz .
