#!/bin/sh
# Decoding, teacher vs its 50 % and 25 % students, graft beside transformers
# generate, on one GPU (issue 36). One device call:
#   . .carry/env.sh && sh tests/gpu/bench/decode.sh [TEACHER.gguf]
# (default /tmp/ship/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf). It builds graft
# when build/graft is missing, writes the two students with graft convert
# --device cuda (Taylor-Calibrate, DECODE_STEPS Stage-2 steps: decoding speed
# does not depend on the weights), runs `graft bench-decode` on the teacher and
# both students, then tests/gpu/peers/peer_decode.py on the same three (the
# teacher through transformers' Qwen2 with sdpa, loaded from the student
# folder, which keeps every layer's attention tensors; the students through
# their modeling_graft_student.py), and prints tests/gpu/bench/decode_table.py's
# table. Leaves in $OUT: decode-summary.txt (the table and the timings),
# decode.jsonl (every JSON line), decode-logs.tar.gz.
# Knobs: DECODE_CONTEXTS (default 1024,8192,32000: 32k positions less the 64
# decoded and the warm-up must fit Qwen2.5's 32768), DECODE_BATCH (1,16),
# DECODE_TOKENS (64), DECODE_STEPS (10), DECODE_PEER=0 (graft only),
# DECODE_PEER_FLA=1 (the students' prefill through flash-linear-attention from
# .peers/fla; its Triton autotuning adds minutes, so off by default: the peer's
# GDN prefill is then the modeling file's chunked PyTorch loop, and its decode
# steps are the token step either way). DECODE_DEVICE=cpu DECODE_PYTHON=PY
# GRAFT_PEER_SMOKE=1 runs the whole script on the CPU (a check of its plumbing
# on a small teacher; the figures mean nothing).
# Expected on the H200 with build/ warm: converts ~40 s, graft ~60 s, the
# peer ~150 s (its 32k x 16 prefills dominate): about 4-5 minutes; a fresh
# machine adds the build (make graft, ~3 min on 16 cores).
set -u
TEACHER=${1:-/tmp/ship/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf}
CTX=${DECODE_CONTEXTS:-1024,8192,32000}
BATCH=${DECODE_BATCH:-1,16}
TOKENS=${DECODE_TOKENS:-64}
STEPS=${DECODE_STEPS:-10}
DEV=${DECODE_DEVICE:-cuda}
PY=${DECODE_PYTHON:-python3}
OUT=${OUT:-$(pwd)/build/gpu/out}
SHARED=${GRAFT_SHARED:-$(cd .. && pwd)/shared}
CALIB=$SHARED/data/gutenberg-60.txt
mkdir -p "$OUT"
W=$(mktemp -d)
SUM=$OUT/decode-summary.txt
: >"$SUM"
start=$(date +%s)
say() { printf '%s\n' "$*" | tee -a "$SUM"; }
lap() { say "[$(( $(date +%s) - start )) s] $*"; }
finish() {
    cat "$W"/*.json "$W"/peer.jsonl 2>/dev/null >"$OUT/decode.jsonl"
    tar -C "$W" --exclude='s50' --exclude='s25' -czf "$OUT/decode-logs.tar.gz" . 2>/dev/null
    rm -rf "$W"
    exit "$1"
}
[ -f "$TEACHER" ] || { say "no teacher at $TEACHER"; finish 1; }
[ -f "$CALIB" ] || { say "no calibration text at $CALIB (GRAFT_SHARED)"; finish 1; }
say "== decode.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) teacher $TEACHER contexts $CTX batch $BATCH tokens $TOKENS"
[ "$DEV" = cpu ] || nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | tee -a "$SUM"
"$PY" -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)' 2>&1 |
    tail -n 1 | tee -a "$SUM"
if [ ! -x build/graft ]; then
    make -j"$(nproc)" graft >"$W/build.log" 2>&1 || { tail -n 30 "$W/build.log" | tee -a "$SUM"; finish 1; }
    lap "built graft"
fi
G=build/graft
for keep in 50 25; do
    $G convert "$TEACHER" --keep 0.$keep --strategy uniform --init taylor-calibrate --calib "$CALIB" \
        --steps "$STEPS" --device "$DEV" --out "$W/s$keep" >"$W/convert$keep.log" 2>&1 ||
        { tail -n 20 "$W/convert$keep.log" | tee -a "$SUM"; finish 1; }
    lap "student at $keep % written"
done
status=0
for m in teacher s50 s25; do
    path=$TEACHER
    [ $m = teacher ] || path=$W/$m
    $G bench-decode "$path" --contexts "$CTX" --batch "$BATCH" --tokens "$TOKENS" --device "$DEV" --json \
        >"$W/graft-$m.json" 2>"$W/graft-$m.err" || { tail -n 5 "$W/graft-$m.err" | tee -a "$SUM"; status=1; }
    lap "graft bench-decode $m"
done
if [ "${DECODE_PEER:-1}" = 1 ]; then
    [ "${DECODE_PEER_FLA:-0}" = 1 ] && export PYTHONPATH="${GRAFT_FLA_PATH:-$PWD/.peers/fla}${PYTHONPATH:+:$PYTHONPATH}"
    "$PY" tests/gpu/peers/peer_decode.py "$W/s50" "$W/s25" --teacher --contexts "$CTX" --batch "$BATCH" \
        --tokens "$TOKENS" >"$W/peer.jsonl" 2>"$W/peer.err" || { tail -n 10 "$W/peer.err" | tee -a "$SUM"; status=1; }
    lap "transformers generate (peer_decode.py)"
fi
python3 tests/gpu/bench/decode_table.py "$W"/graft-*.json "$W/peer.jsonl" 2>&1 | tee -a "$SUM"
lap "done, status $status"
finish $status
