#!/bin/sh
# Runs every benchmark: the binaries build/bench/bench_* and the scripts
# tests/bench/bench_*.sh (make bench). Timings live here, never in pass/fail tests.
# Usage: sh tests/bench/run.sh [BUILD]
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/../.."
export GRAFT_SHARED="${GRAFT_SHARED:-$(cd .. && pwd)/shared}"
export GRAFT_ROOT="$PWD"
export GRAFT_BIN="${GRAFT_BIN:-$PWD/$BUILD/graft}"
status=0
for b in "$BUILD"/bench/bench_*; do
    [ -x "$b" ] || continue
    printf '== %s\n' "$(basename "$b")"
    "$b" || status=1
    echo
done
for b in tests/bench/bench_*.sh; do
    [ -f "$b" ] || continue
    printf '== %s\n' "$(basename "$b" .sh)"
    sh "$b" || status=1
    echo
done
exit $status
