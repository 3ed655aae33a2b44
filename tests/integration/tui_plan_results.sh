#!/bin/sh
# Plan and Results on the real stories260K teacher under tmux: change the
# strategy and the ratio, toggle a layer (manual plan), evaluate the plan's
# student on Results, and check the perplexity on screen against
# `graft eval STUDENT --split --json` (headless parity), and the command the
# Results screen shows for the row. Stage 2 runs few steps and the evaluation
# slice is short (run settings written to the session) to keep it fast.
set -u
. "$(dirname "$0")/lib/tui.sh"
tui_need_stories
tui_setup
export XDG_DATA_HOME="$TMP/data"
WIN=8

tui_settings "{\"stage2_steps\": 10, \"eval_windows\": $WIN}"
tui_start plan 100 30 TERM=xterm-256color LANG=C.UTF-8 XDG_DATA_HOME="$XDG_DATA_HOME" -- "'$MODEL'" --text "'$TEXT'"
tui_wait plan "5 layers" 200 || fail "teacher did not load"
tui_keys plan 8          # the statistics job follows the load; jobs run one at a time
# (the statistics job may also be refused while the load job is finishing: then no job runs)
i=0
while [ $i -lt 300 ] && ! tui_screen plan | grep -qE "stats: (done|job|error)"; do sleep 0.1; i=$((i+1)); done
tui_screen plan | grep -qE "stats: (done|job|error)" || fail "statistics did not finish"
tui_keys plan 2
tui_wait plan "strategy [uniform]" || fail "Plan screen"
# uniform 50 % of 5 layers: round(2.5) = 3 kept (0, 1, 3); KV cache of stories260K at 32k tokens:
# 2 * 4 KV heads * 8 dims * 4 bytes * 32768 = 8 MB per layer; GDN state 8 heads * 8 * 8 * 4 bytes
tui_wait plan "3 of 5 layers keep attention" || fail "default plan"
tui_wait plan "KV cache at 32k tokens: 40.0 MB → 24.0 MB (GDN state 4.00 KB)" || fail "cost line"
tui_keys plan r          # 50 -> 75 %
tui_wait plan "keep 75% (4 of 5)" || fail "ratio preset"
tui_keys plan = 4 0 Enter  # typed: 40 % -> 2 layers
tui_wait plan "keep 40% (2 of 5)" || fail "typed ratio"
tui_keys plan s          # -> ar: no scores yet
tui_wait plan "strategy  uniform  [ar]" || fail "strategy cycle"
tui_wait plan "ar scores not computed yet" || fail "ar without scores"
tui_keys plan Enter      # the selection job: ar scores, then the plan ranks by them
tui_wait plan "ar: kept layers ranked by the scores below" 300 || fail "ar scores did not arrive"
want=$("$GRAFT_BIN" select "$MODEL" --strategy ar --keep 0.4 --text "$TEXT" --json | python3 -c '
import json, sys; print(" ".join(str(l) for l in json.load(sys.stdin)["kept_layers"]))') || fail "graft select"
got=$(tui_screen plan | grep -F "■ attention" | sed -E 's/^ *>? *([0-9]+) .*/\1/' | tr '\n' ' ' | sed 's/ $//')
[ "$got" = "$want" ] || { tui_screen plan; fail "ar plan on screen '$got' differs from graft select '$want'"; }
echo "ar kept layers: screen $got, graft select $want"
tui_keys plan S          # back to uniform
tui_wait plan "[uniform]" || fail "previous strategy"
tui_keys plan Down Space   # 40 %: layers 0 and 2 kept; layer 1 becomes attention too: manual
tui_wait plan "[manual]" || fail "toggle did not switch to manual"
tui_wait plan "3 of 5 layers keep attention" || fail "toggle did not change the count"

# Results: Enter builds, evaluates and writes the student
tui_keys plan 7
tui_wait plan "Enter evaluates: manual 3 of 5 attention, taylor-calibrate, 10 Stage 2 steps, tinystories w$WIN" \
    || fail "Results header"
tui_keys plan Enter
tui_wait plan "hl mean" 600 || fail "no results row"
tui_wait plan "teacher perplexity " 50 || fail "no teacher perplexity"
scr=$(tui_screen plan)
row=$(printf '%s\n' "$scr" | grep -E ' manual +60% ' | head -n 1)
[ -n "$row" ] || { printf '%s\n' "$scr"; fail "no manual 60% row"; }
printf '%s\n' "$row" | grep -qE " 10 +tinystories w$WIN " || { printf '%s\n' "$row"; fail "the row lacks its steps and slice"; }
ppl=$(printf '%s\n' "$row" | grep -oE ' [0-9]+\.[0-9]{4} ' | head -n 1 | tr -d ' ')
dir=$(ls -d "$XDG_DATA_HOME"/graft/students/*manual* 2>/dev/null | head -n 1)
[ -n "$dir" ] && [ -e "$dir/config.json" ] || fail "no student folder under $XDG_DATA_HOME/graft/students"
echo "screen: $row"
# the command under the table is the one that repeats the row
cmd=$(tui_screen plan | sed -n '/headless: /,/^ *$/p' | grep -v -e "hidden at this width" -e "last job:" | sed 's/.*headless: //; s/^ *//' \
      | tr '\n' ' ' | sed 's/ *$//')
case "$cmd" in "graft eval '$dir' --text '$TEXT' --split --eval-windows $WIN --json"*) ;;
    *) tui_screen plan; fail "the row's command is not graft eval on its student: '$cmd'";; esac
