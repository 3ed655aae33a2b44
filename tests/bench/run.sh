#!/bin/sh
# Runs every CPU benchmark binary in BUILD/bench. Timings are printed, never judged.
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/../.."
export GRAFT_SHARED="${GRAFT_SHARED:-$(cd .. && pwd)/shared}"
export GRAFT_ROOT="$PWD"
for b in "$BUILD"/bench/bench_*; do
    [ -x "$b" ] || continue
    "$b" || echo "$(basename "$b"): exited with $?"
done
