# Run in session 22 as call 1a (written in session 21). Call 1 of 2: `make test-gpu` with the
# two-warpgroup attention backward as the default (6433c7e; session 21's run on 110b96a had the
# one-group kernel as its default and ran the new one forced only) and the dQ atomics of four floats
# in its checks; then the plain and hybrid steps under GRAFT_CUDA_ATTN_DQ=2 and 4 alternating, two
# rounds, and Nsight Compute's speed of light of one attention backward launch under each. The
# peer's first run (torch.compile, ~4 min on a fresh machine) fills the compile cache in the
# background meanwhile, for next2.sh on the same warm machine. Carry .carry, .peers.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
mkdir -p .peers/fla && tar -xJf .peers/fla.tar.xz -C .peers/fla
export GRAFT_FLA_PATH=$PWD/.peers/fla
(cd tests/gpu/peers && GRAFT_PEER_TRAIN=hybrid GRAFT_PEER_COMPILE=1 timeout 400 python3 peer_train.py) \
    >$L/peer_warmup.jsonl 2>$L/peer_warmup.log & # its figure shares the GPU with the tests: not used
GRAFT_GPU_CALL_S=300 sh tests/gpu/device_run.sh test 2>&1 | tee $L/test-gpu.txt | grep -E "FAIL|SKIP|passed|STOPPED|done in"
el test-gpu
wait
el peer-warmup
for round in 1 2; do
    for kind in plain hybrid; do
        for dq in 2 4; do
            [ $(left 520) -gt 20 ] || break 3
            GRAFT_CUDA_ATTN_DQ=$dq timeout 40 build/gpu/bench_cuda_model train-$kind 2>>$L/train.log | grep '"model"' |
                sed "s/^{/{\"attn_dq\":$dq,\"round\":$round,/" | tee -a $R/train-dq.jsonl | show | grep "^\[model" | sed "s/^/dq $dq: /"
        done
    done
done
el steps
for dq in 2 4; do
    [ $(left 580) -gt 35 ] || break
    GRAFT_CUDA_ATTN_DQ=$dq timeout 45 ncu --clock-control none --section SpeedOfLight --section WarpStateStats \
        --kernel-name regex:attn_bwd_wg_kernel --launch-skip 60 --launch-count 1 build/gpu/bench_cuda_model train-plain \
        >$R/ncu-dq$dq.txt 2>&1
    grep -E "Duration|L2 Cache Throughput|Compute \(SM\)|Stall LG" $R/ncu-dq$dq.txt | sed "s/^/dq $dq: /"
done
el ncu
tar -C $L -czf $R/misc.tar.gz .
