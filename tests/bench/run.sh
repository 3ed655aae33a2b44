#!/bin/sh
# Runs every benchmark binary in BUILD/bench (make bench). Timings live here,
# never in pass/fail tests.
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/../.."
export GRAFT_BIN="${GRAFT_BIN:-$PWD/$BUILD/graft}"
export GRAFT_SHARED="${GRAFT_SHARED:-$(cd .. && pwd)/shared}"
export GRAFT_ROOT="$PWD"
status=0
for b in "$BUILD"/bench/bench_*; do
    [ -x "$b" ] || continue
    printf '== %s\n' "$(basename "$b")"
    "$b" || status=1
done
for b in tests/bench/bench_*.sh; do
    [ -f "$b" ] || continue
    printf '== %s\n' "$(basename "$b" .sh)"
    sh "$b" || status=1
done
exit $status
