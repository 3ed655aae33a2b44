#!/bin/sh
# The tables of measured runs in docs/ are printed from the runs' --json
# outputs (docs/runs/), never typed: every `<!-- report: ... -->` block and its
# SVG must equal what tests/gpu/runs/report.py makes of the JSON now; and the
# check must catch a typed number (one digit of a table changed in a copy).
# (run alone: defaults as tests/run.sh sets them)
: "${GRAFT_ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}" "${GRAFT_BIN:=$GRAFT_ROOT/build/graft}"
export GRAFT_ROOT GRAFT_BIN
. "$(dirname "$0")/../lib.sh"
cd "$GRAFT_ROOT" || fail "no $GRAFT_ROOT"
docs=$(grep -l '<!-- report: ' docs/*.md)
[ -n "$docs" ] || fail "no report blocks in docs/*.md"
python3 tests/gpu/runs/report.py docs $docs 2>"$TMP/err" || fail "$(cat "$TMP/err")"
# a copy with one table cell changed (the teacher's perplexity line's first digit) must fail the check
first=$(echo "$docs" | head -n 1)
sed '0,/^teacher perplexity 3/s//teacher perplexity 4/' "$first" >"$TMP/typed.md"
cmp -s "$first" "$TMP/typed.md" && fail "the negative check changed nothing in $first"
python3 tests/gpu/runs/report.py docs "$TMP/typed.md" 2>"$TMP/err2" && fail "a typed number in a report block passed the check"
grep -q "differs from what it prints now" "$TMP/err2" || fail "check message: $(cat "$TMP/err2")"
# the paper report's tables (docs/paper-1.5b.md; tests/gpu/runs/report.py teacher / paper-ablate /
# components / verdict) on the SmolLM2 JSON: --write fills a block, the check passes, a typed number fails
R=docs/runs/smollm2-135m-h200
cat >"$TMP/paper.md" <<DOC
<!-- report: paper-ablate $R/ablate_train.json -->
<!-- /report -->
<!-- report: components $R/ablate_stage1.json -->
<!-- /report -->
<!-- report: verdict $R/ablate_train.json $R/race_lr3e-4_3M.json -->
<!-- /report -->
DOC
python3 tests/gpu/runs/report.py docs "$TMP/paper.md" --write 2>"$TMP/err3" || fail "paper blocks --write: $(cat "$TMP/err3")"
python3 tests/gpu/runs/report.py docs "$TMP/paper.md" 2>"$TMP/err3" || fail "paper blocks check: $(cat "$TMP/err3")"
python3 - "$TMP/paper.md" "$R" <<'PY' || fail "paper tables do not say what the JSON says"
import json, sys
doc, r = open(sys.argv[1]).read(), sys.argv[2]
a = json.load(open(f"{r}/ablate_train.json"))
tc = [x for x in a["rows"] if x["init"] == "taylor-calibrate" and x["keep"] == 0.5][0]
rnd = [x for x in a["rows"] if x["init"] == "random" and x["keep"] == 0.5][0]
# the six-init table: taylor-calibrate (fitted scaled before the choice existed) at 50 %
line = [l for l in doc.splitlines() if l.startswith("| taylor-calibrate | scaled |")][0]
assert f"{tc['ppl']:.2f}" in line, line
# the verdict of the 50 % claim follows its criterion
v = [l for l in doc.splitlines() if "uniform 50 % zero-shot ppl" in l][0]
assert v.endswith("| holds |") == (tc["ppl"] < rnd["ppl"]), v
s = json.load(open(f"{r}/ablate_stage1.json"))
none = [x for x in s["rows"] if x["init"] == "taylor-calibrate" and x["stage1"] == [] and x["keep"] == 0.25][0]
assert [l for l in doc.splitlines() if l.startswith("| none (= align-only) |")][0].split(" | ")[1] == f"{none['ppl']:.2f}"
PY
sed 's/| taylor-calibrate | scaled | \([0-9]\)/| taylor-calibrate | scaled | 9\1/' "$TMP/paper.md" >"$TMP/paper2.md"
cmp -s "$TMP/paper.md" "$TMP/paper2.md" && fail "the negative paper check changed nothing"
python3 tests/gpu/runs/report.py docs "$TMP/paper2.md" 2>/dev/null && fail "a typed number in a paper block passed the check"
# docs/paper-1.5b.md: every table still to fill names a command report.py knows
grep -o '<!-- pending report: [a-z-]*' docs/paper-1.5b.md | awk '{print $4}' | while read -r c; do
    case $c in ablate|race|teacher|paper-ablate|components|verdict) ;; *) fail "docs/paper-1.5b.md: unknown report command $c" ;; esac
done || exit 1
exit 0
