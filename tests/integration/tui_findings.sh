#!/bin/sh
# Issue 18's findings 1, 2 and 4, reproduced under tmux on stories260K and the
# real SmolLM2-135M (scripts/fetch-teachers.sh smollm2), and passing:
#   1. what was computed for one teacher never shows (or is used) under
#      another: after ar scores, an evaluation and its perplexity on
#      stories260K, SmolLM2's Plan is its own uniform 15 of 30 with no scores,
#      its Results are empty; a third teacher (the tiny Hugging Face qwen2
#      fixture) likewise; switching back from the recent list brings each
#      teacher's own numbers back, and the session keeps them apart.
#   2. after a cancel the screen updates by itself (no key pressed): the job
#      line goes from "cancelling" to "last job: evaluate cancelled".
#   4. cancelling Plan's ar selection on the 135M teacher stops quickly: the
#      workbench measures the time from c to the job's end and logs it.
# Bound on that time: 5 s. The goal is < 1 s (the engine checks between
# layers: ~0.1 s of work on this teacher); 5 s leaves room for a busy 2-core
# machine and still fails the 20.6 s of the issue.
set -u
. "$(dirname "$0")/lib/tui.sh"
SHARED=${GRAFT_SHARED:-/work/shared}
STORIES=$SHARED/models/tinyllamas/stories260K/stories260K.bin
TEXT=$SHARED/data/tinystories.txt
SMOL=${GRAFT_TEACHERS:-${XDG_CACHE_HOME:-$HOME/.cache}/graft/teachers}/SmolLM2-135M-Instruct.Q4_1.gguf
QWEN=${GRAFT_ROOT:-.}/tests/fixtures/hf/qwen2
[ -r "$STORIES" ] && [ -r "$TEXT" ] || { echo "stories260K or tinystories.txt not found under $SHARED"; exit 77; }
[ -r "$SMOL" ] || { echo "SmolLM2-135M not cached (sh scripts/fetch-teachers.sh smollm2)"; exit 77; }
[ -d "$QWEN" ] || { echo "the qwen2 fixture is missing"; exit 77; }
QWEN=$(cd "$QWEN" && pwd)
command -v python3 >/dev/null 2>&1 || { echo "python3 is not installed"; exit 77; }
tui_setup
export XDG_DATA_HOME="$TMP/data"
MAX_CANCEL_S=5

# no job line bullet on screen: the job ended (bounded, tenths)
tui_idle() {
    i=0
    while tui_screen "$1" | grep -qF "●" && [ $i -lt "${2:-600}" ]; do sleep 0.1; i=$((i + 1)); done
    tui_screen "$1" | grep -qF "●" && { tui_screen "$1"; fail "a job still runs after $(( ${2:-600} / 10 )) s"; }
    return 0
}
open_teacher() { # NAME PATH WAITFOR
    tui_keys "$1" 1 o
    tui_keys "$1" -l "$2"
    tui_keys "$1" Enter
    tui_wait "$1" "$3" 600 || fail "$2 did not load"
}
# the latency logged for the last cancel of job $2: "... (stopped X s after c)"
cancel_latency() {
    tui_keys "$1" 8
    tui_wait "$1" "$2: cancelled after" 100 || fail "$2 not cancelled"
    tui_screen "$1" | grep -F "$2: cancelled after" | tail -n 1 | sed -n 's/.*(stopped \([0-9.]*\) s after c).*/\1/p'
}

tui_settings '{"stage2_steps": 20, "eval_windows": 8}'
tui_start f 120 40 TERM=xterm-256color LANG=C.UTF-8 XDG_DATA_HOME="$XDG_DATA_HOME" -- "'$STORIES'" --text "'$TEXT'"
tui_wait f "stories260K.bin · 5 layers" 200 || fail "stories260K did not load"
tui_idle f

# --- stories260K: ar scores, an evaluated student, its teacher perplexity ---
tui_keys f 2 s Enter
tui_wait f "ar: kept layers ranked by the scores below" 600 || fail "ar scores on stories260K"
tui_idle f
ar_rows=$(tui_screen f | grep -E "^ +>? +[0-9]+ (■|□) " | sed 's/ *$//')
tui_keys f 7 Enter
tui_wait f "headless: graft eval" 900 || fail "evaluation on stories260K"
tui_idle f
stories_ppl=$(tui_screen f | sed -n 's/.*teacher perplexity \([0-9.]*\) on.*/\1/p' | head -n 1)
[ -n "$stories_ppl" ] || { tui_screen f; fail "no teacher perplexity on stories260K"; }
echo "stories260K: teacher ppl $stories_ppl"

# --- finding 1: SmolLM2 shows its own plan and results, none of stories260K's ---
open_teacher f "$SMOL" "SmolLM2-135M-Instruct.Q4_1.gguf · 30 layers"
tui_idle f 900 # its statistics
tui_keys f 2
tui_wait f "strategy [uniform]" 50 || fail "SmolLM2's plan is not its own (uniform)"
tui_wait f "keep 50% (15 of 30)" 10 || fail "SmolLM2: keep line"
tui_wait f "15 of 30 layers keep attention" 10 || fail "SmolLM2: the cost line disagrees with the ratio"
tui_screen f | grep -E "^ +>? +[0-9]+ (■|□) " | grep -qE "(attention|GDN) +[0-9]" && { tui_screen f; fail "SmolLM2 shows scores"; }
tui_keys f s
tui_wait f "ar scores not computed yet" 10 || fail "SmolLM2 claims ar scores"
tui_keys f S
tui_keys f 7
tui_wait f "teacher perplexity on tinystories w8: not measured yet" 20 || fail "SmolLM2 shows a teacher perplexity"
tui_screen f | grep -qF "$stories_ppl" && { tui_screen f; fail "stories260K's perplexity shows under SmolLM2"; }
tui_wait f "results of converted students of this teacher" 10 || fail "SmolLM2's Results are not empty"

