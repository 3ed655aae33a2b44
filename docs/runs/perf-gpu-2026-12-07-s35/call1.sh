# Session 35, call 1 (any Hopper; carry .carry with base.patch; ~480 s): the losses' exps as one
# multiply and one MUFU.EX2 (loss_exp in engine/backend/cuda/cuda_losses.cu) checked and timed.
# base.patch is `git diff -R -- engine/` of that change: the tree with expf, built beside the head;
# span.patch: the head with LOSS_SPAN 16384 and LOSS_BATCH 8 (twice the loads in flight a thread, half
# the blocks and their reductions), timed only.
# 1. make test-gpu (tests/gpu/device_run.sh test) on the head: every loss against the CPU backend;
# 2. the cross-entropy kernels of the 50 % hybrid training step under Nsight Compute, head and base:
#    one step's 10 launches each (gpu__time_duration, clocks left alone), and the span tree's;
# 3. the hybrid step, head / base, three rounds, while B (the seconds the call may take, 540) lasts.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
B=540
OUT=$R timeout 300 sh tests/gpu/device_run.sh test >$L/device-test.log 2>&1
echo "== device_run test rc $?"; tail -n 20 $R/test-summary.txt
el test
tree_build base build/gpu/bench_cuda_model || exit 1
tree_build span build/gpu/bench_cuda_model || exit 1
make -j16 build/gpu/bench_cuda_model >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
el build
for t in head base span; do
    d=.; [ $t = head ] || d=/tmp/$t
    timeout 100 ncu --clock-control none --metrics gpu__time_duration.sum --csv -k regex:ce_ --launch-skip 10 \
        --launch-count 10 $d/build/gpu/bench_cuda_model train-hybrid 2>/dev/null | grep '^"' >$R/ncu-ce-$t.csv
    python3 - $R/ncu-ce-$t.csv $t <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
unit = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3}
by = {}
for r in rows:
    k = r["Kernel Name"].split("(")[0].split("<")[0].replace("void ", "")
    by.setdefault(k, []).append(float(r["Metric Value"].replace(",", "")) * unit[r["Metric Unit"]])
print(sys.argv[2] + ": " + ", ".join(f"{k} x{len(v)} {sum(v) / 1e3:.4f} ms" for k, v in sorted(by.items())))
PY
    el ncu $t
done
for round in 1 2 3; do
    for t in head base; do
        [ $(left $B) -gt 40 ] || break 2
        d=.; [ $t = base ] && d=/tmp/base
        timeout 40 $d/build/gpu/bench_cuda_model train-hybrid 2>>$L/train-$t.log | grep '"model"' |
            sed "s/^{/{\"tree\":\"$t\",\"round\":$round,/" | tee -a $R/train.jsonl | show | grep "^\[model" |
            sed "s/^/$t: /" | cut -c1-140
    done
done
el done
tar -C $L -czf $R/misc.tar.gz .
