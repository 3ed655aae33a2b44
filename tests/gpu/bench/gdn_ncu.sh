#!/bin/sh
# Per-kernel times of the CUDA GDN core (forward and backward) at the bench's
# shape (B 16 x T 2048, 12 heads x 128, bf16): Nsight Compute on bench_gdn,
# the kernel duration only (one replay pass each), the clocks left alone.
# Needs ncu (the GPU machine has it) and build/gpu/bench_gdn (make gdn-gpu-build).
#   sh tests/gpu/bench/gdn_ncu.sh [BUILD]    -> one line per kernel launch, then the mean per kernel
# GRAFT_NCU_SKIP (default 0) and GRAFT_NCU_COUNT (default 54) pick the launches
# of the core kernels (GRAFT_BENCH_GDN_TOKENS, default 32768, sets B: B x 2048 tokens first); under
# ncu bench_time runs each figure 9 times (reps = 1),
# so the first 54 are the T 2048 forward figure (27: wy, state, out) and the
# backward as graft runs it, the WY products kept (27: bwd_v, bwd_state, bwd_local);
# the layer forward's core follows (27), then the backward that recomputes the WY
# products (36, the wy kernel again): GRAFT_NCU_SKIP=81 GRAFT_NCU_COUNT=36.
# A kernel's template arguments stay in its name (<T, kFix, ...>).
set -eu
BUILD=${1:-build}
cd "$(dirname "$0")/../../.."
bin="$BUILD/gpu/bench_gdn"
[ -x "$bin" ] || { echo "gdn_ncu: $bin is missing (make gdn-gpu-build)" >&2; exit 1; }
command -v ncu >/dev/null 2>&1 || { echo "gdn_ncu: ncu is not on PATH" >&2; exit 1; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
GRAFT_BENCH_GDN_TOKENS=${GRAFT_BENCH_GDN_TOKENS:-32768} ncu --clock-control none --kernel-name regex:'gdn_(wy|state|out|bwd_v|bwd_state|bwd_local)_kernel' \
    --launch-skip "${GRAFT_NCU_SKIP:-0}" --launch-count "${GRAFT_NCU_COUNT:-54}" \
    --metrics gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed \
    --csv "$bin" >"$out" 2>/dev/null || { echo "gdn_ncu: ncu failed" >&2; exit 1; }
# CSV: a header row names the columns ("Kernel Name", "Metric Name", "Metric Unit", "Metric Value")
awk -F'","' '
/"Kernel Name"/ { for (i = 1; i <= NF; i++) { h = $i; gsub(/"/, "", h); col[h] = i } next }
col["Kernel Name"] && /gdn_/ {
    name = $col["Kernel Name"]; sub(/^void /, "", name); sub(/\(.*/, "", name); gsub(/__nv_bfloat16/, "bf16", name); gsub(/ /, "", name)
    metric = $col["Metric Name"]; unit = $col["Metric Unit"]; val = $col["Metric Value"]; gsub(/[",]/, "", val)
    if (metric == "gpu__time_duration.sum") {
        t = val; if (unit == "nsecond" || unit == "ns") t /= 1000; if (unit == "msecond" || unit == "ms") t *= 1000
        printf "%-40s %10.1f us\n", name, t; sum[name] += t; n[name]++
    } else printf "%-40s %10s %s\n", name, val, metric
}
END { print "mean per kernel:"; for (k in sum) printf "%-40s %10.1f us (%d launches)\n", k, sum[k] / n[k], n[k] }' "$out"