# --- finding 4: cancel of ar selection on SmolLM2 ---
tui_keys f 2 s Enter
tui_wait f "● select" 100 || fail "select did not start"
sleep 4
tui_keys f c
lat=$(cancel_latency f select)
[ -n "$lat" ] || fail "no cancel latency logged for select"
python3 -c "import sys; v = float(sys.argv[1]); assert 0 <= v < $MAX_CANCEL_S, v" "$lat" \
    || fail "select took $lat s to stop after c (bound $MAX_CANCEL_S s)"
echo "finding 4: ar selection on SmolLM2 stopped $lat s after c"
tui_keys f 2 S

# --- finding 2: cancel of an evaluation; the screen updates with no key pressed ---
tui_keys f 7 Enter
tui_wait f "● evaluate" 100 || fail "evaluate did not start"
sleep 9
tui_keys f c
# "cancelling" shows while the job winds down; a cancel that lands in under a
# frame (0.07 s seen under load) may go straight to the job's end line
tui_wait f "cancelling" 20 || tui_screen f | grep -qF "last job: evaluate cancelled" ||
    fail "neither 'cancelling' nor the job's end after c"
tui_wait f "last job: evaluate cancelled" 100 || { tui_screen f; fail "the screen did not update after the cancel (no key pressed)"; }
tui_screen f | grep -qF "cancelling" && { tui_screen f; fail "'cancelling' stayed after the job ended"; }
tui_screen f | grep -qF "● evaluate" && { tui_screen f; fail "the job line still shows the cancelled job"; }
lat=$(cancel_latency f evaluate)
python3 -c "import sys; v = float(sys.argv[1]); assert 0 <= v < $MAX_CANCEL_S, v" "$lat" \
    || fail "evaluate took $lat s to stop after c"
echo "finding 2: evaluate on SmolLM2 stopped $lat s after c; the screen said so by itself"

# --- a third teacher: the qwen2 fixture (no tokenizer: no statistics), its own empty state ---
open_teacher f "$QWEN" "qwen2 · 2 layers"
tui_idle f
tui_keys f 2
tui_wait f "keep 50% (1 of 2)" 50 || fail "qwen2's plan"
tui_keys f 7
tui_wait f "results of converted students of this teacher" 20 || fail "qwen2's Results are not empty"
tui_keys f 3
tui_wait f "not available yet: per-head statistics" 20 || fail "qwen2 shows statistics"

# --- back to stories260K from the recent list: its own numbers come back ---
tui_keys f 1
tui_wait f "Recent teachers" 20 || fail "no recent list"
n=$(tui_screen f | grep -nE "(→|  ) .*stories260K.bin *$" | head -n 1 | cut -d: -f1)
first=$(tui_screen f | grep -nE "(→|  ) .*qwen2 *$" | head -n 1 | cut -d: -f1)
[ -n "$n" ] && [ -n "$first" ] || { tui_screen f; fail "recent list lacks the teachers"; }
k=$((n - first)); while [ $k -gt 0 ]; do tui_keys f Down; k=$((k - 1)); done
tui_keys f Enter
tui_wait f "stories260K.bin · 5 layers" 300 || fail "stories260K did not load again"
tui_idle f
tui_keys f 2
tui_wait f "strategy  uniform  [ar]" 20 || fail "stories260K's ar plan did not come back"
now_rows=$(tui_screen f | grep -E "^ +>? +[0-9]+ (■|□) " | sed 's/ *$//')
[ "$now_rows" = "$ar_rows" ] || { printf 'before:\n%s\nnow:\n%s\n' "$ar_rows" "$now_rows"; fail "stories260K's ar scores differ after switching back"; }
tui_keys f 7
tui_wait f "teacher perplexity $stories_ppl on tinystories w8" 20 || fail "stories260K's perplexity did not come back"
tui_wait f "1 row in run order" 10 || fail "stories260K's row did not come back"
tui_keys f 8
tui_wait f "has them already" 20 || fail "stories260K's statistics were recomputed"

# --- quit: the session keeps each teacher's own numbers ---
tui_keys f q
sleep 0.3
tui_screen f | grep -qF "Quit anyway" && tui_keys f y
tui_wait f "GRAFT_EXIT=0" 100 || fail "quit"
python3 - "$XDG_STATE_HOME/graft/session.json" "$stories_ppl" <<'PY' || fail "the session mixes teachers"
import json, sys
s = json.load(open(sys.argv[1]))
by = {t["name"]: t for t in s["teachers"]}
st, sm, qw = by["stories260K.bin"], by["SmolLM2-135M-Instruct.Q4_1.gguf"], by["qwen2"]
assert abs(st["teacher_ppl"]["ppl"] - float(sys.argv[2])) < 1e-4, st["teacher_ppl"]
assert len(st["results"]) == 1 and st["results"][0]["teacher"] == "stories260K.bin", st["results"]
assert "teacher_ppl" not in sm and sm["results"] == [], sm
assert qw["results"] == [] and qw["plan"]["layers"] == 2, qw
assert "ar" in st["plan"]["scores"] and "ar" not in sm["plan"]["scores"], (st["plan"], sm["plan"])
print("session: three teachers, each with its own plan, perplexity and rows")
PY
echo "tui_findings: findings 1, 2 and 4 reproduced and passing"
