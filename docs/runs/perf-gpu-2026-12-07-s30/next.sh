# For the next session (written in session 30, not run): call A of two, on the H200 (carry .carry;
# ~450 s). The attention forward's producer-warpgroup shapes, cfgs 28-30 (30: 29 with ping-pong),
# checked in the emulation only:
# 1. test_cuda_ops, which forces every block shape of cuda_attention_cfg.h against the CPU backend
#    (their first run on a GPU; a hang there is a barrier the emulation missed: 150 s timeout);
# 2. bench_attention: every shape at 4 x 2048 and 1 x 8192, with statistics, with the log-sum-exp
#    only (training's), and plain, each against cfg 0 in the same run;
# 3. the forwards of the sdpa targets (bench_cuda_model forward-targets) under cfg 23 (the default),
#    28, 29 and 30 in turn, two rounds, then sdpa once: the ratio each shape would give.
# Then call B, next2.sh (the per-kernel profiles), with GRAFT_CUDA_ATTN_CFG set to the winner if one
# of 28-30 beat 23 here.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
B=${BUDGET:-450}
make -j16 build/gpu/test_cuda_ops build/gpu/bench_attention build/gpu/bench_cuda_model >$L/build.log 2>&1 ||
    { tail -20 $L/build.log; exit 1; }
el build
timeout 150 build/gpu/test_cuda_ops >$L/test_cuda_ops.txt 2>&1
rc=$?
echo "test_cuda_ops rc $rc: $(tail -n 1 $L/test_cuda_ops.txt)"
grep FAIL $L/test_cuda_ops.txt | head -20
echo "cfg 28-30 checks passed: $(grep -cE 'PASS.*cfg(2[89]|30)\b' $L/test_cuda_ops.txt)"
gzip -c $L/test_cuda_ops.txt >$R/test_cuda_ops.txt.gz
el tests
[ $rc = 0 ] || { tar -C $L -czf $R/misc.tar.gz .; exit 1; }
timeout 150 build/gpu/bench_attention 2>$L/bench_attention.log | grep '^{' >$R/bench_attention.jsonl
show <$R/bench_attention.jsonl | grep -E "cfg (0|23|28|29|30)\b" | head -40
el bench_attention
for round in 1 2; do
    for c in 23 28 29 30; do
        [ $(left $B) -gt 60 ] || break 2
        GRAFT_CUDA_ATTN_CFG=$c timeout 60 build/gpu/bench_cuda_model forward-targets 2>>$L/forward-cfg$c.log |
            grep '"model"' | sed "s/^{/{\"cfg\":$c,\"round\":$round,/" | tee -a $R/forward-cfgs.jsonl | show |
            grep "^\[model" | sed "s/^/cfg $c: /"
    done
done
el forward
[ $(left $B) -gt 50 ] && sdpa_forward
el done
tar -C $L -czf $R/misc.tar.gz .
