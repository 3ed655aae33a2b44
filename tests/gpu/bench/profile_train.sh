#!/bin/sh
# Where a training step's GPU time goes: Nsight Compute (ncu; the GPU machine
# has it, not Nsight Systems) times every kernel of bench_cuda_model's plain
# and hybrid qwen2.5-1.5b steps (B 4 x T 2048, bf16), the clocks left alone,
# one replay pass each; then one whole step (from the embedding kernel to the
# AdamW kernel) is summed per kernel name, cuBLAS's GEMMs as one row.
#   sh tests/gpu/bench/profile_train.sh [BUILD] [OUTDIR]
#     -> OUTDIR/{plain,hybrid}_kernels.csv (ncu's CSV) and a table on stdout
# The sum is kernel time only: the step's wall time (bench_cuda_model's figure)
# also holds the gaps between launches.
set -eu
BUILD=${1:-build}
OUTDIR=${2:-$BUILD/gpu/profile}
cd "$(dirname "$0")/../../.."
bin="$BUILD/gpu/bench_cuda_model"
[ -x "$bin" ] || { echo "profile_train: $bin is missing (make gpu-tests)" >&2; exit 1; }
command -v ncu >/dev/null 2>&1 || { echo "profile_train: ncu is not on PATH" >&2; exit 1; }
mkdir -p "$OUTDIR"
for kind in plain hybrid; do
    csv="$OUTDIR/${kind}_kernels.csv"
    # skip the GEMM and copy ceilings measured first; a step is < 2000 launches
    ncu --clock-control none --metrics gpu__time_duration.sum --csv --launch-skip 400 --launch-count 4500 \
        "$bin" "train-$kind" 2>/dev/null | grep '^"' >"$csv" || { echo "profile_train: ncu failed ($kind)" >&2; exit 1; }
    python3 - "$csv" "$kind" <<'PY'
import csv, re, sys
rows = list(csv.DictReader(open(sys.argv[1])))
unit = {"nsecond": 1e-6, "ns": 1e-6, "usecond": 1e-3, "us": 1e-3, "msecond": 1.0, "ms": 1.0}
def name(r):
    return re.sub(r"[<(].*", "", re.sub(r"^void ", "", r["Kernel Name"]))
seq = [(name(r), float(r["Metric Value"].replace(",", "")) * unit[r["Metric Unit"]]) for r in rows]
start = next((i for i, (n, _) in enumerate(seq) if n.startswith("embedding")), None)
end = next((i for i, (n, _) in enumerate(seq) if start is not None and i > start and n.startswith("adamw")), None)
if end is None:
    sys.exit(f"profile_train: no whole step (embedding ... adamw) among the {len(seq)} launches timed")
step = seq[start:end + 1]
total = sum(t for _, t in step)
sums = {}
for n, t in step:
    key = "GEMM (cuBLAS)" if n.startswith(("nvjet", "cutlass", "sm90_xmma")) or "splitKreduce" in n else n
    s = sums.setdefault(key, [0.0, 0])
    s[0] += t
    s[1] += 1
print(f"== {sys.argv[2]} step, B 4 x T 2048: {len(step)} kernels, {total:.2f} ms of kernel time")
for k, (t, c) in sorted(sums.items(), key=lambda kv: -kv[1][0])[:30]:
    print(f"{t:9.3f} ms {100 * t / total:5.1f}%  x{c:<5d} {k[:80]}")
PY
done
