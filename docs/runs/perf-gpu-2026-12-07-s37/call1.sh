# Session 37's first call (carry .carry with sep3.patch and nogqa.patch, and .peers; ~585 s):
# make test-gpu on the head first (no GPU run has checked the code since session 36's call 1), then
# on an H200 the card's missed targets: the GDN layer beside FLA's chunk kernel and the 50 %
# hybrid step beside torch + FLA compiled (the peers warm in the background during the tests); on
# an H100 the attention backward's launches under Nsight Compute, caches left alone (as in a step):
# head (c3fb71a: dK / dV atomics, one conversion launch), sep3 (f9e13a7's three conversion launches),
# nogqa (the per-query-head dK / dV copies and group_sum before f9e13a7); then the hybrid step, head
# and nogqa in turn. call.sh is the same without the tests.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
case $(nvidia-smi --query-gpu=name --format=csv,noheader) in *H200*) h200=1 ;; *) h200=0 ;; esac
make -j16 build/gpu/bench_cuda_model build/gpu/bench_gdn >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
[ $h200 = 1 ] && peers_warm
test_gpu_in head .
if [ $h200 = 1 ]; then
    wait
    el warm
    gdn_beside_fla
    hybrid_pairs 4 585
else
    tree_build sep3 build/gpu/bench_cuda_model || exit 1
    tree_build nogqa build/gpu/bench_cuda_model || exit 1
    el build
    for t in head sep3 nogqa; do
        d=.; [ $t = head ] || d=/tmp/$t
        timeout 90 ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv \
            -k "regex:attn_bwd|convert|group_sum|rowdot" --launch-skip 80 --launch-count 80 \
            $d/build/gpu/bench_cuda_model train-hybrid 2>/dev/null | grep '^"' >$R/ncu-attn-$t.csv
        ncu_sum $R/ncu-attn-$t.csv $t
        el ncu $t
    done
    trees_turn 6 585 train-hybrid head nogqa
fi
el done
tar -C $L -czf $R/misc.tar.gz .
