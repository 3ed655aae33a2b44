#!/bin/sh
# Runs the GPU checks (make test-gpu): every BUILD/gpu/test_* program, each
# exiting 0 (pass), 77 (skipped: no GPU, or graft built without CUDA) or other
# (fail). Full output of each goes to LOGDIR/NAME.log (default BUILD/gpu/logs;
# GRAFT_GPU_LOGS overrides it, e.g. $OUT on the GPU machine); failing lines are
# shown here. Ends with "N passed, N failed, N skipped" (programs).
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/../.."
export GRAFT_SHARED="${GRAFT_SHARED:-$(cd .. && pwd)/shared}"
export GRAFT_ROOT="$PWD"
logs=${GRAFT_GPU_LOGS:-$BUILD/gpu/logs}
mkdir -p "$logs"
pass=0 fail=0 skip=0 failed=""
for t in "$BUILD"/gpu/test_*; do
    [ -x "$t" ] || continue
    name=$(basename "$t")
    "$t" >"$logs/$name.log" 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then
        pass=$((pass + 1)); printf 'PASS  %s (%s)\n' "$name" "$(grep -c '^PASS' "$logs/$name.log") checks"
    elif [ $rc -eq 77 ]; then
        skip=$((skip + 1)); printf 'SKIP  %s: %s\n' "$name" "$(tail -n 1 "$logs/$name.log")"
    else
        fail=$((fail + 1)); failed="$failed $name"
        printf 'FAIL  %s (exit %d; log %s)\n' "$name" "$rc" "$logs/$name.log"
        grep -E '^(FAIL|FATAL)' "$logs/$name.log" | head -n 40 | sed 's/^/    | /'
        tail -n 3 "$logs/$name.log" | sed 's/^/    | /'
    fi
done
[ -n "$failed" ] && printf '\nfailed:%s\n' "$failed"
printf '%d passed, %d failed, %d skipped\n' "$pass" "$fail" "$skip"
[ "$fail" -eq 0 ]
