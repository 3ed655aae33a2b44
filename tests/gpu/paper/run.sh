#!/bin/sh
# The Qwen2.5-Coder-1.5B measurements of issue 29 (docs/paper-1.5b.md) and the
# SmolLM2-135M tables with both sigma fits, one STEP per GPU call (each fits in
# one 10-minute call on one H200). Every step writes its --json outputs and one
# log under $OUT (at most 6 files, flat); they are kept in
# docs/runs/qwen2.5-coder-1.5b-h200/ (SmolLM2's in docs/runs/smollm2-135m-h200/)
# and tests/gpu/paper/report.py prints the doc's tables from them.
#
# On the GPU machine, from the repository root, after . .carry/env.sh, with
# build/graft built for CUDA (`sh tests/gpu/paper/run.sh build`, or
# tests/gpu/device_run.sh build) and the teacher at $GRAFT_QWEN (it travels with
# ../shared/tools/gpu-ship.sh):
#   run.sh build                   make build/graft only (no GPU test programs)
#   run.sh teacher                 (a) teacher perplexity, held-out gutenberg-60: graft on the GPU
#                                  f32 and bf16, graft on the CPU (a few windows), transformers on
#                                  the GPU loading the same GGUF (needs the gguf wheel: carry .whl);
#                                  graft stats (per-head statistics for the heat maps)
#   run.sh ablate                  (b) uniform 25 % / 50 %, ar / ga-s2 50 %, six inits, 300 Stage-2
#                                  steps, sigma fits GRAFT_ABLATE_FITS (default reference,scaled; the
#                                  JSON names gain _FIT when set), --keep-best train and heldout
#   run.sh stage1 [FITS]           (c) the Stage 1 component table at 25 % / 50 %, FITS (default
#                                  reference,scaled; reference alone takes 2/3 of the time)
#   run.sh race LR TOKENS [SUBSET] (d) 50 % uniform: random, taylor-calibrate and taylor-calibrate
#                                  with --stage1 SUBSET (default decay,beta,gate), TOKENS per run,
#                                  --lr-mixer LR (GRAFT_RACE_STUDENTS: other students, each
#                                  INIT[:SUBSET][@FIT], FIT a --sigma-fit; GRAFT_RACE_ARGS: more race
#                                  options, e.g. --recall-every); students converted once per machine into
#                                  $GRAFT_PAPER_DIR; checkpoints there, so the same command resumes
#                                  a race a call's end cut short
#   run.sh smollm2                 the 135M ablation (uniform 25 / 50 %, six inits) and component
#                                  table with both fits (teacher at $GRAFT_SMOLLM2)
# GRAFT_RUN_DEVICE=cpu GRAFT_QWEN=<small teacher> GRAFT_ABLATE_STEPS=N GRAFT_PAPER_SMALL=1: a dry
# run of the commands on the CPU (tests/integration/paper_run.sh does it on stories260K).
# GRAFT_RUN_S (default 560) bounds each step: a race still running then is stopped by SIGINT (its
# checkpoint written) and the next call resumes it.
set -u
G=${GRAFT_BIN:-./build/graft}
QWEN=${GRAFT_QWEN:-/tmp/ship/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf}
SMOL=${GRAFT_SMOLLM2:-/tmp/ship/SmolLM2-135M-Instruct.Q4_1.gguf}
TEXT=${GRAFT_PAPER_TEXT:-${GRAFT_SHARED:?. .carry/env.sh first}/data/gutenberg-60.txt}
OUT=${OUT:-build/gpu/out}
DIR=${GRAFT_PAPER_DIR:-/tmp/graft-paper}
RUN_S=${GRAFT_RUN_S:-560}
DEVICE=${GRAFT_RUN_DEVICE:-cuda}
STEPS=${GRAFT_ABLATE_STEPS:-300}
SMALL=${GRAFT_PAPER_SMALL:-}            # dry run: tiny shapes, so that a CPU runs every command in seconds
if [ -n "$SMALL" ]; then
    CTX=32 BATCH=2 ACTX=64 AWIN="--calib-seqs 2 --select-windows 1 --eval-windows 2" PCTX=64 PBYTES=3000 BIG=6000 SEQS=2
