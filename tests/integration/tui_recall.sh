#!/bin/sh
# The Recall view on Results under tmux, on the real stories260K teacher:
# convert (Enter on Results), R on the row, Enter measures recall of the
# teacher and of the row's student; both maps fill, the teacher's row of
# accuracies is graft recall's on the same request (the Log gives the
# command), the table per task appears, Esc closes the view.
set -u
. "$(dirname "$0")/lib/tui.sh"
tui_need_stories
tui_setup
export XDG_DATA_HOME="$TMP/data"
W=110 H=32
tui_settings '{"stage2_steps": 10, "eval_windows": 8}'
tui_start r $W $H TERM=xterm-256color LANG=C.UTF-8 XDG_DATA_HOME="$XDG_DATA_HOME" -- "'$MODEL'" --text "'$TEXT'"
tui_wait r "5 layers" 200 || fail "teacher did not load"
tui_keys r 8
i=0
while [ $i -lt 300 ] && ! tui_screen r | grep -qE "stats: (done|job|error)"; do sleep 0.1; i=$((i+1)); done
tui_keys r 7
tui_wait r "R recall view" || fail "Results does not name R in its key bar"
tui_keys r Enter
tui_wait r "hl mean" 900 || fail "no results row"
tui_keys r R
tui_wait r "Recall: the teacher and student uniform 50% t-calib" || fail "the view did not open on the row's student"
tui_wait r "no measure yet" || fail "the maps are not empty before a measure"
tui_keys r Enter
tui_wait r "task" 1200 || fail "recall did not finish"
scr=$(tui_screen r)
printf '%s\n' "$scr" | grep -q "niah-number" || fail "no table per task: $scr"
# the teacher's map: the row of length 512 (the model's positions), five depths
row=$(printf '%s\n' "$scr" | grep -E "^│? *512 " | head -n 1)
[ -n "$row" ] || { printf '%s\n' "$scr"; fail "no 512 row in the maps"; }
got=$(printf '%s\n' "$row" | python3 -c 'import sys; print(" ".join(sys.stdin.read().split()[1:6]))' | tr -d '│')
want=$("$GRAFT_BIN" recall "$MODEL" --tasks niah-number,multikey,vt --lengths 512 --samples 2 --json 2>/dev/null | python3 -c '
import json, sys
j = json.load(sys.stdin)
ds = sorted({c["depth"] for c in j["cells"]})
out = []
for d in ds:
    cs = [c for c in j["cells"] if c["depth"] == d]
    out.append("%.0f" % (100 * sum(c["correct"] for c in cs) / sum(c["n"] for c in cs)))
print(" ".join(out))')
[ -n "${SHOW:-}" ] && { printf "%s\n" "$scr"; echo "got=$got want=$want"; }
[ "$got" = "$want" ] || { printf '%s\n' "$scr"; fail "the teacher's 512 row is '$got', graft recall says '$want'"; }
tui_keys r Escape
tui_wait r "row 1 of 1" || fail "Esc did not close the view"
tui_keys r q
exit 0
