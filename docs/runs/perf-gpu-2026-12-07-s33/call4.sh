# Session 33, call 4 (the same warm H100; carry .carry; 133 s): the forwards of the sdpa targets under
# cfg 32 and cfg 23 (GRAFT_CUDA_ATTN_CFG) in turn, transformers' sdpa forward once in the middle.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
make -j16 build/gpu/bench_cuda_model >$L/b.log 2>&1 || tail $L/b.log
for c in 32 23 sdpa 32 23 32; do
    [ $(left 300) -gt 30 ] || break
    if [ $c = sdpa ]; then sdpa_forward; continue; fi
    GRAFT_CUDA_ATTN_CFG=$c timeout 60 build/gpu/bench_cuda_model forward-targets 2>>$L/forward.log | grep '"model"' |
        sed "s/^{/{\"cfg\":$c,/" | tee -a $R/forward.jsonl | show | grep "^\[model" | sed "s/^/cfg $c: /"
done
el done
