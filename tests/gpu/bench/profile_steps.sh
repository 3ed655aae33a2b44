#!/bin/sh
# Where the GPU time of a short, launch-heavy step goes (decode steps, Stage 2
# steps, one long forward): Nsight Compute times every kernel of a window of
# bench_cuda_model's launches (clocks left alone, one replay pass each), then
# the window is cut into steps at each launch of a marker kernel and each
# whole step's kernel time is printed, with the kernels of the last whole step
# summed per name (cuBLAS's GEMMs as one row). Against the step's wall time
# (bench_cuda_model's own figure, timed without ncu) the difference is the
# time the GPU waits for the host: launches, synchronisations, copies.
#   sh tests/gpu/bench/profile_steps.sh NAME MARK SKIP COUNT ARGS...
#     NAME: the output's name; MARK: the kernel name that starts a step
#     (e.g. embedding_kernel); SKIP/COUNT: ncu's --launch-skip/--launch-count;
#     ARGS: bench_cuda_model's arguments. EVERY (default 1): a step starts at
#     every EVERY-th launch of MARK (a marker launched twice a step: 2). BUILD (default build) and OUTDIR
#     (default BUILD/gpu/profile) from the environment.
#     -> OUTDIR/NAME_kernels.csv and a table on stdout
set -eu
[ $# -ge 5 ] || { echo "usage: profile_steps.sh NAME MARK SKIP COUNT ARGS..." >&2; exit 2; }
name=$1 mark=$2 skip=$3 count=$4
shift 4
BUILD=${BUILD:-build}
OUTDIR=${OUTDIR:-$BUILD/gpu/profile}
cd "$(dirname "$0")/../../.."
bin="$BUILD/gpu/bench_cuda_model"
[ -x "$bin" ] || { echo "profile_steps: $bin is missing (make gpu-tests)" >&2; exit 1; }
command -v ncu >/dev/null 2>&1 || { echo "profile_steps: ncu is not on PATH" >&2; exit 1; }
mkdir -p "$OUTDIR"
csv="$OUTDIR/${name}_kernels.csv"
ncu --clock-control none --metrics gpu__time_duration.sum --csv --launch-skip "$skip" --launch-count "$count" \
    "$bin" "$@" 2>/dev/null | grep '^"' >"$csv" || { echo "profile_steps: ncu failed ($name)" >&2; exit 1; }
python3 - "$csv" "$name" "$mark" "${EVERY:-1}" <<'PY'
import csv, re, sys
rows = list(csv.DictReader(open(sys.argv[1])))
unit = {"nsecond": 1e-6, "ns": 1e-6, "usecond": 1e-3, "us": 1e-3, "msecond": 1.0, "ms": 1.0}
def name(r):
    return re.sub(r"[<(].*", "", re.sub(r"^void ", "", r["Kernel Name"]))
seq = [(name(r), float(r["Metric Value"].replace(",", "")) * unit[r["Metric Unit"]]) for r in rows]
starts = [i for i, (n, _) in enumerate(seq) if n.startswith(sys.argv[3])][::int(sys.argv[4])]
if len(starts) < 2:
    sys.exit(f"profile_steps: fewer than two '{sys.argv[3]}' launches among the {len(seq)} timed")
print(f"== {sys.argv[2]}: {len(seq)} launches timed, {len(starts) - 1} whole steps")
for a, b in zip(starts, starts[1:]):
    print(f"   step at launch {a}: {b - a} kernels, {sum(t for _, t in seq[a:b]):.4f} ms of kernel time")
a, b = starts[-2], starts[-1]
step = seq[a:b]
total = sum(t for _, t in step)
sums = {}
for n, t in step:
    key = "GEMM (cuBLAS)" if n.startswith(("nvjet", "cutlass", "sm90_xmma", "gemv", "gemvx")) or "splitKreduce" in n else n
    s = sums.setdefault(key, [0.0, 0])
    s[0] += t
    s[1] += 1
print(f"   the last whole step: {len(step)} kernels, {total:.4f} ms")
for k, (t, c) in sorted(sums.items(), key=lambda kv: -kv[1][0])[:25]:
    print(f"{t:9.4f} ms {100 * t / total:5.1f}%  x{c:<5d} {k[:80]}")
PY