else
    # the race at the shape docs/cuda.md timed (recovery step 29k tok/s at 4 x 2048, 50 % hybrid);
    # the ablation at graft's defaults (ctx 256, 4 calibration sequences, 64 evaluation windows)
    CTX=2048 BATCH=4 ACTX=256 AWIN="" PCTX=512 PBYTES=12000 BIG=1000000 SEQS=16
fi
# room the race's checkpoints need at 1.5B (graft's own check asked 64 GB); the dry run needs none
GRAFT_RACE_CKPT_GB=${GRAFT_RACE_CKPT_GB:-$([ -n "$SMALL" ] && echo 0 || echo 70)}
LOG=$OUT/paper.log
mkdir -p "$OUT" "$DIR"
start=$(date +%s)
left() { l=$((RUN_S - ($(date +%s) - start))); [ $l -lt 10 ] && l=10; echo $l; }
need() { [ -f "$1" ] || { echo "run.sh: no $2 at $1" >&2; exit 1; }; }

# step NAME command...: stdout (--json) to $OUT/NAME.json, stderr to the log; wall seconds on stdout
step() {
    name=$1; shift
    t0=$(date +%s.%N)
    echo "== $name: $*" >>"$LOG"
    timeout -s INT -k 20 "$(left)" "$@" --json >"$OUT/$name.json" 2>>"$LOG"
    rc=$?
    awk -v n="$name" -v rc=$rc -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%s: exit %d, %.1f s\n", n, rc, b - a }' |
        tee -a "$LOG"
    [ $rc -eq 0 ] || tail -n 3 "$LOG"
    return $rc
}

# held_out BYTES FILE: the last BYTES of gutenberg-60 (the race's held-out end), from a line start
held_out() {
    python3 - "$TEXT" "$1" "$2" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
tail = data[len(data) - int(sys.argv[2]):]
tail = tail[tail.index(b"\n") + 1:]  # whole lines: both tokenizers see the same UTF-8
open(sys.argv[3], "wb").write(tail)
PY
}

ABL="--calib $TEXT --eval $TEXT --steps $STEPS --ctx $ACTX $AWIN --device $DEVICE"
case ${1:-} in
build)
    make -j"$(nproc)" build/graft >"$OUT/build.log" 2>&1 || { tail -n 20 "$OUT/build.log"; exit 1; }
    ls -la "$G"
    ;;
teacher)
    need "$QWEN" teacher
    [ -d .whl ] && { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site; }
    held_out $PBYTES "$DIR/small.txt"
    held_out $BIG "$DIR/big.txt"
    if [ "$DEVICE" = cuda ]; then
        GRAFT_CUDA_FP32=1 step ppl_gpu_f32 "$G" ppl "$QWEN" --text "$DIR/big.txt" --ctx $CTX --device cuda
        step ppl_gpu_bf16 "$G" ppl "$QWEN" --text "$DIR/big.txt" --ctx $CTX --device cuda
        GRAFT_CUDA_FP32=1 step ppl_small_gpu_f32 "$G" ppl "$QWEN" --text "$DIR/small.txt" --ctx $PCTX --device cuda
        step ppl_small_gpu_bf16 "$G" ppl "$QWEN" --text "$DIR/small.txt" --ctx $PCTX --device cuda
    fi
    step ppl_small_cpu "$G" ppl "$QWEN" --text "$DIR/small.txt" --ctx $PCTX --device cpu
    # the calibration end of the file (graft ablate calibrates on its first tokens); tokenizing all
    # 23 MB takes a minute of host time
    head -c 1000000 "$TEXT" >"$DIR/head.txt"
    step stats "$G" stats "$QWEN" --text "$DIR/head.txt" --ctx $ACTX --seqs $SEQS --device $DEVICE
    hf_dev=$([ "$DEVICE" = cuda ] && echo cuda || echo cpu)
    # transformers: one process loads the GGUF (minutes of dequantization) and scores both texts
    for t in small big; do
        c=$([ $t = small ] && echo $PCTX || echo $CTX)
        t0=$(date +%s)
        echo "== hf_$t: hf_gguf_ppl.py --ctx $c --device $hf_dev" >>"$LOG"
        timeout "$(left)" python3 tests/gpu/runs/hf_gguf_ppl.py "$QWEN" "$DIR/$t.txt" --ctx $c --device $hf_dev \
            >"$DIR/hf_$t.json" 2>"$DIR/hf_$t.err" ||
            { echo "hf_$t: failed; its last lines:"; tail -n 5 "$DIR/hf_$t.err"; } | tee -a "$LOG"
        cat "$DIR/hf_$t.err" >>"$LOG"
        echo "hf_$t: $(($(date +%s) - t0)) s" | tee -a "$LOG"
    done
    # one file for the table: every perplexity with its text, ctx and path
    python3 - "$OUT" "$DIR" "$DEVICE" $PCTX $CTX "$(basename "$QWEN")" <<'PY'
