#!/bin/sh
# Runs every test: the cmocka unit binaries in BUILD/tests, then the
# integration scripts in tests/integration. Ends with the line
# "N passed, N failed, N skipped" counting test programs and scripts.
# A test script exits 0 (pass), 77 (skipped, with its reason on stdout) or other (fail).
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/.."
export GRAFT_BIN="${GRAFT_BIN:-$PWD/$BUILD/graft}"
export GRAFT_SHARED="${GRAFT_SHARED:-$(cd .. && pwd)/shared}"
export GRAFT_ROOT="$PWD"
pass=0 fail=0 skip=0 failed=""
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

run_one() { # name, command...
    name=$1; shift
    "$@" >"$log/out" 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then
        pass=$((pass + 1)); printf 'PASS  %s\n' "$name"
    elif [ $rc -eq 77 ]; then
        skip=$((skip + 1)); printf 'SKIP  %s: %s\n' "$name" "$(tail -n 1 "$log/out")"
    else
        fail=$((fail + 1)); failed="$failed $name"
        printf 'FAIL  %s (exit %d)\n' "$name" "$rc"
        sed 's/^/    | /' "$log/out" | tail -n 60
    fi
}

for t in "$BUILD"/tests/test_*; do
    [ -x "$t" ] || continue
    run_one "unit/$(basename "$t")" "$t"
done
for t in tests/integration/*.sh; do
    [ -f "$t" ] || continue
    run_one "integration/$(basename "$t" .sh)" sh "$t"
done

[ -n "$failed" ] && printf '\nfailed:%s\n' "$failed"
printf '%d passed, %d failed, %d skipped\n' "$pass" "$fail" "$skip"
[ "$fail" -eq 0 ]
