# For the next session (written in session 32, not run: no device time was left): cfg 32, cfg 23 with
# the block's barrier once every two tiles (overlap 4: five stages, two tiles computed, two in flight,
# one V kept), against cfg 23, on any Hopper card (carry .carry; ~200 s). Session 32's profile of cfg 23
# put 7.8 % of its warps' samples at the barrier every tile, where the three warpgroups, whose products
# take turns on the tensor cores, meet. test_cuda_ops (every shape against the CPU backend, cfg 32's
# first GPU run), bench_attention twice, then the forwards of the sdpa targets under cfg 23 and cfg 32
# in turn around sdpa.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
make -j16 build/gpu/test_cuda_ops build/gpu/bench_attention build/gpu/bench_cuda_model >$L/build.log 2>&1 ||
    { tail -20 $L/build.log; exit 1; }
el build
timeout 60 build/gpu/test_cuda_ops >$L/test_cuda_ops.txt 2>&1
echo "test_cuda_ops rc $?: $(tail -n 1 $L/test_cuda_ops.txt)"; grep FAIL $L/test_cuda_ops.txt | head
echo "cfg 32 checks passed: $(grep -cE 'PASS.*cfg32\b' $L/test_cuda_ops.txt)"
gzip -c $L/test_cuda_ops.txt >$R/test_cuda_ops-every2.txt.gz
el tests
for round in 1 2; do
    timeout 40 build/gpu/bench_attention 2>/dev/null | grep '^{' | sed "s/^{/{\"round\":$round,/" | tee -a $R/bench_attention-every2.jsonl |
        show | grep -E "\[cfg (23|32)" | cut -c1-50,90-120
    el bench $round
done
for c in 23 32; do
    GRAFT_CUDA_ATTN_CFG=$c timeout 60 build/gpu/bench_cuda_model forward-targets 2>>$L/forward.log |
        grep '"model"' | sed "s/^{/{\"cfg\":$c,/" | tee -a $R/forward-every2.jsonl | show | grep "^\[model" | sed "s/^/cfg $c: /"
done
sdpa_forward
for c in 32 23; do
    [ $(left 260) -gt 30 ] || break
    GRAFT_CUDA_ATTN_CFG=$c timeout 60 build/gpu/bench_cuda_model forward-targets 2>>$L/forward.log |
        grep '"model"' | sed "s/^{/{\"cfg\":$c,/" | tee -a $R/forward-every2.jsonl | show | grep "^\[model" | sed "s/^/cfg $c: /"
done
el done