import json, os, sys
out, d, dev, pctx, ctx, name = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
rows = []
def add(name, path, text, c, path_kind):
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return
    j = json.load(open(path))
    rows.append({"run": name, "path": path_kind, "text": text, "ctx": c, "tokens": j.get("tokens"), "nll": j.get("nll"),
                 "ppl": j.get("ppl"), "device": (j.get("memory") or {}).get("device")})
for n, kind in (("ppl_gpu_f32", "graft cuda f32"), ("ppl_gpu_bf16", "graft cuda bf16")):
    add(n, f"{out}/{n}.json", "big", ctx, kind)
for n, kind in (("ppl_small_gpu_f32", "graft cuda f32"), ("ppl_small_gpu_bf16", "graft cuda bf16"),
                ("ppl_small_cpu", "graft cpu f32")):
    add(n, f"{out}/{n}.json", "small", pctx, kind)
import re
secs = {m.group(1): float(m.group(3)) for m in re.finditer(r"^(\S+): exit (\d+), ([0-9.]+) s$", open(f"{out}/paper.log").read(), re.M)}
secs.update({m.group(1): float(m.group(2)) for m in re.finditer(r"^(hf_\w+): (\d+) s$", open(f"{out}/paper.log").read(), re.M)})
add("hf_small", f"{d}/hf_small.json", "small", pctx, f"transformers {dev} f32")
add("hf_big", f"{d}/hf_big.json", "big", ctx, f"transformers {dev} f32")
for r in rows:
    r["seconds"] = secs.get(r["run"])
texts = {t: os.path.getsize(f"{d}/{t}.txt") for t in ("small", "big")}
json.dump({"teacher": name, "text": "gutenberg-60.txt, its last bytes from a line start",
           "text_bytes": texts, "rows": rows}, open(f"{out}/teacher_ppl.json", "w"), indent=1)
for n in ("ppl_gpu_f32", "ppl_gpu_bf16", "ppl_small_gpu_f32", "ppl_small_gpu_bf16", "ppl_small_cpu"):
    if os.path.exists(f"{out}/{n}.json"):
        os.remove(f"{out}/{n}.json")  # folded into teacher_ppl.json (8 files come back)
print(json.dumps(rows, indent=1))
PY
    ;;
ablate)
    need "$QWEN" teacher
    fits=${GRAFT_ABLATE_FITS:-reference,scaled} sfx=${GRAFT_ABLATE_FITS:+_$(echo "$GRAFT_ABLATE_FITS" | tr , _)}
    step "ablate_train$sfx" "$G" ablate "$QWEN" $ABL --strategy uniform,ar,ga-s2 --keep 0.25,0.5 --sigma-fit "$fits"
    step "ablate_heldout$sfx" "$G" ablate "$QWEN" $ABL --strategy uniform --keep 0.25,0.5 --sigma-fit "$fits" \
        --keep-best heldout
    ;;
