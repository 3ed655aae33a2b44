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
exit 0
