# Session 31, call 3 (carry .carry; ~300 s): why the attention forward with statistics runs at ~60 %
# of the tensor cores' rate, for cfg 23 (the default on Hopper) and cfg 30 (a producer warpgroup and
# ping-pong): Nsight Compute's full set on one attn_fwd_mma_kernel launch of the 1 x 8192 forward
# (bench_cuda_model forward-long; launch 29, the second forward's first layer, past the first's
# warm-up), the clocks left alone. The details page comes back whole; the lines printed are the
# tensor pipe's share, the issue rate and the warps' stall reasons.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
make -j16 build/gpu/bench_cuda_model >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
el build
for c in 23 30; do
    GRAFT_CUDA_ATTN_CFG=$c timeout 200 ncu --set full --clock-control none -k regex:attn_fwd_mma_kernel \
        --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio \
        --launch-skip 28 --launch-count 1 -f -o $L/attn-cfg$c build/gpu/bench_cuda_model forward-long >$L/ncu-cfg$c.log 2>&1
    echo "cfg $c: ncu rc $?"
    ncu --import $L/attn-cfg$c.ncu-rep --page details >$R/ncu-attn-cfg$c.txt 2>&1
    ncu --import $L/attn-cfg$c.ncu-rep --page raw --csv | gzip >$R/ncu-attn-cfg$c-raw.csv.gz
    grep -E "Duration|gmma|Issue Slots Busy|Issued Ipc Active|No Eligible|Active Warps Per Scheduler|Eligible Warps|Stall|Registers Per|Shared Memory Config|Achieved Occupancy|Compute \(SM\) Throughput|Memory Throughput" \
        $R/ncu-attn-cfg$c.txt | head -40
    zcat $R/ncu-attn-cfg$c-raw.csv.gz | python3 -c "
import csv, sys
r = list(csv.reader(sys.stdin)); h, v = r[0], r[-1]
st = sorted(((float(v[i].replace(',', '')), h[i]) for i in range(len(h)) if 'issue_stalled' in h[i] and v[i].replace(',', '').replace('.', '').isdigit()), reverse=True)
for x, n in st[:10]: print(f'{x:8.3f} {n}')"
    el cfg $c
done
tar -C $L -czf $R/misc.tar.gz .
