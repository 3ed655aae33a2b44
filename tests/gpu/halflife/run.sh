#!/bin/sh
# The Qwen2.5-Coder-1.5B part of docs/half-life.md (issue 35): students of the
# 1.5B teacher at 50 % uniform under random, align-only, taylor-only,
# taylor-calibrate, taylor-calibrate's best Stage 1 subset on SmolLM2-135M
# (decay,beta,gate) and taylor-calibrate with the decay from the distance
# without the first key (the per-head fix the flags point at, applied to
# every head), each converted on the GPU, then `graft halflife` on held-out
# text and `graft eval` of its perplexity; for taylor-calibrate also
# `graft halflife --fix` of its three worst too-short / too-long heads (their
# decay rate scaled so that the median meets the teacher distance, alone and
# then with Stage 2 of their layers) beside the control (the same Stage 2 with
# no change). Every --json output goes into
# $OUT/halflife-json.tar.gz (rewritten after each student, so a call cut short
# still brings back the students done), stderr and timings into
# $OUT/halflife.log; each student folder (7 GB of float32) is removed once
# measured.
#
# On the GPU machine, from the repository root, after `sh tests/gpu/device_run.sh
# build` (build/graft with CUDA) and `. .carry/env.sh`, with the teacher at
# $GRAFT_QWEN15 (default /tmp/ship/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf):
#   sh tests/gpu/halflife/run.sh              expected ~7 min on one H200 (six students:
#                                             convert ~30 s, halflife ~15 s, eval ~15 s each,
#                                             most of it writing and reading the 7 GB folder;
#                                             the fixes and the control ~40 s each); it stops
#                                             itself at 570 s (GRAFT_RUN_S), keeping what is done
# then, here: python3 tests/gpu/halflife/report.py DIR (DIR = the files brought back).
# GRAFT_RUN_DEVICE=cpu GRAFT_QWEN15=<stories260K.bin> GRAFT_HL_TEXT=<tinystories.txt>:
# the same commands on a small teacher (docs/half-life.md's CPU runs; also
# GRAFT_HL_STEPS=N Stage 2 steps, GRAFT_HL_BYTES=N bytes of held-out text,
# GRAFT_RUN_S=N seconds in all, GRAFT_HL_THREADS=N).
set -u
G=${GRAFT_BIN:-./build/graft}
TEACHER=${GRAFT_QWEN15:-/tmp/ship/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf}
TEXT=${GRAFT_HL_TEXT:-${GRAFT_SHARED:?. .carry/env.sh first}/data/gutenberg-60.txt}
OUT=${OUT:-build/gpu/out}
DEVICE=${GRAFT_RUN_DEVICE:-cuda}
RUN_S=${GRAFT_RUN_S:-570}
WORK=${GRAFT_HL_WORK:-/tmp/graft-halflife}
STEPS=${GRAFT_HL_STEPS:-300}
BYTES=${GRAFT_HL_BYTES:-200000}
THREADS=${GRAFT_HL_THREADS:+--threads $GRAFT_HL_THREADS}
FIX_STUDENT=${GRAFT_HL_FIX:-taylor-calibrate} # whose worst flagged heads get fixed (none: no fix)
mkdir -p "$OUT" "$WORK/json"
[ -x "$G" ] || { echo "halflife/run.sh: no $G (sh tests/gpu/device_run.sh build first)" >&2; exit 1; }
[ -f "$TEACHER" ] || { echo "halflife/run.sh: no teacher at $TEACHER" >&2; exit 1; }
start=$(date +%s)
left() { l=$((RUN_S - ($(date +%s) - start))); [ $l -lt 10 ] && l=10; echo $l; }

# held-out text for halflife and eval: 200 KB from the middle of the file (the
# calibration reads its start)
size=$(wc -c <"$TEXT")
tail -c $((size / 2)) "$TEXT" | head -c "$BYTES" >"$WORK/heldout.txt"

step() { # NAME, command...: stdout to json/NAME.json, stderr to $OUT/halflife.log
    name=$1; shift
    t0=$(date +%s.%N)
    echo "== $name: $*" >>"$OUT/halflife.log"
    timeout -s INT -k 20 "$(left)" "$@" --device "$DEVICE" $THREADS --json >"$WORK/json/$name.json" 2>>"$OUT/halflife.log"
    rc=$?
    awk -v n="$name" -v rc=$rc -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%s: exit %d, %.1f s\n", n, rc, b - a }' |
        tee -a "$OUT/halflife.log"
    [ $rc -eq 0 ] || tail -n 3 "$OUT/halflife.log"
    return $rc
}

status=0
student() { # NAME, convert options...
    who=$1; shift
    dir=$WORK/$who
    rm -rf "$dir"
    if step "convert-$who" "$G" convert "$TEACHER" --keep 0.5 --strategy uniform --calib "$TEXT" --ctx 256 \
        --calib-seqs 4 --steps "$STEPS" --out "$dir" "$@"; then
        step "halflife-$who" "$G" halflife "$dir" --text "$WORK/heldout.txt" --ctx 256 --seqs 8 || status=1
        step "eval-$who" "$G" eval "$dir" --text "$WORK/heldout.txt" --ctx 256 || status=1
        # the JSON printed by convert carries report.json (teacher statistics included)
        if [ "$who" = "$FIX_STUDENT" ]; then
            # the three worst heads flagged too short / too long: their decay rate scaled so
            # that the median meets the teacher distance, alone (fix0) and followed by Stage 2
            # of their layers (fix); the control: the same Stage 2 with no change (fixctl)
            worst=$(python3 -c "
import json, sys
j = json.load(open(sys.argv[1]))
hs = sorted((h for h in j['heads'] if set(h['flags']) & {'too_short', 'too_long'}), key=lambda h: -h['severity'])[:3]
print(' '.join(f\"{h['layer']}:{h['head']}\" for h in hs))" "$WORK/json/halflife-$who.json" 2>/dev/null)
            if [ -n "$worst" ]; then
                fixargs= keepargs=
                for w in $worst; do fixargs="$fixargs --fix $w=median"; keepargs="$keepargs --fix $w=keep"; done
                for run in "fix0:$fixargs --steps 0" "fix:$fixargs" "fixctl:$keepargs"; do
                    step "${run%%:*}-$who" "$G" halflife "$dir" --text "$WORK/heldout.txt" --ctx 256 --seqs 8 ${run#*:} \
                        --out "$WORK/fixed" || status=1
                    rm -rf "$WORK/fixed"
                done
            fi
        fi
    else
        status=1
    fi
    rm -rf "$dir"
    tar -C "$WORK/json" -czf "$OUT/halflife-json.tar.gz" .
}

nvidia-smi -L 2>/dev/null | tee -a "$OUT/halflife.log"
student random --init random
student align-only --init align-only
student taylor-only --init taylor-only
student taylor-calibrate --init taylor-calibrate
student best-subset --init taylor-calibrate --stage1 decay,beta,gate
student no-sink --init taylor-calibrate --distance no-sink
echo "done in $(( $(date +%s) - start )) s, status $status" | tee -a "$OUT/halflife.log"
rm -rf "$WORK"
exit $status
