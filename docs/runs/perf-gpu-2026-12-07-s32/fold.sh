# Session 32, call 7 (carry .carry; ~200 s): cfg 31, cfg 23 with the fold (each score scaled inside
# the exponent's FMA, fma(s, c, -m), instead of a multiply and a subtraction: 32 instructions fewer a
# thread and tile), against cfg 23: test_cuda_ops (every shape against the CPU backend), bench_attention
# twice, then the forwards of the sdpa targets under cfg 23 and cfg 31 in turn around sdpa.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
make -j16 build/gpu/test_cuda_ops build/gpu/bench_attention build/gpu/bench_cuda_model >$L/build.log 2>&1 ||
    { tail -20 $L/build.log; exit 1; }
el build
timeout 60 build/gpu/test_cuda_ops >$L/test_cuda_ops.txt 2>&1
echo "test_cuda_ops rc $?: $(tail -n 1 $L/test_cuda_ops.txt)"; grep FAIL $L/test_cuda_ops.txt | head
echo "cfg 31 checks passed: $(grep -cE 'PASS.*cfg31\b' $L/test_cuda_ops.txt)"
gzip -c $L/test_cuda_ops.txt >$R/test_cuda_ops-fold.txt.gz
el tests
for round in 1 2; do
    timeout 40 build/gpu/bench_attention 2>/dev/null | grep '^{' | sed "s/^{/{\"round\":$round,/" | tee -a $R/bench_attention-fold.jsonl |
        show | grep -E "\[cfg (23|31)" | cut -c1-50,90-120
    el bench $round
done
for c in 23 31; do
    GRAFT_CUDA_ATTN_CFG=$c timeout 60 build/gpu/bench_cuda_model forward-targets 2>>$L/forward.log |
        grep '"model"' | sed "s/^{/{\"cfg\":$c,/" | tee -a $R/forward-fold.jsonl | show | grep "^\[model" | sed "s/^/cfg $c: /"
done
sdpa_forward
for c in 31 23; do
    [ $(left 260) -gt 30 ] || break
    GRAFT_CUDA_ATTN_CFG=$c timeout 60 build/gpu/bench_cuda_model forward-targets 2>>$L/forward.log |
        grep '"model"' | sed "s/^{/{\"cfg\":$c,/" | tee -a $R/forward-fold.jsonl | show | grep "^\[model" | sed "s/^/cfg $c: /"
done
el done
