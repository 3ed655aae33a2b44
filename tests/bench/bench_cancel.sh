#!/bin/sh
# How fast every workbench job stops after c, on the real SmolLM2-135M
# (scripts/fetch-teachers.sh smollm2): each job is started, left to run a few
# seconds, cancelled, and the workbench's own measurement (job_cancel to the
# job's end, logged as "stopped X s after c") is collected. Goal: < 1 s each.
# GRAFT_BENCH_ONLY=stage1: only cancels during Stage 1 (4 Calibrate), six of them.
# Skips (exit 0, says so) when SmolLM2 is not cached.
set -u
cd "$(dirname "$0")/../.."
GRAFT_BIN=${GRAFT_BIN:-$PWD/build/graft}
SHARED=${GRAFT_SHARED:-$(cd .. && pwd)/shared}
SMOL=${GRAFT_TEACHERS:-${XDG_CACHE_HOME:-$HOME/.cache}/graft/teachers}/SmolLM2-135M-Instruct.Q4_1.gguf
TEXT=$SHARED/data/tinystories.txt
[ -r "$SMOL" ] && [ -r "$TEXT" ] || { echo "bench_cancel: skipped (SmolLM2 not cached: sh scripts/fetch-teachers.sh smollm2)"; exit 0; }
. tests/integration/lib/tui.sh
tui_setup
export XDG_DATA_HOME="$TMP/data"
tui_start c 120 40 TERM=xterm-256color LANG=C.UTF-8 XDG_DATA_HOME="$XDG_DATA_HOME" -- "'$SMOL'" --text "'$TEXT'"
tui_wait c "30 layers" 600 >/dev/null || { echo "bench_cancel: SmolLM2 did not load"; exit 1; }
idle() {
    i=0
    while tui_screen c | grep -qF "●" && [ $i -lt 3000 ]; do sleep 0.1; i=$((i + 1)); done
}
idle
# one job: NAME (as logged), SECONDS it runs before c, then the keys that start it
one() {
    name=$1 run=$2
    shift 2
    tui_keys c "$@"
    tui_wait c "● $name" 100 >/dev/null || { echo "$name: did not start"; return; }
    sleep "$run"
    phase=$(tui_screen c | grep -F "● $name" | sed 's/.*%  //' | cut -c1-40)
    tui_keys c c
    idle
    tui_keys c 8
    tui_wait c "$name: " 20 >/dev/null
    sleep 0.3
    last=$(tui_screen c | grep -E " $name: (done|error|cancelled)" | tail -n 1)
    lat=$(printf '%s\n' "$last" | sed -n 's/.*(stopped \([0-9.]*\) s after c).*/\1/p')
    if [ -z "$lat" ]; then
        printf '%-16s not cancelled: %s\n' "$name" "$last"
        [ -n "${GRAFT_BENCH_DEBUG:-}" ] && tui_screen c
    else
        printf '%-16s stopped %5s s after c   (cancelled during: %s)\n' "$name" "$lat" "$phase"
    fi
}
if [ "${GRAFT_BENCH_ONLY:-}" = stage1 ]; then
    # only cancels inside Stage 1 (4 Calibrate), at several points of a layer
    tui_keys c 8
    tui_wait c "stats: done" 600 >/dev/null || { echo "bench_cancel: the statistics did not finish"; exit 1; }
    tui_keys c 4 " "               # the teacher pass and one layer: the capture is kept from now on
    tui_wait c "1 of 15 converted layers calibrated" 600 >/dev/null || { echo "bench_cancel: Stage 1 did not run"; exit 1; }
    idle
    for run in 0.3 0.55 0.8 1.05 1.3 1.55; do one calibrate $run 4 Enter; done
    tui_keys c q
    sleep 0.3
    tui_keys c y
    echo "(machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"
    exit 0
fi
one stats 4 3 Enter
one select 4 2 s Enter         # ar
one select 20 2 s Enter        # ga-s2, in Stage 2 of its 30 layers
tui_keys c 2 S S
one calibrate 4 4 Enter        # the teacher pass
tui_keys c 4 " "               # one layer, to the end: the capture is kept from now on
idle
one calibrate 1 4 Enter        # Stage 1 of the other layers
one align 8 5 Enter            # Stage 2 steps
one evaluate 4 7 Enter         # the teacher pass
one evaluate 40 7 Enter        # Stage 2 or the perplexity passes
one ablate 6 7 a
one race 6 6 Enter             # building the students
one load 0.5 1 Enter           # reload: most of it is reading the GGUF file
tui_keys c q
sleep 0.3
tui_keys c y
echo "(machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"
