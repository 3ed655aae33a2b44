# Shared by the GPU command-line checks (tests/gpu/cli/*.sh, run by
# tests/gpu/run.sh): graft commands on the CUDA backend against the same
# commands on the CPU backend, each comparison one PASS / FAIL line with its
# tolerance. Exit 0 (all passed), 1 (a check failed) or 77 (no GPU here).
#   GRAFT_GPU_TEST_DEVICE=cpu   the scripts themselves checked without a GPU:
#                               a 2-thread CPU backend in the GPU's place
#   FP32=1 (a shell variable)   on_dev runs graft with GRAFT_CUDA_FP32=1: the
#                               CUDA backend in float32, for the tight comparisons
set -u
G=${GRAFT_BIN:?GRAFT_BIN not set}
SHARED=${GRAFT_SHARED:-}
STORIES=$SHARED/models/tinyllamas/stories260K/stories260K.bin
TS=$SHARED/data/tinystories.txt
DEV=${GRAFT_GPU_TEST_DEVICE:-cuda}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failures=0

skip() { echo "SKIP: $*"; exit 77; }
[ -f "$STORIES" ] && [ -f "$TS" ] || skip "stories260K or tinystories.txt not found under \$GRAFT_SHARED ($SHARED)"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
"$G" inspect "$STORIES" --device "$DEV" >/dev/null 2>"$TMP/dev.err" || skip "no CUDA backend here: $(cat "$TMP/dev.err")"
# the reference: the CPU backend; the device: its threads fixed when it is a CPU stand-in
case $DEV in cpu*) DEVT="--threads 2"; CPUT="--threads 1" ;; *) DEVT=""; CPUT="" ;; esac

# on_dev CMD ARGS: graft on the device (float32 storage when FP32=1); on_cpu: on the CPU
FP32=0
on_dev() { GRAFT_CUDA_FP32=$FP32 "$G" "$@" --device "$DEV" $DEVT; }
on_cpu() { "$G" "$@" --device cpu $CPUT; }

# result OK TEXT: one line
result() {
    if [ "$1" = 1 ]; then echo "PASS  $2"; else echo "FAIL  $2"; failures=$((failures + 1)); fi
}
# pycheck TEXT PYTHON-SNIPPET ARGS...: the snippet prints "1 detail" or "0 detail"
pycheck() {
    what=$1; shift
    out=$(python3 -c "$@" 2>&1) || out="0 python: $(echo "$out" | tail -n 1)"
    result "${out%% *}" "$what: ${out#* }"
}
# run TEXT CMD...: a command that must succeed (FAIL with its stderr otherwise); 0 / 1
run() {
    what=$1; shift
    rc=0
    "$@" >"$TMP/run.out" 2>"$TMP/run.err" || rc=$?
    [ $rc -eq 0 ] && return 0
    result 0 "$what: exit $rc ($(tail -n 2 "$TMP/run.err" | tr '\n' ' '))"
    return 1
}
finish() {
    echo "$failures failed"
    [ "$failures" -eq 0 ]
}