json=$("$GRAFT_BIN" eval "$dir" --text "$TEXT" --split --eval-windows $WIN --json) || fail "graft eval failed"
python3 -c '
import json, sys
d = json.loads(sys.argv[1]); shown = float(sys.argv[2])
assert d["kind"] == "student" and d["gdn_layers"] == [3, 4], d
assert abs(d["ppl"] - shown) <= 0.00006, (d["ppl"], shown)
print("graft eval ppl %.6f, screen %s" % (d["ppl"], sys.argv[2]))
' "$json" "$ppl" || fail "screen perplexity differs from graft eval"

# the ablation table: rows stream in while it runs; c cancels it
tui_keys plan a
tui_wait plan "● ablate" 50 || fail "ablate did not start"
i=0
while [ $i -lt 600 ] && ! tui_screen plan | grep -qE ' uniform +25% +random '; do sleep 0.1; i=$((i+1)); done
tui_screen plan | grep -qE ' uniform +25% +random ' || { tui_screen plan; fail "no streamed ablation row"; }
tui_screen plan | grep -E ' uniform +25% +random ' | grep -qE ' - +tinystories' || fail "the random ablation row shows Stage 2 steps (it ran none: '-')"
tui_keys plan c
tui_keys plan 8
tui_wait plan "ablate: cancelled after" 300 || fail "ablate not cancelled"
tui_keys plan q
sleep 0.2
tui_wait plan "GRAFT_EXIT=0" 50 || fail "quit"
grep -q '"strategy":[[:space:]]*"manual"' "$XDG_STATE_HOME/graft/session.json" || fail "plan strategy not saved"
python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
t = [t for t in s["teachers"] if t["key"] == s["current"]][0]
assert t["plan"]["kept"] == [0, 1, 2], t["plan"]
rows = t["results"]
assert any(r["strategy"] == "manual" and r["stage2_steps"] == 10 and r["eval_windows"] == int(sys.argv[2]) for r in rows), rows
assert s["settings"]["stage2_steps"] == 10, s["settings"]
' "$XDG_STATE_HOME/graft/session.json" $WIN || fail "session lacks the plan, the row or the settings"
# the snapshot restores the plan from the session
"$GRAFT_BIN" tui --snapshot plan --size 80x24 | grep -qF "[manual]" || fail "plan not restored"
echo "tui_plan_results: all checks passed"
