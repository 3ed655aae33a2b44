#!/bin/sh
# Runs every test: the cmocka unit binaries in BUILD/tests, then the
# integration scripts in tests/integration. Ends with the line
# "N passed, N failed, N skipped" counting cmocka test cases (one line per
# binary above it) and integration scripts.
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

# count "[  PASSED  ] 3 test(s)." style lines of cmocka's summary
cmocka_count() { sed -n "s/^\[  $1 *\] \([0-9][0-9]*\) test.*/\1/p" "$log/out" | head -n 1; }

run_one() { # name, command...
    name=$1; shift
    "$@" >"$log/out" 2>&1
    rc=$?
    np=1 nf=1 ns=0
    case $name in unit/*)
        np=$(cmocka_count PASSED); nf=$(cmocka_count FAILED); ns=$(cmocka_count SKIPPED)
        np=${np:-0}; nf=${nf:-0}; ns=${ns:-0}
        [ $rc -ne 0 ] && [ "$nf" -eq 0 ] && nf=1   # crashed before its summary
        ;;
    esac
    if [ $rc -eq 0 ]; then
        pass=$((pass + np)); skip=$((skip + ns)); printf 'PASS  %s (%s)\n' "$name" "$np"
        [ "$ns" -gt 0 ] && grep -E '^\[  SKIPPED|^\[  SKIPPED|skip' "$log/out" | sed 's/^/    | /' | head -n 5
    elif [ $rc -eq 77 ]; then
        skip=$((skip + 1)); printf 'SKIP  %s: %s\n' "$name" "$(tail -n 1 "$log/out")"
    else
        pass=$((pass + np)); fail=$((fail + nf)); skip=$((skip + ns)); failed="$failed $name"
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
