#!/bin/sh
# Runs every libFuzzer harness in BUILD/fuzz for SECONDS each, one after the
# other (they share the machine's cores with everything else), from the seeds
# in tests/fuzz/corpus/<harness>/ plus what earlier runs found (kept in
# BUILD/fuzz-corpus/<harness>/, never committed). A crash, leak, timeout
# (> 10 s for one input), out-of-memory (> 2 GB RSS or one allocation over it)
# or sanitizer report stops that harness and leaves the input in
# BUILD/fuzz-artifacts/<harness>/; the run goes on with the next harness.
# Ends with one line per harness: seconds, executions, findings; exits 1 when
# anything was found. FUZZ_ONLY="a b" limits the run to those harnesses.
#   sh tests/fuzz/run.sh BUILD SECONDS
set -u
BUILD=${1:-build-fuzz}
SECONDS_EACH=${2:-60}
cd "$(dirname "$0")/../.."
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 OMP_WAIT_POLICY=passive
# the harnesses write each input to a file; on tmpfs that costs no disk I/O
[ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
summary="$BUILD/fuzz-summary.txt"
: >"$summary"
found=0
for bin in "$BUILD"/fuzz/fuzz_*; do
    [ -x "$bin" ] || continue
    h=$(basename "$bin" | sed 's/^fuzz_//')
    if [ -n "${FUZZ_ONLY:-}" ]; then
        case " $FUZZ_ONLY " in *" $h "*) ;; *) continue ;; esac
    fi
    work="$BUILD/fuzz-corpus/$h" art="$BUILD/fuzz-artifacts/$h"
    log="$BUILD/fuzz-logs/$h.log"
    mkdir -p "$work" "$art" "$(dirname "$log")"
    echo "fuzz: $h for ${SECONDS_EACH}s" >&2
    start=$(date +%s)
    "$bin" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
        -print_final_stats=1 -artifact_prefix="$art/" "$work" "tests/fuzz/corpus/$h" >"$log" 2>&1
    rc=$?
    took=$(( $(date +%s) - start ))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    n_art=$(find "$art" -type f | wc -l)
    what="none"
    if [ "$rc" -ne 0 ] || [ "$n_art" -gt 0 ]; then
        found=1
        what="$(grep -m1 -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|SUMMARY:' "$log" | cut -c1-150)"
        what="exit $rc, $n_art input(s) in $art: ${what:-see $log}"
    fi
    printf '%-16s %5ss %10s execs  findings: %s\n' "$h" "$took" "${execs:-?}" "$what" | tee -a "$summary"
done
exit $found
