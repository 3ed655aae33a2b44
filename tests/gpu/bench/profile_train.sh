#!/bin/sh
# Where a training step's time goes on the GPU: Nsight Systems over
# bench_cuda_model's plain and hybrid qwen2.5-1.5b steps (B 4 x T 2048; five
# steps each: two warm-up, three timed), then the kernel summary of each run
# (total GPU time per kernel name) and the top rows per step.
#   sh tests/gpu/bench/profile_train.sh [BUILD] [OUTDIR]
#     -> OUTDIR/{plain,hybrid}_kern.csv and a table on stdout
# Needs nsys (Nsight Systems; looked for on PATH, under /usr/local/cuda and
# /opt/nvidia) and build/gpu/bench_cuda_model (make gpu-tests).
set -eu
BUILD=${1:-build}
OUTDIR=${2:-$BUILD/gpu/profile}
cd "$(dirname "$0")/../../.."
bin="$BUILD/gpu/bench_cuda_model"
[ -x "$bin" ] || { echo "profile_train: $bin is missing (make gpu-tests)" >&2; exit 1; }
nsys=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys \
    /usr/local/cuda/nsight-systems*/bin/nsys 2>/dev/null | head -n 1 || true)
[ -n "$nsys" ] || { echo "profile_train: no nsys (Nsight Systems) on this machine" >&2; exit 1; }
mkdir -p "$OUTDIR"
STEPS=5
for kind in plain hybrid; do
    rep="$OUTDIR/$kind"
    "$nsys" profile -t cuda -s none --cpuctxsw none -o "$rep" --force-overwrite true "$bin" "train-$kind" \
        >"$OUTDIR/$kind.log" 2>&1 || { echo "profile_train: nsys profile failed ($kind):" >&2; tail -n 5 "$OUTDIR/$kind.log" >&2; exit 1; }
    "$nsys" stats -q -r cuda_gpu_kern_sum -f csv -o "$rep" --force-export true "$rep.nsys-rep" >/dev/null 2>&1 ||
        { echo "profile_train: nsys stats failed ($kind)" >&2; exit 1; }
    csv="$rep"_cuda_gpu_kern_sum.csv
    mv "$csv" "$OUTDIR/${kind}_kern.csv"
    rm -f "$rep.nsys-rep" "$rep.sqlite"
    echo "== $kind step (B 4 x T 2048): kernel time per step (of $STEPS steps), top 30"
    python3 - "$OUTDIR/${kind}_kern.csv" "$STEPS" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
steps = int(sys.argv[2])
col = next(k for k in rows[0] if k.startswith("Total Time"))
scale = 1e-6 if "ns" in col else 1e-3  # to ms
tot = sum(float(r[col]) for r in rows) * scale / steps
print(f"all kernels {tot:9.2f} ms a step ({len(rows)} names)")
for r in sorted(rows, key=lambda r: -float(r[col]))[:30]:
    ms = float(r[col]) * scale / steps
    print(f"{ms:9.3f} ms {100 * ms / tot:5.1f}%  x{int(r['Instances']) // steps:<5d} {r['Name'][:90]}")
PY
done
