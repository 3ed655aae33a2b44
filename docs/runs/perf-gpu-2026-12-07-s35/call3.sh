# Session 35, call 3 (carry .carry with base2.patch, and .peers). On an H200: session 32's
# next-h200.sh (the issue's card; ~560 s). Otherwise (~440 s): the RMSNorm kernels with every load
# of a row issued before any use (the backward's fused dx + dw kernel, its warps' dw sums in shared
# memory; the forward's new rmsnorm_packs_kernel, the row kept in registers), checked and timed.
# base2.patch is `git diff -R -- engine/` of that change: 3b23934's kernels, built beside the head in
# /tmp/base2.
# 1. test_cuda_ops (every RMSNorm backward case against the CPU backend, dw's bits twice) and
#    test_cuda_train on the head;
# 2. the backward's and the forward's RMSNorm kernels under Nsight Compute, one hybrid step's 57
#    launches of each in each tree
#    (gpu__time_duration, clocks left alone), then the head's kernel and swiglu_backward_kernel's
#    sections (speed of light, occupancy, warp states, memory workload), one launch each;
# 3. the hybrid step, head / base2, three rounds while B (540 s) lasts.
case $(nvidia-smi --query-gpu=name --format=csv,noheader) in
*H200*) exec sh docs/runs/perf-gpu-2026-12-07-s32/next-h200.sh ;;
esac
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
B=540
make -j16 build/gpu/bench_cuda_model build/gpu/test_cuda_ops build/gpu/test_cuda_train >$L/build.log 2>&1 ||
    { tail -20 $L/build.log; exit 1; }
el build
(tree_build base2 build/gpu/bench_cuda_model >$L/base2.log 2>&1; echo "base2 build rc $?" >>$L/base2.log) &
timeout 120 build/gpu/test_cuda_ops >$L/test_cuda_ops.txt 2>&1
echo "test_cuda_ops rc $?: $(tail -n 1 $L/test_cuda_ops.txt)"; grep FAIL $L/test_cuda_ops.txt | head
grep -E "rmsnorm_backward|determinism" $L/test_cuda_ops.txt | head -12
gzip -c $L/test_cuda_ops.txt >$R/test_cuda_ops-call3.txt.gz
timeout 60 build/gpu/test_cuda_train >$L/test_cuda_train.txt 2>&1
echo "test_cuda_train rc $?: $(tail -n 1 $L/test_cuda_train.txt)"; gzip -c $L/test_cuda_train.txt >$R/test_cuda_train-call3.txt.gz
wait; cat $L/base2.log
el tests
# ncu_norm TREE WHICH REGEX: one step's 57 launches of the kernels REGEX names in TREE's bench
ncu_norm() {
    d=.; [ $1 = head ] || d=/tmp/$1
    timeout 100 ncu --clock-control none --metrics gpu__time_duration.sum --csv -k "regex:$3" --launch-skip 57 \
        --launch-count 57 $d/build/gpu/bench_cuda_model train-hybrid 2>/dev/null | grep '^"' >$R/ncu-norm-$2-$1.csv
    python3 - $R/ncu-norm-$2-$1.csv "$2 $1" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
unit = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3}
us = [float(r["Metric Value"].replace(",", "")) * unit[r["Metric Unit"]] for r in rows]
names = sorted({r["Kernel Name"].split("(")[0].split("<")[0].replace("void ", "") for r in rows})
print(f"{sys.argv[2]}: {len(us)} launches, {sum(us) / 1e3:.4f} ms, median {sorted(us)[len(us) // 2]:.2f} us, {names}")
PY
    el ncu $2 $1
}
for t in head base2; do ncu_norm $t bwd rmsnorm_dx_dw; done
for t in head base2; do ncu_norm $t fwd 'rmsnorm_(packs_)?kernel'; done
for k in rmsnorm_dx_dw_kernel:57 swiglu_backward_kernel:28; do
    timeout 120 ncu --clock-control none -k regex:${k%:*} --launch-skip ${k#*:} --launch-count 1 \
        --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
        --section MemoryWorkloadAnalysis build/gpu/bench_cuda_model train-hybrid >$R/ncu-${k%:*}.txt 2>&1
    echo "== ${k%:*} rc $?"
    grep -E "Duration|DRAM Throughput|Achieved Occupancy|Registers Per|Warp Cycles Per Issued" $R/ncu-${k%:*}.txt | head -8
    el ${k%:*}
done
for round in 1 2 3; do
    for t in head base2; do
        [ $(left $B) -gt 40 ] || break 2
        d=.; [ $t = head ] || d=/tmp/$t
        timeout 40 $d/build/gpu/bench_cuda_model train-hybrid 2>>$L/train-$t.log | grep '"model"' |
            sed "s/^{/{\"tree\":\"$t\",\"round\":$round,/" | tee -a $R/train.jsonl | show | grep "^\[model" |
            sed "s/^/$t: /" | cut -c1-140
    done
done
el done
tar -C $L -czf $R/misc.tar.gz .
