#!/bin/sh
# The GPU checks (make test-gpu), in one run:
#   1. every BUILD/gpu/test_* program (tests/gpu/*.c, tests/gpu/model/*.c), and
#      test_cuda_gdn again with each slab height of the GDN sequential passes
#      forced (test_cuda_gdn --slab N);
#   2. unit tests of the engine whose tests take the default backend, run on
#      the device in float32 (GRAFT_TEST_DEVICE, GRAFT_CUDA_FP32=1): the
#      transformer's prefill + decode, one training step against PyTorch,
#      finite-difference gradients, Stage 1 against PyTorch (UNIT_ON_DEVICE);
#   3. the command-line checks tests/gpu/cli/*.sh (graft on the device against
#      graft on the CPU).
# Each exits 0 (pass), 77 (skipped: no GPU, or graft built without CUDA) or
# other (fail). Full output of each goes to LOGDIR/NAME.log (default
# BUILD/gpu/logs; GRAFT_GPU_LOGS overrides it); failing lines are shown here.
# Ends with "N passed, N failed, N skipped" (programs and scripts).
# GRAFT_GPU_TEST_DEVICE=cpu runs what supports it with a CPU backend in the
# GPU's place: a check of the checks where there is no GPU, nothing more.
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/../.."
export GRAFT_SHARED="${GRAFT_SHARED:-$(cd .. && pwd)/shared}"
export GRAFT_ROOT="$PWD"
export GRAFT_BIN="${GRAFT_BIN:-$PWD/$BUILD/graft}"
DEV=${GRAFT_GPU_TEST_DEVICE:-cuda}
UNIT_ON_DEVICE=${UNIT_ON_DEVICE:-test_transformer test_train_ref test_train_grad test_calibrate}
logs=${GRAFT_GPU_LOGS:-$BUILD/gpu/logs}
mkdir -p "$logs"
pass=0 fail=0 skip=0 failed=""

# one NAME CMD...: runs it, logs it, prints one line (and the failing lines)
one() {
    name=$1; shift
    t0=$(date +%s)
    # a hang must not take the whole GPU call: each program gets GRAFT_GPU_TIMEOUT seconds
    if command -v timeout >/dev/null 2>&1; then
        timeout -k 10 "${GRAFT_GPU_TIMEOUT:-400}" "$@" >"$logs/$name.log" 2>&1
    else
        "$@" >"$logs/$name.log" 2>&1
    fi
    rc=$?
    [ $rc -eq 124 ] && echo "TIMEOUT after ${GRAFT_GPU_TIMEOUT:-400} s" >>"$logs/$name.log"
    secs=$(( $(date +%s) - t0 ))
    checks=$(grep -cE '^PASS|^\[       OK \]' "$logs/$name.log")
    if [ $rc -eq 0 ]; then
        pass=$((pass + 1)); printf 'PASS  %s (%s checks, %d s)\n' "$name" "$checks" "$secs"
    elif [ $rc -eq 77 ]; then
        skip=$((skip + 1)); printf 'SKIP  %s: %s\n' "$name" "$(tail -n 1 "$logs/$name.log")"
    else
        fail=$((fail + 1)); failed="$failed $name"
        printf 'FAIL  %s (exit %d, %d s; log %s)\n' "$name" "$rc" "$secs" "$logs/$name.log"
        grep -E '^(FAIL|FATAL)|^\[  FAILED|ERROR' "$logs/$name.log" | head -n 40 | sed 's/^/    | /'
        tail -n 3 "$logs/$name.log" | sed 's/^/    | /'
    fi
}

for t in "$BUILD"/gpu/test_*; do
    [ -x "$t" ] || continue
    one "$(basename "$t")" "$t"
done
# the GDN sequential passes at every shape with each slab height (16, 32 rows)
# forced (read when the backend opens: one run each; gdn_slab); the warp count
# follows the slab (4 for 16 rows, 8 for 32: gdn_state_warps)
if [ -x "$BUILD/gpu/test_cuda_gdn" ]; then
    for slab in 16 32; do
        one test_cuda_gdn_slab_$slab "$BUILD/gpu/test_cuda_gdn" --slab $slab
    done
fi
for u in $UNIT_ON_DEVICE; do
    [ -x "$BUILD/tests/$u" ] || { printf 'SKIP  unit-on-device/%s: not built (make tests)\n' "$u"; skip=$((skip + 1)); continue; }
    one "unit-on-device_$u" env GRAFT_TEST_DEVICE="$DEV" GRAFT_CUDA_FP32=1 "$BUILD/tests/$u"
done
for s in tests/gpu/cli/*.sh; do
    case $s in */lib.sh) continue ;; esac
    one "cli_$(basename "$s" .sh)" sh "$s"
done
[ -n "$failed" ] && printf '\nfailed:%s\n' "$failed"
printf '%d passed, %d failed, %d skipped\n' "$pass" "$fail" "$skip"
[ "$fail" -eq 0 ]
