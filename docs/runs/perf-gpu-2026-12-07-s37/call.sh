# Session 37's call (carry .carry with nogqa.patch and sep3.patch, and .peers). On an H200: session 32's
# next-h200.sh (every missed target on the card). Otherwise (~450 s):
# 1. the attention backward's launches under Nsight Compute, caches left alone (as in a step), for the
#    head (dK / dV atomics, one conversion launch: c3fb71a), sep3 (the three conversion launches of
#    f9e13a7) and nogqa (per-query-head dK / dV copies and group_sum, before f9e13a7);
# 2. the 50 % hybrid step, head / nogqa in turn, while B lasts.
# Make the patches on the head first (a worktree at HEAD):
#   git revert --no-commit c3fb71a && git diff HEAD -- engine/backend/cuda > .carry/sep3.patch; git reset --hard
#   git revert --no-commit c3fb71a 425a2f7 f9e13a7 && git diff HEAD -- engine/backend/cuda > .carry/nogqa.patch
case $(nvidia-smi --query-gpu=name --format=csv,noheader) in
*H200*) exec sh docs/runs/perf-gpu-2026-12-07-s32/next-h200.sh ;;
esac
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
B=${BUDGET:-450}
make -j16 build/gpu/bench_cuda_model >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
tree_build sep3 build/gpu/bench_cuda_model || exit 1
tree_build nogqa build/gpu/bench_cuda_model || exit 1
el build
for t in head sep3 nogqa; do
    d=.; [ $t = head ] || d=/tmp/$t
    timeout 100 ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv \
        -k "regex:attn_bwd|convert|group_sum|rowdot" --launch-skip 80 --launch-count 80 \
        $d/build/gpu/bench_cuda_model train-hybrid 2>/dev/null | grep '^"' >$R/ncu-attn-$t.csv
    ncu_sum $R/ncu-attn-$t.csv $t
    el ncu $t
done
trees_turn 6 $B train-hybrid head nogqa
el done
tar -C $L -czf $R/misc.tar.gz .
