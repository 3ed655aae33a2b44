# For the next session (written in session 37, not run). Carry .carry (with sep3.patch and nogqa.patch,
# made as call1.sh's header says) and .peers; ~560 s.
# 1. On an H200 only: the forwards of the sdpa targets around sdpa (forward_rounds). The forward
#    targets were last measured on the H200 in session 27, before session 32's 10 % attention forward.
# 2. The attention backward's launches under Nsight Compute, caches left alone as in a step: head
#    (c3fb71a: one conversion launch), sep3 (the three launches before it), nogqa (per-query-head dK /
#    dV copies and group_sum, before f9e13a7). Neither change has been timed in a step yet.
# 3. The 50 % hybrid step, head / sep3 / nogqa in turn, while B lasts.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
B=${BUDGET:-560}
make -j16 build/gpu/bench_cuda_model >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
tree_build sep3 build/gpu/bench_cuda_model || exit 1
tree_build nogqa build/gpu/bench_cuda_model || exit 1
el build
# the forwards on a quiet host: nothing builds beside them
case $(nvidia-smi --query-gpu=name --format=csv,noheader) in *H200*) forward_rounds ;; esac
attn_bwd_parts head sep3 nogqa
trees_turn 6 $B train-hybrid head sep3 nogqa
el done
tar -C $L -czf $R/misc.tar.gz .
