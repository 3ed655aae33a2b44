#!/bin/sh
# graft train on stories260K (distilling the teacher into a perturbed copy):
# - a run killed with SIGKILL mid-way and resumed with --resume gives the same
#   loss curve (bit for bit) and final held-out perplexity as an uninterrupted run;
# - SIGTERM writes a checkpoint and exits 143; resuming from it also matches;
# - a NaN loss stops with a clear one-line message and keeps the last good checkpoint;
# - the KL loss goes down;
# - with GDN layers (--strategy manual:0,1,3: layers 2 and 4 converted) on two
#   threads, SIGKILL + resume is bit-identical too (every reduction runs in a
#   fixed order).
. "$(dirname "$0")/../lib.sh"
need_stories
DATA=$SHARED/data/tinystories.txt
[ -f "$DATA" ] || skip "tinystories.txt not found under \$GRAFT_SHARED"
ARGS="$STORIES --teacher $STORIES --noise 0.3 --ctx 32 --batch 2 --tokens 7680 --data $DATA --threads 1 --json --lr-rest 1e-3 --log-every 0"
ckpt_step() { python3 -c "import struct,sys; print(struct.unpack('<8sQq', open(sys.argv[1],'rb').read(24))[2])" "$1" 2>/dev/null || echo 0; }
same_curve() { python3 - "$1" "$2" "${3:-0.7}" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
ratio = float(sys.argv[3])
assert len(a["curve"]) == a["steps"] == 120, a["steps"]
assert a["curve"] == b["curve"], "curves differ"
assert a["final_eval_ppl"] == b["final_eval_ppl"]
assert b["resumed_from"] > 0
first = sum(l for _, l in a["curve"][:10]) / 10; last = sum(l for _, l in a["curve"][-10:]) / 10
assert last < ratio * first, (first, last)
PY
}

$G train $ARGS >"$TMP/full.json" || fail "uninterrupted run failed"

# SIGKILL once a checkpoint past step 5 exists, then resume
$G train $ARGS --ckpt "$TMP/k.ckpt" --ckpt-every 5 >/dev/null 2>&1 &
pid=$!
i=0
while [ "$(ckpt_step "$TMP/k.ckpt")" -lt 5 ] && [ $i -lt 2400 ]; do sleep 0.05; i=$((i + 1)); done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
at=$(ckpt_step "$TMP/k.ckpt")
[ "$at" -ge 5 ] && [ "$at" -lt 120 ] || fail "the run was not killed mid-way (checkpoint at step $at)"
$G train $ARGS --ckpt "$TMP/k.ckpt" --resume >"$TMP/resumed.json" || fail "resume failed"
same_curve "$TMP/full.json" "$TMP/resumed.json" || fail "SIGKILL + resume differs from the uninterrupted run"

# SIGTERM: checkpoint on the way out, exit 143 (sent once training runs: a first checkpoint exists)
$G train $ARGS --ckpt "$TMP/t.ckpt" --ckpt-every 3 >/dev/null 2>"$TMP/term.err" &
pid=$!
i=0
while [ "$(ckpt_step "$TMP/t.ckpt")" -lt 3 ] && [ $i -lt 2400 ]; do sleep 0.05; i=$((i + 1)); done
kill -TERM $pid
wait $pid
rc=$?
if [ $rc -eq 143 ]; then
    grep -q "stopped by SIGTERM" "$TMP/term.err" || fail "SIGTERM message missing: $(cat "$TMP/term.err")"
    $G train $ARGS --ckpt "$TMP/t.ckpt" --resume >"$TMP/term.json" || fail "resume after SIGTERM failed"
    same_curve "$TMP/full.json" "$TMP/term.json" || fail "SIGTERM + resume differs from the uninterrupted run"
else
    [ $rc -eq 0 ] || fail "SIGTERM run exited $rc: $(cat "$TMP/term.err")"
fi

# NaN: an absurd learning rate blows the weights up; the checkpoint of the last good step stays
expect_error "non-finite" $G train $ARGS --lr-mixer 1e30 --lr-rest 1e30 --warmup-frac 0 --ckpt "$TMP/n.ckpt" --ckpt-every 1
grep -q "last good checkpoint" "$TMP/err" || fail "NaN message does not name the checkpoint: $(cat "$TMP/err")"
good=$(ckpt_step "$TMP/n.ckpt")
grep -q "(step $good)" "$TMP/err" || fail "NaN message names another step than the file holds ($good): $(cat "$TMP/err")"
# resuming repeats the same failure (the kept checkpoint is the last good state)
expect_error "non-finite" $G train $ARGS --lr-mixer 1e30 --lr-rest 1e30 --warmup-frac 0 --ckpt "$TMP/n.ckpt" --resume

# a checkpoint from other options is refused
expect_error "other options" $G train $ARGS --ctx 32 --batch 1 --ckpt "$TMP/k.ckpt" --resume

# GDN layers 2 and 4 (random init), two threads: kill -9 + resume is bit-identical
GARGS="$STORIES --teacher $STORIES --strategy manual:0,1,3 --ctx 32 --batch 2 --tokens 7680 --data $DATA --threads 2 --json --lr-rest 1e-3 --log-every 0"
$G train $GARGS >"$TMP/gfull.json" || fail "uninterrupted GDN run failed"
$G train $GARGS --ckpt "$TMP/g.ckpt" --ckpt-every 5 >/dev/null 2>&1 &
pid=$!
i=0
while [ "$(ckpt_step "$TMP/g.ckpt")" -lt 5 ] && [ $i -lt 2400 ]; do sleep 0.05; i=$((i + 1)); done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
at=$(ckpt_step "$TMP/g.ckpt")
[ "$at" -ge 5 ] && [ "$at" -lt 120 ] || fail "the GDN run was not killed mid-way (checkpoint at step $at)"
$G train $GARGS --ckpt "$TMP/g.ckpt" --resume >"$TMP/gresumed.json" || fail "GDN resume failed"
# (from a random GDN init the KL falls less in 120 steps: 0.33 -> 0.28 measured)
same_curve "$TMP/gfull.json" "$TMP/gresumed.json" 0.95 || fail "GDN, 2 threads: SIGKILL + resume differs from the uninterrupted run"
exit 0
