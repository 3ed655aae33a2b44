# Superseded in session 37 by runs/perf-gpu-2026-12-07-s37/next.sh: after c3fb71a the patch recipe below
# no longer applies (call1.sh there says how to make nogqa.patch and sep3.patch on the head).
# For the next session (written in session 36, not run). Carry .carry (with nogqa.patch) and .peers.
# Make the patch here first: git diff f9e13a7 e8e6477 -- engine/backend/cuda > .carry/nogqa.patch
# (the attention backward's per-query-head dK / dV copies and group_sum_kernel, on today's head).
# On an H200: session 32's next-h200.sh (every missed target on the issue's card; ~560 s).
# Otherwise (~450 s): does f9e13a7's dK / dV atomics help the hybrid step? Session 36 measured
# -21 us a layer in Nsight Compute's replays (caches flushed) and could not resolve it in the step.
# 1. the attention backward's launches under Nsight Compute with the caches left alone
#    (--cache-control none: group_sum then reads what the kernel left in L2, as in a step), each tree;
# 2. the 50 % hybrid step, head / nogqa in turn, six rounds while B lasts.
case $(nvidia-smi --query-gpu=name --format=csv,noheader) in
*H200*) exec sh docs/runs/perf-gpu-2026-12-07-s32/next-h200.sh ;;
esac
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
B=${BUDGET:-450}
make -j16 build/gpu/bench_cuda_model >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
tree_build nogqa build/gpu/bench_cuda_model || exit 1
el build
for t in head nogqa; do
    d=.; [ $t = head ] || d=/tmp/$t
    timeout 100 ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv \
        -k "regex:attn_bwd|scale_convert|group_sum" --launch-skip 60 --launch-count 60 \
        $d/build/gpu/bench_cuda_model train-hybrid 2>/dev/null | grep '^"' >$R/ncu-attn-$t.csv
    ncu_sum $R/ncu-attn-$t.csv $t
    el ncu $t
done
trees_turn 6 $B train-hybrid head nogqa
el done
tar -C $L -czf $R/misc.tar.gz .
