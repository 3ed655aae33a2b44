#!/bin/sh
# graft race --ckpt-dir: SIGINT / SIGTERM in the middle of a run write that
# run's checkpoint and exit 128 + signal with one line naming the run and the
# step; --resume finishes the race with the uninterrupted race's curves and
# tokens-to-target, bit for bit (the finished runs are read back, the stopped
# one continues).
. "$(dirname "$0")/../lib.sh"
need_stories
DATA=$SHARED/data/tinystories.txt
[ -f "$DATA" ] || skip "tinystories.txt not found under \$GRAFT_SHARED"
ARGS="$STORIES --inits random,zero-gate --keep 0.5 --ctx 32 --batch 2 --tokens 12800 --data $DATA --threads 1 --json --log-every 1"
# a background job starts with SIGINT ignored (and graft keeps it so, as shells expect): give it back
# (exec: the background pid is graft itself)
with_sigint() { exec python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])' "$@"; }
ckpt_step() { python3 -c "import struct,sys; print(struct.unpack('<8sQq', open(sys.argv[1],'rb').read(24))[2])" "$1" 2>/dev/null || echo 0; }

$G race $ARGS >"$TMP/full.json" 2>/dev/null || fail "uninterrupted race failed"

for sig in INT TERM; do
    case $sig in INT) want=130 ;; *) want=143 ;; esac
    dir="$TMP/ck-$sig"
    with_sigint $G race $ARGS --ckpt-dir "$dir" --ckpt-every 4 >/dev/null 2>"$TMP/$sig.err" &
    pid=$!
    i=0 # the second run (zero-gate) past its step 4
    while [ "$(ckpt_step "$dir/zero-gate.ckpt")" -lt 4 ] && [ $i -lt 2400 ]; do sleep 0.05; i=$((i + 1)); done
    kill -$sig $pid
    wait $pid
    rc=$?
    [ $rc -eq 0 ] && { echo "(the race ended before SIG$sig)"; continue; }
    [ $rc -eq $want ] || fail "SIG$sig: exit $rc, expected $want: $(tail -n 3 "$TMP/$sig.err")"
    grep -q "^graft race: stopped by SIG$sig in run 2/2 (zero-gate) at step [0-9]* of 200; checkpoints in" "$TMP/$sig.err" ||
        fail "SIG$sig message: $(grep 'graft race' "$TMP/$sig.err")"
    [ "$(ckpt_step "$dir/random.ckpt")" -eq 200 ] || fail "the finished run's checkpoint is not at its last step"
    at=$(ckpt_step "$dir/zero-gate.ckpt")
    [ "$at" -ge 4 ] && [ "$at" -lt 200 ] || fail "SIG$sig: the stopped run's checkpoint is at step $at"
    $G race $ARGS --ckpt-dir "$dir" --resume >"$TMP/$sig.json" 2>/dev/null || fail "resume after SIG$sig failed"
    python3 - "$TMP/full.json" "$TMP/$sig.json" <<'PY' || fail "SIG$sig + resume differs from the uninterrupted race"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for ra, rb in zip(a["runs"], b["runs"]):
    assert ra["init"] == rb["init"] and ra["curve"] == rb["curve"], ra["init"]
    assert ra["final_eval_ppl"] == rb["final_eval_ppl"], ra["init"]
assert a["tokens_to_target"] == b["tokens_to_target"] and a["target_loss"] == b["target_loss"]
PY
done
expect_error "--resume needs --ckpt-dir" $G race $ARGS --resume
exit 0
