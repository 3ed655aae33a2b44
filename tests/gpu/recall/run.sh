#!/bin/sh
# Long-context recall on one GPU (issue 34): the Qwen2.5-Coder-1.5B teacher and
# any student folders given as arguments, at 1k-32k tokens, then the
# transformers-generate reference on the teacher's own prompts (throughput
# beside graft's, same GPU, same prompts, same greedy answers budget).
#
# On the GPU machine, from the repository root, after a CUDA build
# (sh tests/gpu/device_run.sh build, or make) and with the teacher shipped:
#   OUT=... sh tests/gpu/recall/run.sh [STUDENT_DIR ...]
#   OUT=... sh tests/gpu/recall/run.sh convert     the teacher's 50 % students (uniform; RECALL_INITS,
#                                                  default random,align-only,taylor-calibrate) into
#                                                  $RECALL_STUDENTS/<init> (default /tmp/recall-students),
#                                                  calibrated on gutenberg-60.txt; folders already there are kept
# Writes into $OUT: recall-teacher.json, recall-<student>.json (graft recall
# --json), recall-<name>.dump.jsonl.gz (every prompt, answer and output),
# recall-hf.json (the reference), recall.log (stderr of everything).
# Fits one 10-minute call with the defaults (RUN_S=540 seconds in all): each
# step gets what is left, and a step still running then is stopped by SIGINT
# (graft recall cancels, exits non-zero; the step's JSON is then missing and
# recall.log says so). Knobs: GRAFT_TEACHER_1B5 (the GGUF), RECALL_LENGTHS,
# RECALL_TASKS, RECALL_DEPTHS, RECALL_SAMPLES, RECALL_HF_TASK (the reference's
# task; "none" skips it), RECALL_TEACHER=0 (students only: a second call),
# RUN_S, GRAFT_RUN_DEVICE (cpu: a dry run on a small teacher).
# Expected on one H200 (teacher forward ~120-160k tok/s, docs/cuda.md): the
# teacher's 54 cells (1.1M prompt tokens) in about 2 minutes with its load,
# each student about as long, the reference 1-2 minutes with its GGUF load:
# the teacher, the reference and one or two students in one call; more
# students in a second call with RECALL_TEACHER=0 RECALL_HF_TASK=none.
set -u
G=${GRAFT_BIN:-./build/graft}
TEACHER=${GRAFT_TEACHER_1B5:-/tmp/ship/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf}
OUT=${OUT:-build/gpu/out}
LENGTHS=${RECALL_LENGTHS:-1k,2k,4k,8k,16k,32k}
TASKS=${RECALL_TASKS:-niah-number,multikey,vt}
DEPTHS=${RECALL_DEPTHS:-0,50,100}
SAMPLES=${RECALL_SAMPLES:-2}
HF_TASK=${RECALL_HF_TASK:-niah-number}
RUN_S=${RUN_S:-540}
DEVICE=${GRAFT_RUN_DEVICE:-cuda}
mkdir -p "$OUT"
LOG=$OUT/recall.log
[ -x "$G" ] || { echo "recall run.sh: no $G (build first)" | tee -a "$LOG" >&2; exit 1; }
[ -f "$TEACHER" ] || { echo "recall run.sh: no teacher at $TEACHER" | tee -a "$LOG" >&2; exit 1; }
start=$(date +%s)
left() { l=$((RUN_S - ($(date +%s) - start))); [ $l -lt 10 ] && l=10; echo $l; }
nvidia-smi -L >>"$LOG" 2>&1

if [ "${1:-}" = convert ]; then
    SD=${RECALL_STUDENTS:-/tmp/recall-students}
    CALIB=${GRAFT_SHARED:?. .carry/env.sh first}/data/gutenberg-60.txt
    mkdir -p "$SD"
    for init in $(echo "${RECALL_INITS:-random,align-only,taylor-calibrate}" | tr , ' '); do
        [ -f "$SD/$init/config.json" ] && { echo "$init: kept $SD/$init" | tee -a "$LOG"; continue; }
        t0=$(date +%s)
        echo "== convert $init" >>"$LOG"
        timeout -s INT -k 20 "$(left)" "$G" convert "$TEACHER" --keep 0.5 --strategy uniform --init "$init" \
            --calib "$CALIB" --out "$SD/$init" --device "$DEVICE" --json >"$OUT/convert-$init.json" 2>>"$LOG"
        echo "convert $init: exit $?, $(($(date +%s) - t0)) s" | tee -a "$LOG"
    done
    exit 0
fi

# step NAME MODEL [extra options]: graft recall --json into $OUT/recall-NAME.json
step() {
    name=$1 model=$2; shift 2
    t0=$(date +%s.%N)
    echo "== $name: $G recall $model --tasks $TASKS --lengths $LENGTHS --depths $DEPTHS --samples $SAMPLES $*" >>"$LOG"
    timeout -s INT -k 20 "$(left)" "$G" recall "$model" --tasks "$TASKS" --lengths "$LENGTHS" --depths "$DEPTHS" \
        --samples "$SAMPLES" --device "$DEVICE" --json "$@" >"$OUT/recall-$name.json" 2>>"$LOG"
    rc=$?
    awk -v n="$name" -v rc=$rc -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%s: exit %d, %.1f s\n", n, rc, b - a }' | tee -a "$LOG"
    [ $rc -eq 0 ] || rm -f "$OUT/recall-$name.json"
    return $rc
}

DUMP=/tmp/recall-teacher.dump.jsonl
if [ "${RECALL_TEACHER:-1}" != 0 ]; then
    rm -f "$DUMP"
    step teacher "$TEACHER" --dump "$DUMP"
    [ -f "$DUMP" ] && gzip -c "$DUMP" >"$OUT/recall-teacher.dump.jsonl.gz"
fi
# the reference: transformers generate on the teacher's prompts of one task
if [ "$HF_TASK" != none ] && [ -f "$DUMP" ]; then
    echo "== hf: transformers generate, task $HF_TASK" >>"$LOG"
    # transformers reads GGUF through the gguf package, which the GPU machine lacks: carry .whl
    # (/work/.library/device/README.md, Notes) with gguf>=0.10 in it
    [ -d .whl ] && python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl >>"$LOG" 2>&1 && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
    t0=$(date +%s)
    timeout -k 20 "$(left)" python3 tests/gpu/recall/hf_generate.py "$TEACHER" "$DUMP" --task "$HF_TASK" \
        --device "$DEVICE" --graft "$OUT/recall-teacher.json" >"$OUT/recall-hf.json" 2>>"$LOG"
    echo "hf: exit $?, $(($(date +%s) - t0)) s" | tee -a "$LOG"
fi
for s in "$@"; do
    n=$(basename "$s")
    step "$n" "$s" --dump "/tmp/recall-$n.dump.jsonl"
    # what a run cut short finished: scripts/recall-heatmap.py reads the dump
    [ -f "/tmp/recall-$n.dump.jsonl" ] && gzip -c "/tmp/recall-$n.dump.jsonl" >"$OUT/recall-$n.dump.jsonl.gz"
done

echo "total $(($(date +%s) - start)) s" | tee -a "$LOG"
