#!/bin/sh
# graft recall on the real stories260K teacher and on a hybrid student of it:
# it runs, scores every cell (n samples each, accuracy = correct / n in
# [0, 1]), writes the JSON shape the issue names, dumps prompts of exactly the
# cell's length minus the task's answer budget, and refuses bad options and
# lengths beyond the model's 512 positions in one line.
set -u
. "$(dirname "$0")/../lib.sh"
need_stories
TEXT=$SHARED/data/tinystories.txt
[ -r "$TEXT" ] || skip "tinystories.txt not found under $SHARED"

"$G" recall "$STORIES" --tasks passkey,niah-number,vt --lengths 384,512 --depths 0,50,100 --samples 2 \
    --threads 1 --json --dump "$TMP/dump.jsonl" >"$TMP/t.json" 2>"$TMP/t.err" || fail "recall on the teacher: $(cat "$TMP/t.err")"
python3 - "$TMP/t.json" "$TMP/dump.jsonl" <<'PY' || fail "teacher JSON: see above"
import json, math, sys
j = json.load(open(sys.argv[1]))
for k in ("model", "tasks", "cells", "seconds"):
    assert k in j, k
assert j["tasks"] == ["passkey", "niah-number", "vt"], j["tasks"]
assert len(j["cells"]) == 3 * 2 * 3, len(j["cells"])
for c in j["cells"]:
    assert set(("task", "length", "depth", "n", "correct", "accuracy")) <= set(c), c
    assert c["n"] == 2, c
    assert 0 <= c["correct"] <= c["n"], c
    assert math.isfinite(c["accuracy"]) and abs(c["accuracy"] - c["correct"] / c["n"]) < 1e-12, c
assert sorted({c["length"] for c in j["cells"]}) == [384, 512]
assert sorted({c["depth"] for c in j["cells"]}) == [0, 50, 100]
assert j["seconds"] > 0 and math.isfinite(j["seconds"])
budget = {"passkey": 24, "niah-number": 32, "vt": 48}
rows = [json.loads(l) for l in open(sys.argv[2])]
assert len(rows) == 36, len(rows)
for r in rows:
    assert len(r["ids"]) == r["length"] - budget[r["task"]], (r["task"], len(r["ids"]))
    assert r["answers"] and all(a in r["text"] for a in r["answers"]), r["answers"]
    # the scorer: the share of answers in the output, ignoring case
    want = sum(a.lower() in r["pred"].lower() for a in r["answers"]) / len(r["answers"])
    assert abs(r["score"] - want) < 1e-12, (r["score"], want)
print("ok")
PY
grep -q "recall passkey .*384 tokens" "$TMP/t.err" || fail "no per-task summary on stderr: $(cat "$TMP/t.err")"

# a student folder, text haystack
"$G" convert "$STORIES" --keep 0.5 --strategy uniform --init random --calib "$TEXT" --out "$TMP/st" \
    --eval-windows 1 --threads 1 >/dev/null 2>"$TMP/c.err" || fail "convert: $(cat "$TMP/c.err")"
"$G" recall "$TMP/st" --tasks multikey --lengths 512 --depths 50 --samples 2 --haystack "$TEXT" --threads 1 --json \
    >"$TMP/s.json" 2>"$TMP/s.err" || fail "recall on a student: $(cat "$TMP/s.err")"
[ "$(json_get "$TMP/s.json" 'len(j["cells"])')" = 1 ] || fail "student cells: $(cat "$TMP/s.json")"
[ "$(json_get "$TMP/s.json" 'j["cells"][0]["n"]')" = 2 ] || fail "student samples: $(cat "$TMP/s.json")"

# recall through recovery: train --recall-every records recall accuracy at the evaluations
"$G" train "$TMP/st" --teacher "$STORIES" --data "$TEXT" --tokens 2048 --ctx 64 --batch 2 --eval-every 8 \
    --recall-every 8 --recall-tasks passkey --recall-lengths 256 --recall-samples 1 --threads 1 --json \
    >"$TMP/tr.json" 2>"$TMP/tr.err" || fail "train --recall-every: $(cat "$TMP/tr.err")"
python3 - "$TMP/tr.json" <<'PY' || fail "train --recall-every JSON: $(cat "$TMP/tr.json")"
import json, math, sys
j = json.load(open(sys.argv[1]))
rc, ev = j["recall_curve"], j["eval_curve"]
assert len(rc) == 2, rc  # steps 8 and 16 (the last) of 16
assert [p[0] for p in rc] == [p[0] for p in ev], (rc, ev)  # beside each evaluation
assert all(math.isfinite(p[1]) and 0 <= p[1] <= 1 for p in rc), rc
PY
grep -q "recall at step 8 " "$TMP/tr.err" || fail "no recall line on stderr: $(cat "$TMP/tr.err")"
expect_error "--recall-every" "$G" train "$TMP/st" --teacher "$STORIES" --data "$TEXT" --recall-every 4 --recall-lengths 4096
# a length too short for the task's prompt is refused before the first training step, not at the first evaluation
expect_error "too few" "$G" race "$STORIES" --keep 0.5 --strategy uniform --data "$TEXT" --ctx 32 --tokens 256 \
    --recall-every 2 --recall-lengths 64 --recall-tasks niah-number --threads 1
grep -q "step " "$TMP/err" 2>/dev/null && fail "race --recall-every trained before refusing: $(cat "$TMP/err")"

expect_error "512 positions" "$G" recall "$STORIES" --lengths 1024
expect_error "unknown recall task 'needle'" "$G" recall "$STORIES" --tasks needle
expect_error "--depths" "$G" recall "$STORIES" --depths 150
expect_error "--samples must be in [1, 1048576], got 0" "$G" recall "$STORIES" --samples 0
expect_error "too few" "$G" recall "$STORIES" --tasks multiquery --lengths 128
expect_error "nothing.txt" "$G" recall "$STORIES" --lengths 256 --haystack "$TMP/nothing.txt"
exit 0
