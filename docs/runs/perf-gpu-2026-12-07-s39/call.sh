# Session 39's call (carry .carry with sep3.patch and nogqa.patch, and .peers; ~570 s, or BUDGET s). The CUDA backend
# is as 46ff468 left it, which `make test-gpu` passed on an H100 at session 38's end, so no tests here.
# On an H200 (the card): the forward + statistics targets beside sdpa, last measured there in
# session 27 (before session 32's attention forward): three rounds of graft untuned, sdpa, graft with
# GRAFT_CUDA_GEMM_TUNE=8 (the first tuned run pays the tuning; later ones read its choices).
# On an H100: session 38's diagnostics instead: the attention backward's launches per tree under
# Nsight Compute (head, sep3, nogqa; patches as docs/runs/perf-gpu-2026-12-07-s38/call1.sh says),
# then the 50 % hybrid step under the three trees in turn.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
make -j16 build/gpu/bench_cuda_model >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
el build
case $(nvidia-smi --query-gpu=name --format=csv,noheader) in
*H200*)
    for i in 1 2 3; do
        [ $(left ${BUDGET:-570}) -gt 200 ] || break
        tuned_model forward-targets 0 $i 60
        (cd tests/gpu/peers && GRAFT_PEER_EAGER=0 GRAFT_PEER_CASES=qwen2.5-1.5b:4:2048,qwen2.5-1.5b:1:8192 \
            timeout 120 python3 peer_forward.py) 2>>$L/peer_forward.log | grep '^{' |
            sed "s/^{/{\"round\":$i,/" | tee -a $R/peer_forward.jsonl | show | grep '^\[peer'
        tuned_model forward-targets 8 $i 90
        el round $i
    done ;;
*)
    (tree_build sep3 build/gpu/bench_cuda_model && tree_build nogqa build/gpu/bench_cuda_model) >$L/trees.log 2>&1
    cat $L/trees.log
    [ -x /tmp/sep3/build/gpu/bench_cuda_model ] && [ -x /tmp/nogqa/build/gpu/bench_cuda_model ] || exit 1
    el trees
    attn_bwd_parts head sep3 nogqa
    trees_turn 6 ${BUDGET:-570} train-hybrid head sep3 nogqa ;;
esac
el done
tar -C $L -czf $R/misc.tar.gz .
