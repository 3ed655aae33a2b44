#!/bin/sh
# Runs every benchmark binary build/bench/bench_* (timings live here, never in tests).
# Usage: sh tests/bench/run.sh [BUILD]
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/../.."
export GRAFT_SHARED="${GRAFT_SHARED:-$(cd .. && pwd)/shared}"
export GRAFT_ROOT="$PWD"
status=0
for b in "$BUILD"/bench/bench_*; do
    [ -x "$b" ] || continue
    printf '== %s\n' "$(basename "$b")"
    "$b" || status=1
    echo
done
exit $status
