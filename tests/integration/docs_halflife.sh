#!/bin/sh
# docs/half-life.md's tables are printed from the committed runs
# (docs/runs/half-life/), never typed: every `printed by: python3
# tests/gpu/halflife/report.py` block must equal what its command prints now,
# and a typed number must fail that check; report.py --drift counts heads too
# short / too long by the flags' p50 rule at each point of a hand-made drift.
# (run alone: defaults as tests/run.sh sets them)
: "${GRAFT_ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}" "${GRAFT_BIN:=$GRAFT_ROOT/build/graft}"
export GRAFT_ROOT GRAFT_BIN
. "$(dirname "$0")/../lib.sh"
cd "$GRAFT_ROOT" || fail "no $GRAFT_ROOT"
D=docs/half-life.md
check() { # FILE: every printed block of FILE equals its command's output now
    python3 - "$1" <<'PY'
import re, subprocess, sys
s = open(sys.argv[1]).read()
blocks = re.findall(r"<!-- printed by: (python3 tests/gpu/halflife/report\.py[^>]*?) -->\n(.*?)<!-- /printed -->", s, re.S)
if len(blocks) < 5:
    sys.exit(f"{sys.argv[1]}: {len(blocks)} printed blocks, expected the 5 of stories260K, SmolLM2, 1.5B x 2, drift")
for cmd, text in blocks:
    out = subprocess.run(cmd.split(), capture_output=True, text=True)
    if out.returncode != 0 or out.stdout != text:
        sys.exit(f"{sys.argv[1]}: the block printed by '{cmd}' differs from what it prints now")
PY
}
check $D 2>"$TMP/err" || fail "$(cat "$TMP/err")"
# a typed number (taylor-calibrate's final median p50 in the drift table) fails
sed 's/^| 2998272 | 366 | 66 | 42.3 | 1.92 | 45 | 18 |$/| 2998272 | 366 | 66 | 42.4 | 1.92 | 45 | 18 |/' $D >"$TMP/typed.md"
cmp -s $D "$TMP/typed.md" && fail "the negative check changed nothing in $D"
check "$TMP/typed.md" 2>"$TMP/err" && fail "a typed number in $D passed the check"
grep -q "report.py --drift docs/runs/half-life/smollm2-135m-drift .* differs from what" "$TMP/err" ||
    fail "check message: $(cat "$TMP/err")"
# --drift on a hand-made drift: 3 heads with targets 10, 10, 10 and one without;
# at the folder p50 = 2 (short: < 10 / 4), 10, 50 (long: > 10 x 4), 1; at step 5:
# 2 (short), 39 (not long: 39 < 40), inf (null: long), 1 (no target: not counted);
# median |log2(p50 / 10)| over the heads with a finite median and a target:
# 2.32 (log2 5, 0, log2 5) at the folder, (log2 5 + log2(10 / 3.9)) / 2 = 2.14 at step 5
mkdir -p "$TMP/d"
python3 - "$TMP/d/drift-s.json" <<'PY'
import json, sys
th = {"short_ratio": 4, "long_ratio": 4, "share": 0.5, "spread_ratio": 100, "beta_shut": 0.05, "beta_saturated": 0.95}
heads = [{"layer": 1, "head": h, "teacher_distance": t, "flags": f} for h, (t, f) in
         enumerate([(10, ["too_short"]), (10, []), (10, ["too_long"]), (None, [])])]
drift = [{"step": 0, "tokens": 0, "p50": [2, 10, 50, 1], "idle": [10, 10, 10, 1]},
         {"step": 5, "tokens": 640, "p50": [2, 39, None, 1], "idle": [10, 11, 12, 1]}]
json.dump({"init": "test", "thresholds": th, "heads": heads, "drift": drift, "tokens": 8, "seqs": 1, "ctx": 8}, open(sys.argv[1], "w"))
PY
python3 tests/gpu/halflife/report.py --drift --drift-heads=2 "$TMP/d" >"$TMP/out" 2>"$TMP/err" || fail "--drift: $(cat "$TMP/err")"
grep -q '^| 0 | 0 | 10 | 6 | 2.32 | 1 | 1 |$' "$TMP/out" || fail "--drift at the folder: $(cat "$TMP/out")"
grep -q '^| 640 | 5 | 10.5 | 2 | 2.14 | 1 | 1 |$' "$TMP/out" || fail "--drift at step 5: $(cat "$TMP/out")"
grep -q '^the last point as measured (its `heads`, every flag rule): too short 1, too long 1$' "$TMP/out" ||
    fail "--drift measured line: $(cat "$TMP/out")"
# the heads that moved most: head 2 (to an infinite median), then head 1 (10 -> 39)
python3 - "$TMP/out" <<'PY' || fail "--drift heads: $(cat "$TMP/out")"
import sys
rows = [l for l in open(sys.argv[1]) if l.startswith("| 1 | ")]
assert [r.split(" | ")[1] for r in rows] == ["2", "1"], rows
assert rows[0].rstrip().endswith("| 10 | 50 | - | 10 / 12 |"), rows[0]
PY
python3 tests/gpu/halflife/report.py --drift "$TMP/none" 2>"$TMP/err" && fail "--drift of a folder without drift passed"
grep -q "no drift-NAME.json" "$TMP/err" || fail "--drift message: $(cat "$TMP/err")"
exit 0
