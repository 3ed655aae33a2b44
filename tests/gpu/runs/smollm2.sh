#!/bin/sh
# The SmolLM2-135M runs on one GPU behind docs/ablation-smollm2-135m.md (issue
# 12: 300-step ablation rows) and docs/training.md (issue 13: the race and its
# mixer learning-rate sweep). Each step writes its --json output (and stderr)
# under $OUT; tests/gpu/runs/report.py turns them into the docs' tables, so no
# number there is typed by hand.
#
# On the GPU machine, from the repository root, after `sh tests/gpu/device_run.sh
# build` (build/graft with CUDA) and with the teacher at $GRAFT_SMOLLM2 (it
# travels with ../shared/tools/gpu-ship.sh: 98 MB, two calls):
#   sh tests/gpu/runs/smollm2.sh probe              training tok/s of the race's shape (stand-in students)
#   sh tests/gpu/runs/smollm2.sh ablate             uniform 25 % / 50 %, six inits, 300 steps (+ heldout,
#                                                   Stage 1 subsets and decay overrides, no-sink decay, ar / ga-s2)
#   sh tests/gpu/runs/smollm2.sh race LR TOKENS     random vs taylor-calibrate at 50 %, --lr-mixer LR,
#                                                   TOKENS per init; checkpoints in $GRAFT_RACE_DIR-LR, so
#                                                   the same command resumes a race a call's end cut short
# GRAFT_RUN_DEVICE=cpu, GRAFT_SMOLLM2=<small teacher>, GRAFT_ABLATE_STEPS=N: a dry run
# of the commands here. GRAFT_RUN_S (default 540) bounds each step: a race still running then is
# stopped by SIGINT (its checkpoint written) and the next call resumes it.
set -u
G=${GRAFT_BIN:-./build/graft}
TEACHER=${GRAFT_SMOLLM2:-/tmp/ship/SmolLM2-135M-Instruct.Q4_1.gguf}
TEXT=${GRAFT_SHARED:?. .carry/env.sh first}/data/gutenberg-60.txt
OUT=${OUT:-build/gpu/out}
RACE_DIR=${GRAFT_RACE_DIR:-/tmp/graft-race}
RUN_S=${GRAFT_RUN_S:-540}
DEVICE=${GRAFT_RUN_DEVICE:-cuda}  # cpu: a dry run of the flags on a small teacher
STEPS=${GRAFT_ABLATE_STEPS:-300}
CTX=${GRAFT_RACE_CTX:-2048} BATCH=${GRAFT_RACE_BATCH:-8} # the race's shape: 16,384 tokens per step
mkdir -p "$OUT"
[ -x "$G" ] || { echo "smollm2.sh: no $G (build first)" >&2; exit 1; }
[ -f "$TEACHER" ] || { echo "smollm2.sh: no teacher at $TEACHER" >&2; exit 1; }
start=$(date +%s)
left() { l=$((RUN_S - ($(date +%s) - start))); [ $l -lt 10 ] && l=10; echo $l; }

# one graft command: stdout (--json) to $OUT/NAME.json, stderr to $OUT/NAME.err,
# wall seconds and exit status on stdout
step() { # NAME, command...
    name=$1; shift
    t0=$(date +%s.%N)
    timeout -s INT -k 20 "$(left)" "$@" --device "$DEVICE" --json >"$OUT/$name.json" 2>"$OUT/$name.err"
    rc=$?
    awk -v n="$name" -v rc=$rc -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%s: exit %d, %.1f s\n", n, rc, b - a }'
    [ $rc -eq 0 ] || tail -n 3 "$OUT/$name.err"
    return $rc
}

ABLATE="ablate $TEACHER --calib $TEXT --eval $TEXT --steps $STEPS --eval-windows 16"
case ${1:-} in
probe)
    # stand-ins (no calibration text: no Stage 1/2), 20 steps each: the rate the race's budget is sized by
    step probe "$G" race "$TEACHER" --inits random,zero-gate --keep 0.5 --data "$TEXT" --ctx $CTX --batch $BATCH \
        --tokens $((20 * CTX * BATCH)) --log-every 5
    python3 -c "
import json, sys
j = json.load(open(sys.argv[1]))
for r in j['runs']:
    n = r['curve'][-1][0]
    print(f\"probe {r['init']}: {n} tokens in {r['train_seconds']:.1f} s = {n / r['train_seconds']:,.0f} tok/s (eval included)\")
print('memory estimate', round(j['memory']['estimate_bytes'] / 2**30, 2), 'GiB of', round(j['memory']['free_bytes'] / 2**30, 1), 'free')
" "$OUT/probe.json"
    ;;
ablate)
    # the timed one (issue 12: < 5 min): uniform 25 % and 50 %, six inits, 300 steps
    step ablate_train "$G" $ABLATE --strategy uniform --keep 0.25,0.5
    step ablate_heldout "$G" $ABLATE --strategy uniform --keep 0.25,0.5 --keep-best heldout
    step ablate_stage1 "$G" $ABLATE --strategy uniform --keep 0.25,0.5 --stage1-subsets --half-life 16,64
    step ablate_nosink "$G" $ABLATE --strategy uniform --keep 0.25,0.5 --init taylor-calibrate \
        --stage1 decay,beta,sigma,gate/decay --distance no-sink
    step ablate_select "$G" $ABLATE --strategy ar,ga-s2 --keep 0.5
    ;;
race)
    [ $# -eq 3 ] || { echo "usage: smollm2.sh race LR TOKENS" >&2; exit 2; }
    lr=$2 tokens=$3
    dir=$RACE_DIR-$lr
    mkdir -p "$dir"
    resume=
    ls "$dir"/*.ckpt >/dev/null 2>&1 && resume=--resume
    steps=$((tokens / (CTX * BATCH)))
    every=$((steps / 10 > 0 ? steps / 10 : 1))
    step "race_lr$lr" "$G" race "$TEACHER" --data "$TEXT" --calib "$TEXT" --keep 0.5 --strategy uniform \
        --inits random,taylor-calibrate --ctx $CTX --batch $BATCH --tokens "$tokens" --lr-mixer "$lr" \
        --eval-every $every --log-every 50 --ckpt-dir "$dir" --ckpt-every 100 $resume
    rc=$?
    [ $rc -eq 130 ] && echo "race_lr$lr: stopped at the call's end; the same command resumes it"
    exit $rc
    ;;
*)
    echo "usage: sh tests/gpu/runs/smollm2.sh probe | ablate | race LR TOKENS" >&2
    exit 2
    ;;
esac
