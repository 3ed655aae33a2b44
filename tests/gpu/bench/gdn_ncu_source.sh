#!/bin/sh
# Where one GDN core kernel spends its time, line by line: Nsight Compute on
# bench_gdn at the bench's shape (B 16 x T 2048, 12 heads x 128, bf16), one
# launch of the named kernel, with the warp-state and source-counter sections.
#   sh tests/gpu/bench/gdn_ncu_source.sh KERNEL [BUILD] [OUTDIR]
# KERNEL: wy, state, out, bwd_v, bwd_state or bwd_local (gdn_<KERNEL>_kernel).
# Writes OUTDIR/ncu_<KERNEL>.txt (the details page: speed of light, occupancy,
# stall reasons), OUTDIR/ncu_<KERNEL>_sass.csv.gz (per SASS instruction: stall
# samples, instructions executed), ncu_<KERNEL>_src.csv.gz (the same beside the
# CUDA lines; the build has -lineinfo) and the report ncu_<KERNEL>.ncu-rep;
# GRAFT_BENCH_GDN_TOKENS (default 32768) sets the shape: B x 2048 tokens, then B/4 x 8192;
# prints the instructions with the most stall samples. GRAFT_NCU_SKIP (default 2) launches of the
# kernel are skipped first (warm-up).
set -eu
K=${1:?usage: gdn_ncu_source.sh wy|state|out|bwd_v|bwd_state|bwd_local [BUILD] [OUTDIR]}
BUILD=${2:-build}
cd "$(dirname "$0")/../../.."
OUTDIR=${3:-$BUILD/gpu}
bin="$BUILD/gpu/bench_gdn"
[ -x "$bin" ] || { echo "gdn_ncu_source: $bin is missing (make gdn-gpu-build)" >&2; exit 1; }
command -v ncu >/dev/null 2>&1 || { echo "gdn_ncu_source: ncu is not on PATH" >&2; exit 1; }
mkdir -p "$OUTDIR"
rep=$(mktemp -d)/r
trap 'rm -rf "$(dirname "$rep")"' EXIT
GRAFT_BENCH_GDN_TOKENS=${GRAFT_BENCH_GDN_TOKENS:-32768} ncu --clock-control none -k "regex:gdn_${K}_kernel" \
    --launch-skip "${GRAFT_NCU_SKIP:-2}" --launch-count 1 --import-source yes \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
    --section SchedulerStats --section MemoryWorkloadAnalysis --section InstructionStats --section SourceCounters \
    -o "$rep" "$bin" >/dev/null 2>&1 || { echo "gdn_ncu_source: ncu failed for $K" >&2; exit 1; }
ncu -i "$rep.ncu-rep" --page details >"$OUTDIR/ncu_$K.txt" 2>&1
ncu -i "$rep.ncu-rep" --page source --print-source sass --csv >"$OUTDIR/ncu_${K}_sass.csv" 2>&1 || true
ncu -i "$rep.ncu-rep" --page source --print-source cuda,sass --csv >"$OUTDIR/ncu_${K}_src.csv" 2>&1 || true
gzip -f "$OUTDIR/ncu_${K}_sass.csv" "$OUTDIR/ncu_${K}_src.csv"
cp "$rep.ncu-rep" "$OUTDIR/ncu_$K.ncu-rep"
grep -E 'Duration|Achieved Occupancy|Registers Per|Shared Memory Configuration Size|Warp Cycles Per Issued|Issued Ipc|No Eligible|Compute \(SM\) Throughput|Memory Throughput' \
    "$OUTDIR/ncu_$K.txt" | head -n 20
# the 25 instructions with the most stall samples (column names from the CSV header)
python3 - "$OUTDIR/ncu_${K}_sass.csv.gz" <<'EOF'
import csv, gzip, sys
rows = list(csv.reader(gzip.open(sys.argv[1], "rt", errors="replace")))
hdr = next((i for i, r in enumerate(rows) if any("Source" == c for c in r)), None)
if hdr is None:
    print("no source table"); sys.exit(0)
h = rows[hdr]
def col(name):
    return next((i for i, c in enumerate(h) if c.startswith(name)), None)
src, smp, ins = col("Source"), col("Warp Stall Sampling (All"), col("Instructions Executed")
line = col("#") if col("#") is not None else 0
def num(r, i):
    try: return float(r[i].replace(",", "")) if i is not None and i < len(r) else 0.0
    except ValueError: return 0.0
body = [r for r in rows[hdr + 1:] if len(r) > max(x for x in (src, smp) if x is not None)]
tot = sum(num(r, smp) for r in body) or 1.0
for r in sorted(body, key=lambda r: -num(r, smp))[:25]:
    print(f"{100 * num(r, smp) / tot:5.1f}%  ins {num(r, ins):>12.0f}  {r[line]:>5}  {r[src].strip()[:110]}")
EOF
