# Session 32, call 6 (carry .carry and .peers; ~260 s) on a fresh machine, H200 or H100: on an H200 (the
# issue's card), h200.sh; on an H100, Nsight Compute's full set on one launch of cfg 23's attention
# forward after the descriptor change (1 x 8192 with statistics, as session 31's ncu_attn.sh), its
# details page and the ten instructions with the most stall samples (ncu_top_stalls.py).
case $(nvidia-smi --query-gpu=name --format=csv,noheader) in
*H200*) exec sh docs/runs/perf-gpu-2026-12-07-s32/h200.sh ;;
esac
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
make -j16 build/gpu/bench_cuda_model >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
el build
GRAFT_CUDA_ATTN_CFG=23 timeout 200 ncu --set full --clock-control none -k regex:attn_fwd_mma_kernel \
    --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio \
    --launch-skip 28 --launch-count 1 -f -o $L/attn-cfg23 build/gpu/bench_cuda_model forward-long >$L/ncu.log 2>&1
echo "ncu rc $?"
ncu --import $L/attn-cfg23.ncu-rep --page details >$R/ncu-attn-cfg23.txt 2>&1
ncu --import $L/attn-cfg23.ncu-rep --page raw --csv | gzip >$R/ncu-attn-cfg23-raw.csv.gz
ncu --import $L/attn-cfg23.ncu-rep --page source --csv --print-source sass 2>&1 | gzip >$R/ncu-source-cfg23.csv.gz
grep -E "Duration|gmma|Issue Slots Busy|Executed Ipc Active|No Eligible|Eligible Warps|Registers Per|L2 Cache Throughput|Compute \(SM\) Throughput|Executed Instructions  " $R/ncu-attn-cfg23.txt | head -20
zcat $R/ncu-attn-cfg23-raw.csv.gz | python3 -c "
import csv, sys
r = list(csv.reader(sys.stdin)); h, v = r[0], r[-1]
st = sorted(((float(v[i].replace(',', '')), h[i]) for i in range(len(h)) if 'issue_stalled' in h[i] and 'per_issue_active' in h[i] and v[i].replace(',', '').replace('.', '').isdigit()), reverse=True)
for x, n in st[:10]: print(f'{x:8.3f} {n}')"
zcat $R/ncu-source-cfg23.csv.gz | python3 tests/gpu/bench/ncu_top_stalls.py 12
el ncu
cp $L/attn-cfg23.ncu-rep $R/ 2>/dev/null
