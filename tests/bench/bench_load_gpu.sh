#!/bin/sh
# Loading a 1.5B teacher onto the GPU (issue 11's target: under 5 s from a
# warm page cache) and the host memory it holds meanwhile. No real teacher
# can be fetched on the GPU machine, so a Qwen2.5-1.5B-shaped folder of random
# bf16 weights is written once (tests/bench/synthetic_teacher.py, 3.1 GB, into
# GRAFT_LOAD_DIR, default /tmp/graft-qwen2.5-1.5b); bench_load then loads it
# twice per staging mode (the second from a warm page cache) on
# GRAFT_BENCH_DEVICE (default cuda). Run: make build/bench/bench_load, then
# sh tests/bench/bench_load_gpu.sh. Not part of make test (timing).
set -eu
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
SHARED=${GRAFT_SHARED:-$(cd .. && pwd)/shared}
DIR=${GRAFT_LOAD_DIR:-/tmp/graft-qwen2.5-1.5b}
[ -f "$DIR/model.safetensors" ] || python3 tests/bench/synthetic_teacher.py "$SHARED/configs/qwen2.5-1.5b.json" "$DIR"
cat "$DIR/model.safetensors" >/dev/null # warm the page cache
for i in 1 2; do
    GRAFT_BENCH_DEVICE=${GRAFT_BENCH_DEVICE:-cuda} GRAFT_BENCH_LOAD="$DIR" "$BUILD/bench/bench_load" | grep -F "$DIR"
done
