#!/bin/sh
# Runs the tests: the cmocka unit binaries in BUILD/tests, then the
# integration scripts in tests/integration; `tests/run.sh BUILD DIR` runs the
# scripts of DIR alone (make test-interop: tests/interop). Ends with the line
# "N passed, N failed, N skipped" counting cmocka test cases (one line per
# binary above it) and scripts.
# A test script exits 0 (pass), 77 (skipped, with its reason on stdout) or other (fail).
# The tests are independent (each its own temp folders, servers on free ports,
# its own tmux socket), so up to GRAFT_TEST_JOBS run at once (default: the
# CPU count; 1 runs them one after another). Each one's output is kept apart
# and its report printed in the order above, as soon as it and every test
# before it have ended. GRAFT_TEST_TIMES=FILE appends "user sys wall name"
# (CPU and wall seconds, /usr/bin/time) per test to FILE.
set -u
BUILD=${1:-build}
ONLY=${2:-}
cd "$(dirname "$0")/.."
export GRAFT_BIN="${GRAFT_BIN:-$PWD/$BUILD/graft}"
export GRAFT_SHARED="${GRAFT_SHARED:-$(cd .. && pwd)/shared}"
export GRAFT_ROOT="$PWD"
jobs=${GRAFT_TEST_JOBS:-$(nproc 2>/dev/null || echo 2)}
# Tests run side by side, each with OpenMP threads for every core: a thread that
# waits at a barrier spins by default and takes the core its peers (or the other
# test) need. Waiting threads sleep instead (the same threads run in parallel, so
# no check changes): on a 2-core machine test_train_grad went 12.2 -> 0.65 s and
# test_train_loop 10.3 -> 0.2 s wall inside make test (session 14).
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
# Where OpenBLAS fell back to kernels without AVX, graft re-executes itself once to force better
# ones (src/cli/load_env.c), ~90 ms a command on session 19's machine, and the tests start graft
# hundreds of times: the runner exports the kernels graft chose, once, so graft starts without
# the re-exec and the unit binaries run the same kernels (integration/blas_kernels.sh unsets it
# to check the re-exec itself).
if [ -z "${OPENBLAS_CORETYPE+x}" ] && [ -x "$GRAFT_BIN" ]; then
    core=$("$GRAFT_BIN" --version 2>/dev/null | sed -n 's/.*graft set OPENBLAS_CORETYPE=\([A-Za-z0-9_]*\)).*/\1/p')
    [ -n "$core" ] && export OPENBLAS_CORETYPE="$core"
fi
pass=0 fail=0 skip=0 failed=""
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# the list, one "name command" a line, in report order
n=0
add() { n=$((n + 1)); printf '%s %s\n' "$1" "$2" >>"$log/list"; }
: >"$log/list"
if [ -z "$ONLY" ]; then
    for t in "$BUILD"/tests/test_*; do
        [ -x "$t" ] && [ -f "$t" ] && add "unit/$(basename "$t")" "$t"
    done
    dir=tests/integration
else
    dir=${ONLY%/}
fi
for t in "$dir"/*.sh; do
    [ -f "$t" ] && add "$(basename "$dir")/$(basename "$t" .sh)" "sh $t"
done

# the workers: test k writes k.out, then k.rc (renamed into place: the reporter never sees half of it)
timer=
[ -n "${GRAFT_TEST_TIMES:-}" ] && [ -x /usr/bin/time ] && timer=1
run_k() { # k
    line=$(sed -n "${1}p" "$log/list")
    name=${line%% *} cmd=${line#* }
    if [ -n "$timer" ]; then
        # shellcheck disable=SC2086
        /usr/bin/time -o "$log/$1.time" -f "%U %S %e $name" $cmd >"$log/$1.out" 2>&1
        rc=$?
        tail -n 1 "$log/$1.time" >>"$GRAFT_TEST_TIMES" # (after "Command exited with non-zero status N")
    else
        # shellcheck disable=SC2086
        $cmd >"$log/$1.out" 2>&1
        rc=$?
    fi
    echo "$rc" >"$log/$1.rc.tmp" && mv "$log/$1.rc.tmp" "$log/$1.rc"
}
# $jobs workers walk the list in order; each takes the next test nobody has claimed (mkdir is atomic)
worker() {
    k=1
    while [ $k -le "$n" ]; do
        mkdir "$log/claim.$k" 2>/dev/null && run_k $k
        k=$((k + 1))
    done
}
j=0
while [ $j -lt "$jobs" ] && [ $j -lt "$n" ]; do
    worker &
    j=$((j + 1))
done

# count "[  PASSED  ] 3 test(s)." style lines of cmocka's summary
cmocka_count() { sed -n "s/^\[  $1 *\] \([0-9][0-9]*\) test.*/\1/p" "$out" | head -n 1; }

report() { # name rc
    name=$1 rc=$2
    np=1 nf=1 ns=0
    [ "$rc" -ne 0 ] && np=0 # a failing script is one failure, not also a pass
    case $name in unit/*)
        np=$(cmocka_count PASSED); nf=$(cmocka_count FAILED); ns=$(cmocka_count SKIPPED)
        np=${np:-0}; nf=${nf:-0}; ns=${ns:-0}
        [ "$rc" -ne 0 ] && [ "$nf" -eq 0 ] && nf=1   # crashed before its summary
        ;;
    esac
    if [ "$rc" -eq 0 ]; then
        pass=$((pass + np)); skip=$((skip + ns)); printf 'PASS  %s (%s)\n' "$name" "$np"
        [ "$ns" -gt 0 ] && grep -E '^\[  SKIPPED|skip' "$out" | sed 's/^/    | /' | head -n 5
    elif [ "$rc" -eq 77 ]; then
        skip=$((skip + 1)); printf 'SKIP  %s: %s\n' "$name" "$(tail -n 1 "$out")"
    else
        pass=$((pass + np)); fail=$((fail + nf)); skip=$((skip + ns)); failed="$failed $name"
        printf 'FAIL  %s (exit %d)\n' "$name" "$rc"
        sed 's/^/    | /' "$out" | tail -n 60
    fi
}

k=1
while [ $k -le "$n" ]; do
    while [ ! -f "$log/$k.rc" ]; do sleep 0.1; done
    line=$(sed -n "${k}p" "$log/list")
    out=$log/$k.out
    report "${line%% *}" "$(cat "$log/$k.rc")"
    k=$((k + 1))
done
wait

[ -n "$failed" ] && printf '\nfailed:%s\n' "$failed"
printf '%d passed, %d failed, %d skipped\n' "$pass" "$fail" "$skip"
[ "$fail" -eq 0 ]
