#!/bin/sh
# graft race and graft train --phase align on stories260K (small budgets):
# the race JSON has the documented shape and consistent numbers; phase align
# trains only the GDN layers and lowers the hidden-state alignment loss.
. "$(dirname "$0")/../lib.sh"
need_stories
DATA=$SHARED/data/tinystories.txt
[ -f "$DATA" ] || skip "tinystories.txt not found under \$GRAFT_SHARED"
$G race "$STORIES" --inits random,zero-gate --data "$DATA" --ctx 32 --batch 2 --tokens 3200 --lr-mixer 1e-3 \
    --threads 1 --json --log-every 0 >"$TMP/race.json" 2>"$TMP/race.err" || fail "race failed: $(cat "$TMP/race.err")"
python3 - "$TMP/race.json" <<'PY' || fail "race JSON check failed"
import json, sys
j = json.load(open(sys.argv[1]))
runs = j["runs"]
assert [r["init"] for r in runs] == ["random", "zero-gate"]
xs = [[p[0] for p in r["curve"]] for r in runs]
assert xs[0] == xs[1] and len(xs[0]) == 50 and xs[0][-1] == 3200, xs[0][-3:]
assert all(r["final_eval_ppl"] > 1 for r in runs)
# the held-out curve ends at the budget with the final perplexity; times are measured, not placeholders
assert all(r["eval_curve"][-1] == [3200, r["final_eval_ppl"]] for r in runs), [r["eval_curve"] for r in runs]
assert all(r["build_seconds"] >= 0 and r["train_seconds"] > 0 for r in runs)
t = j["target_loss"]; w = j["smoothing_window"]
tail = [p[1] for p in runs[0]["curve"][-w:]]
assert abs(t - sum(tail) / len(tail)) < 1e-9 * max(1, abs(t))
n1, n2 = j["tokens_to_target"]["random"], j["tokens_to_target"]["zero-gate"]
assert 0 < n1 <= 3200
if n2 is not None:
    assert abs(j["ratio"] - n1 / n2) < 1e-12
assert j["converted_layers"] == "2,4"
assert (j["lr_mixer"], j["ctx"], j["batch"], j["accum"]) == (1e-3, 32, 2, 1), j
# the teacher on the same held-out sequences: finite, and better than both half-converted students
tp = j["teacher_eval_ppl"]
assert 1 < tp < min(r["final_eval_ppl"] for r in runs) and j["eval_seqs"] >= 1, (tp, j["eval_seqs"])
PY
# the race refuses a single init and an unknown one
expect_error "at least two" $G race "$STORIES" --inits random
if ! $G convert --help >/dev/null 2>&1; then # without the student builder, calibrated inits are refused up front
    expect_error "taylor-calibrate" $G race "$STORIES" --inits random,taylor-calibrate --tokens 64 --ctx 32 --data "$DATA"
fi
expect_error "unknown-init" $G race "$STORIES" --inits random,unknown-init --tokens 64 --ctx 32 --data "$DATA"

$G train "$STORIES" --teacher "$STORIES" --phase align --strategy manual:0,2,4 --data "$DATA" --ctx 32 --batch 2 --tokens 3200 \
    --threads 1 --json --log-every 0 >"$TMP/align.json" 2>"$TMP/align.err" || fail "align failed: $(cat "$TMP/align.err")"
python3 - "$TMP/align.json" <<'PY' || fail "phase align did not lower the alignment loss"
import json, sys
j = json.load(open(sys.argv[1]))
c = [p[1] for p in j["curve"]]
assert j["phase"] == "align" and len(c) == 50
assert sum(c[-5:]) / 5 < 0.9 * sum(c[:5]) / 5, (c[:5], c[-5:])
PY
expect_error "has none" $G train "$STORIES" --teacher "$STORIES" --phase align --data "$DATA" --ctx 32 --tokens 64
exit 0
