#!/bin/sh
# Peak resident memory of one training step (kl phase, every group trained,
# B = 1) at T = 512, 1024, 2048, 4096, and the least-squares slope in MiB per
# 1000 tokens: training memory must grow linearly in T (no T x T buffer).
#   stories260K (real weights, GDN layers 2 and 4): always
#   the Qwen2.5-0.5B shape (random weights, odd layers GDN): with
#   GRAFT_BENCH_MEMORY_QWEN=1 (about 12-18 GB at T = 4096 for all 24 layers;
#   GRAFT_BENCH_QWEN_LAYERS=N cuts it)
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/../.."
B="$BUILD/bench/bench_train"
[ -x "$B" ] || { echo "bench_train_memory: $B not built"; exit 1; }
series() { # model
    out=$(for T in 512 1024 2048 4096; do "$B" rss "$1" "$T" 1 || exit 1; done) || { echo "$out"; return 1; }
    echo "$out"
    echo "$out" | awk '{for (i = 1; i <= NF; i++) { if ($i == "T") t = $(i + 1); if ($i == "peak") m = $(i + 1) }
        n++; sx += t; sy += m; sxx += t * t; sxy += t * m }
        END { s = (n * sxy - sx * sy) / (n * sxx - sx * sx); b = (sy - s * sx) / n;
              r = 0; printf "slope %.1f MiB per 1000 tokens, intercept %.0f MiB (least squares over %d points)\n", s * 1000, b, n }'
}
series stories
if [ "${GRAFT_BENCH_MEMORY_QWEN:-0}" = 1 ]; then series qwen; else echo "qwen shape: set GRAFT_BENCH_MEMORY_QWEN=1"; fi
