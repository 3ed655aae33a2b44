# lease 3 of session 18: make test-gpu on the head that drops the attention forward's cfgs 25-27 (they
# lost to cfg 23 in lease 1), then where a training step's wall time goes beyond its kernel time:
# Nsight Compute summed 165.0 / 176.0 ms of kernels for the plain / hybrid step (lease 2) against
# 176.5 / 190.2 ms of wall (session 17). nvidia-smi samples the SM clock, power and throttle reasons
# every 100 ms while bench_cuda_model runs each step kind; a clock below the 1980 MHz that ncu's
# isolated kernels ran at would account for the gap without any launch gaps. Carry .carry.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
GRAFT_GPU_CALL_S=250 sh tests/gpu/device_run.sh test 2>&1 | tee $R/test-gpu.txt | grep -E "FAIL|SKIP|passed|STOPPED|done in"
el test-gpu
for kind in plain hybrid; do
    nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
        --format=csv,noheader -lms 100 >$R/clocks-train-$kind.csv 2>$L/smi-$kind.log &
    smi=$!
    timeout 120 build/gpu/bench_cuda_model train-$kind 2>>$L/train.log | grep '"model"' | tee -a $R/train.jsonl | show
    kill $smi
    python3 - $R/clocks-train-$kind.csv <<'PY'
import sys
rows = [l.split(", ") for l in open(sys.argv[1]) if l.count(",") >= 5]
mhz = [int(r[1].split()[0]) for r in rows if r[1].split()[0].isdigit()]
w = [float(r[3].split()[0]) for r in rows if r[3].split()[0].replace(".", "").isdigit()]
busy = [m for m, p in zip(mhz, w) if p > 300]  # samples while the step runs (idle is < 100 W)
if busy:
    busy.sort()
    print(f"{len(rows)} samples; under load ({len(busy)}): SM clock median {busy[len(busy)//2]} MHz, "
          f"min {busy[0]}, max {busy[-1]}; power max {max(w):.0f} W")
    reasons = {}
    for r in rows:
        reasons[r[5].strip()] = reasons.get(r[5].strip(), 0) + 1
    print("throttle reasons (samples):", reasons)
PY
    el "train-$kind"
done
tar -C $L -czf $R/misc.tar.gz .
