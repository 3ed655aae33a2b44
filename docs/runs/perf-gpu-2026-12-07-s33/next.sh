# For the next session (written in session 33, not run): cfg 32 as the plan's shape without statistics
# (ATTN_FWD_HOPPER_PLAIN), on any Hopper card (carry .carry; ~420 s). Session 33 timed it 2-4 % faster
# than cfg 23 without statistics in bench_attention, and its 56 forced checks passed; what it lacks is a
# make test-gpu on a plan that takes it. In this copy only: the define switched, make test-gpu, then the
# 50 % hybrid training step with the attention forward forced to 32 and 23 in turn, three rounds. If the
# checks pass, commit the same one-line switch with this call's summary as docs/cuda.md's "Last run".
f=engine/backend/cuda/cuda_attention_cfg.h
sed -i 's/^#define ATTN_FWD_HOPPER_PLAIN 23$/#define ATTN_FWD_HOPPER_PLAIN 32/' $f
grep -q '^#define ATTN_FWD_HOPPER_PLAIN 32$' $f || { echo "the define did not switch"; exit 1; }
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
mkdir -p $R/t
OUT=$R/t timeout 300 sh tests/gpu/device_run.sh test >$L/device-test.log 2>&1
echo "device_run test rc $?"; tail -n 20 $R/t/test-summary.txt
el test
for round in 1 2 3; do
    for c in 32 23; do
        [ $(left 560) -gt 45 ] || break 2
        GRAFT_CUDA_ATTN_CFG=$c timeout 60 build/gpu/bench_cuda_model train-hybrid 2>>$L/train.log | grep '"model"' |
            sed "s/^{/{\"cfg\":$c,\"round\":$round,/" | tee -a $R/train.jsonl | show | grep "^\[model" | sed "s/^/cfg $c: /"
    done
done
el done
