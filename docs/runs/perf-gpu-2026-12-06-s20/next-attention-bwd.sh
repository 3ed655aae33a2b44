# Not run yet (written in session 20, its device time spent): the attention backward on two warpgroups (128 keys a block; Q / dO copies and
# dQ atomics halved per (key, row) pair), after lease 3 found the one-group kernel at the L2's limit.
# test_cuda_ops (its new bwd-wgmma2 cases), the training checks with GRAFT_CUDA_ATTN_BWD=wgmma2 (what a
# change of the default would run), then the plain and hybrid training steps under wgmma and wgmma2
# alternating, two rounds, and Nsight Compute's speed of light for one launch of each kernel in the
# plain step, as far as the session's last device time goes (BUDGET s of command). Last, the hybrid
# step under GRAFT_CUDA_GDN_SLAB=16 and 32 alternating: lease 3 found gdn_bwd_state_kernel at 0.73
# waves with the chosen 32-row slabs (192 blocks at 48 (sequence, head) pairs). Carry .carry.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
make -j14 gpu-tests >$L/build.log 2>&1 || { grep -m 20 -E "error|warning" $L/build.log; exit 1; }
el built
timeout 90 build/gpu/test_cuda_ops >$L/test_cuda_ops.txt 2>&1; echo "test_cuda_ops rc $?: $(tail -1 $L/test_cuda_ops.txt)"
grep -E "^FAIL|FAIL " $L/test_cuda_ops.txt | head -5; grep -E "bwd-wgmma2|backward" $L/test_cuda_ops.txt | grep -c PASS
grep -E "== |backward" $L/test_cuda_ops.txt | grep -A40 "two warpgroups" | head -40 >$R/test-cuda-ops-wgmma2.txt
train_round() {
    round=$1
    for kind in plain hybrid; do
        for bwd in wgmma wgmma2; do
            [ $(left ${BUDGET:-560}) -gt 20 ] || return
            GRAFT_CUDA_ATTN_BWD=$bwd timeout 60 build/gpu/bench_cuda_model train-$kind 2>>$L/train.log | grep '"model"' |
                sed "s/^{/{\"attn_bwd\":\"$bwd\",\"round\":$round,/" | tee -a $R/train-bwd.jsonl | show | grep -E "^\[model\]" | sed "s/^/$bwd: /"
        done
    done
}
train_round 1
el round 1
for t in test_cuda_train test_cuda_model; do
    GRAFT_CUDA_ATTN_BWD=wgmma2 timeout 60 build/gpu/$t >$L/$t.txt 2>&1; echo "$t (wgmma2) rc $?: $(tail -1 $L/$t.txt)"
done
el checks
train_round 2
el round 2
for bwd in wgmma wgmma2; do
    [ $(left ${BUDGET:-560}) -gt 40 ] || break
    GRAFT_CUDA_ATTN_BWD=$bwd timeout 60 ncu --clock-control none --section SpeedOfLight --section Occupancy \
        --kernel-name regex:attn_bwd_wg_kernel --launch-skip 60 --launch-count 1 build/gpu/bench_cuda_model train-plain \
        >$R/ncu-sol-$bwd.txt 2>&1
    grep -E "attn_bwd_wg_kernel|Duration|L2 Cache Throughput|Compute \(SM\)|DRAM Throughput|Achieved Occupancy" $R/ncu-sol-$bwd.txt | sed "s/^/$bwd: /"
done
el ncu
for round in 1 2; do
    for slab in 32 16; do
        [ $(left ${BUDGET:-560}) -gt 20 ] || break 2
        GRAFT_CUDA_GDN_SLAB=$slab timeout 60 build/gpu/bench_cuda_model train-hybrid 2>>$L/train.log | grep '"model"' |
            sed "s/^{/{\"gdn_slab\":$slab,\"round\":$round,/" | tee -a $R/train-slab.jsonl | show | grep -E "^\[model\]" | sed "s/^/slab $slab: /"
    done
done
el slab