stage1)
    need "$QWEN" teacher
    step stage1_components "$G" ablate "$QWEN" $ABL --strategy uniform --keep 0.25,0.5 --init align-only,taylor-calibrate \
        --stage1-subsets --sigma-fit "${2:-reference,scaled}"
    ;;
race)
    [ $# -ge 3 ] || { echo "usage: run.sh race LR TOKENS [SUBSET]" >&2; exit 2; }
    need "$QWEN" teacher
    lr=$2 tokens=$3 subset=${4:-decay,beta,gate}
    # the three students once per machine (graft convert: 50 % uniform, as the race would build them)
    students=${GRAFT_RACE_STUDENTS:-random taylor-calibrate taylor-calibrate:$subset}
    folders=
    for s in $students; do
        fit=; [ "$s" != "${s#*@}" ] && fit="--sigma-fit ${s#*@}" && s=${s%@*}
        init=${s%%:*} f=$DIR/student-$(echo "$s${fit:+_${fit#--sigma-fit }}" | tr ':,' '__')
        folders="$folders $f"
        [ -f "$f/config.json" ] && continue
        s1=; [ "$s" != "${s#*:}" ] && s1="--stage1 ${s#*:}"
        step "convert_$(basename "$f")" "$G" convert "$QWEN" --keep 0.5 --strategy uniform --init "$init" $s1 $fit \
            --calib "$TEXT" --out "$f" --device $DEVICE $([ -n "$SMALL" ] && echo "--ctx $ACTX $AWIN --steps $STEPS") || exit 1
        rm -f "$OUT/convert_$(basename "$f").json" # the folder's report.json has it
    done
    run=$DIR/race-$lr-$tokens-$(echo "$students" | tr ' :,@' '____')
    mkdir -p "$run"
    # checkpoints: three students' parameters and AdamW moments in float32 (~64 GB at 1.5B); graft
    # refuses a --ckpt-dir without that room, so the race goes without them where the disk is smaller
    ckpt="--ckpt-dir $run --ckpt-every 50" resume=
    if [ "$(df -Pk "$run" | awk 'NR == 2 { print $4 }')" -lt $((GRAFT_RACE_CKPT_GB * 1048576)) ]; then
        echo "race: less than ${GRAFT_RACE_CKPT_GB} GB free beside $run: no checkpoints (a cut-short race starts again)" | tee -a "$LOG"
        ckpt=
    fi
    [ -n "$ckpt" ] && ls "$run"/*.ckpt >/dev/null 2>&1 && resume=--resume
    steps=$((tokens / (CTX * BATCH)))
    every=$((steps / 10 > 0 ? steps / 10 : 1))
    # shellcheck disable=SC2086 # $folders and GRAFT_RACE_ARGS are word lists
    step "race_lr${lr}_${tokens}" "$G" race "$QWEN" $folders --data "$TEXT" --ctx $CTX --batch $BATCH \
        --tokens "$tokens" --lr-mixer "$lr" --eval-every $every --log-every 20 $ckpt \
        --device $DEVICE $resume ${GRAFT_RACE_ARGS:-}
    rc=$?
    [ $rc -eq 130 ] && echo "race: stopped at the call's end; the same command resumes it"
    exit $rc
    ;;
smollm2)
    need "$SMOL" "SmolLM2 teacher"
    step smollm2_ablate "$G" ablate "$SMOL" $ABL --strategy uniform --keep 0.25,0.5 --sigma-fit reference,scaled
    step smollm2_stage1 "$G" ablate "$SMOL" $ABL --strategy uniform --keep 0.25,0.5 --init align-only,taylor-calibrate \
        --stage1-subsets --sigma-fit reference,scaled
    ;;
*)
    echo "usage: sh tests/gpu/paper/run.sh build | teacher | ablate | stage1 | race LR TOKENS [SUBSET] | smollm2" >&2
    exit 2
    ;;
esac
