# Session 34, call 2 (any Hopper; carry .carry with spbase.patch; ~470 s): sum_parts' column form
# (79c94f9) checked and timed. spbase.patch is `git diff -R 79c94f9~1 79c94f9 -- engine/`
# of that commit: the tree with the one-block-an-output sum_parts everywhere, built beside the head.
# 1. test_cuda_ops (every sum_parts caller against the CPU backend, the norms' dw bits twice) and
#    test_cuda_train on the head;
# 2. the sum_parts kernels of the 50 % hybrid training step under Nsight Compute, head and spbase:
#    one step's 105 launches each (gpu__time_duration, clocks left alone);
# 3. the hybrid step, head / spbase / head with GRAFT_CUDA_GEMM_TUNE=8 (its choice file filled by one
#    run first), three rounds;
# 4. while 170 s are left, the head's per-kernel account of the step (profile_steps.sh); B, the seconds the call may take, is 470.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
B=470
make -j16 build/gpu/bench_cuda_model build/gpu/test_cuda_ops build/gpu/test_cuda_train >$L/build.log 2>&1 ||
    { tail -20 $L/build.log; exit 1; }
el build
(tree_build spbase build/gpu/bench_cuda_model >$L/spbase.log 2>&1; echo "spbase build rc $?" >>$L/spbase.log) &
timeout 120 build/gpu/test_cuda_ops >$L/test_cuda_ops.txt 2>&1
echo "test_cuda_ops rc $?: $(tail -n 1 $L/test_cuda_ops.txt)"; grep FAIL $L/test_cuda_ops.txt | head
grep -E "rmsnorm_backward dw|linear_backward db|cross_entropy.*loss|sumsq|determinism" $L/test_cuda_ops.txt | head -12
gzip -c $L/test_cuda_ops.txt >$R/test_cuda_ops-call2.txt.gz
timeout 60 build/gpu/test_cuda_train >$L/test_cuda_train.txt 2>&1
echo "test_cuda_train rc $?: $(tail -n 1 $L/test_cuda_train.txt)"; gzip -c $L/test_cuda_train.txt >$R/test_cuda_train-call2.txt.gz
wait; cat $L/spbase.log
el tests
for t in head spbase; do
    d=.; [ $t = spbase ] && d=/tmp/spbase
    timeout 100 ncu --clock-control none --metrics gpu__time_duration.sum --csv -k regex:sum_parts --launch-skip 105 \
        --launch-count 105 $d/build/gpu/bench_cuda_model train-hybrid 2>/dev/null | grep '^"' >$R/ncu-sum_parts-$t.csv
    python3 - $R/ncu-sum_parts-$t.csv $t <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
unit = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3}
us = [float(r["Metric Value"].replace(",", "")) * unit[r["Metric Unit"]] for r in rows]
names = sorted({r["Kernel Name"].split("(")[0].split("<")[0].replace("void ", "") for r in rows})
print(f"{sys.argv[2]}: {len(us)} sum_parts launches, {sum(us) / 1e3:.4f} ms, {', '.join(names)}")
PY
    el ncu $t
done
export GRAFT_CUDA_GEMM_TUNE_FILE=$L/gemm-choices.json
GRAFT_CUDA_GEMM_TUNE=8 timeout 60 build/gpu/bench_cuda_model train-hybrid >/dev/null 2>$L/fill.log
echo "choice file filled: $(grep -c "the heuristic's first" $L/fill.log) shapes timed"
for round in 1 2 3; do
    for t in head spbase tuned; do
        [ $(left $B) -gt 40 ] || break 2
        d=.; [ $t = spbase ] && d=/tmp/spbase
        GRAFT_CUDA_GEMM_TUNE=$([ $t = tuned ] && echo 8) timeout 40 $d/build/gpu/bench_cuda_model train-hybrid 2>>$L/train-$t.log |
            grep '"model"' | sed "s/^{/{\"tree\":\"$t\",\"round\":$round,/" | tee -a $R/train.jsonl | show | grep "^\[model" |
            sed "s/^/$t: /" | cut -c1-140
    done
done
el rounds
if [ $(left $B) -gt 170 ]; then
    timeout $(( $(left $B) - 15 )) sh tests/gpu/bench/profile_steps.sh hybrid embedding_kernel 400 4500 train-hybrid 2>&1 |
        tail -30 | tee $R/profile-hybrid.txt
fi
el done
tar -C $L -czf $R/misc.tar.gz .
