#!/bin/sh
# The workbench at 80x24 with htop's habits, under tmux: the help (?) scrolls to its
# last line, Settings to its last setting with that setting's help whole; F10 quits;
# without colour (NO_COLOR) each chart line has its own glyph and the legend shows it;
# Results sorts stably (tied rows stay in run order, ascending and descending) and the
# selection follows its row through a sort; / finds a row, n the next one.
set -u
. "$(dirname "$0")/lib/tui.sh"
SHARED=${GRAFT_SHARED:-/work/shared}
MODEL="$SHARED/models/tinyllamas/stories260K/stories260K.bin"
[ -r "$MODEL" ] || { echo "stories260K not found under $SHARED"; exit 77; }
tui_setup

# --- help and Settings at 80x24 (demo data) ---
tui_start h 80 24 TERM=xterm-256color LANG=C.UTF-8 -- --demo
tui_wait h "3 Stats" || fail "start"
tui_keys h 7 '?'
tui_wait h "lines 1-20 of" || fail "the help on Results does not say it scrolls"
last="End                  newest row"
tui_screen h | grep -qF "$last" && fail "the help's last line shows before scrolling (the test would prove nothing)"
tui_keys h NPage NPage    # (Home / End differ between tmux and TERM=xterm-256color; pages do not)
tui_wait h "$last" || fail "the help did not scroll to its last line"
total=$(tui_screen h | grep -oE "lines [0-9]+-[0-9]+ of [0-9]+" | sed -E 's/.* of //')
tui_screen h | grep -qE "lines $((total - 19))-$total of $total " || fail "the help's position does not end at its last line ($total)"
tui_keys h Up
tui_gone h "$last" || fail "Up did not scroll the help back"
tui_keys h PPage
tui_wait h "lines 1-20 of" || fail "PgUp did not scroll the help to its top"
# the mouse wheel scrolls it too (xterm SGR reports: 65 wheel down)
for i in 1 2; do tmux -L "$SOCK" send-keys -t h -l "$(printf '\033[<65;40;10M')"; done
tui_wait h "$last" || fail "the mouse wheel did not scroll the help"
tui_keys h x
i=0; while tui_screen h | grep -qF "lines " && [ $i -lt 30 ]; do sleep 0.1; i=$((i+1)); done
tui_gone h "help ─" || fail "the help did not close"
# the prompt box's entry: ^W a word, ^A / ^E, ^U all before the cursor, wide characters in two columns
tui_keys h 7 g
tui_wait h "prompt:" || fail "prompt box"
tui_keys h -l "Once upon a time"
tui_wait h "prompt: Once upon a time" || fail "typing"
tui_keys h C-w
tui_wait h "prompt: Once upon a " || fail "^W"
tui_gone h "prompt: Once upon a time" || fail "^W left the word"
tui_keys h -l "中文"
tui_wait h "prompt: Once upon a 中文" || fail "wide characters"
tui_keys h C-a; tui_keys h -l ">"
tui_wait h "prompt: >Once upon a 中文" || fail "^A"
tui_keys h C-e; tui_keys h -l "!"
tui_wait h "prompt: >Once upon a 中文!" || fail "^E"
tui_keys h C-u
tui_wait h "(empty: from BOS alone)" || fail "^U did not clear"
tui_keys h Escape
sleep 0.2
# the Log: / finds the newest line holding the text, n the next older one; Left does not leave the Log
tui_keys h 8
tui_wait h "demo: synthetic data" || fail "Log"
tui_keys h / s y n t h e t i c Enter
tui_wait h "'synthetic': line " || fail "Log search"
hit=$(tui_screen h | grep -o "'synthetic': line [0-9]*")
tui_keys h n
tui_wait h "'synthetic': no older line holds it" || fail "n: the demo log has one line holding it"
tui_keys h Left
sleep 0.2
tui_wait h "search: synthetic" || fail "Left left the Log (it scrolls sideways there)"
echo "log search: $hit"
tui_keys h 9
tui_wait h "Stage 2 steps" || fail "Settings"
tui_keys h NPage
tui_wait h "→ race recall" || fail "Settings' last setting not selected"
tui_wait h "recall accuracy at four" || fail "the last setting's help is not shown whole"
tui_screen h | grep -qF "↑↓ pick   ←→ halve / double" || fail "Settings' last line cut at 80x24"
tui_keys h F10
tui_wait h "GRAFT_EXIT=0" || fail "F10 did not quit"

# --- Settings in 80x14: the list scrolls, the selection stays in view ---
tui_start s 80 14 TERM=xterm-256color LANG=C.UTF-8 -- --demo
tui_wait s "3 Stats" || fail "start (80x14)"
tui_keys s 9
tui_wait s "(more below)" || fail "Settings in 80x14 does not say more is below"
tui_keys s NPage
tui_wait s "→ race recall" || fail "the last setting is not in view at 80x14"
tui_keys s PPage
tui_wait s "→ Stage 2 steps" || fail "the first setting is not in view again"
tui_keys s q
tui_wait s "GRAFT_EXIT=0" || fail "quit (80x14)"

# --- NO_COLOR: one glyph per line of the chart, and the legend ---
tui_start nc 80 24 TERM=xterm-256color LANG=C.UTF-8 NO_COLOR=1 -- --demo
tui_wait nc "3 Stats" || fail "start (NO_COLOR)"
tui_keys nc 6
tui_wait nc "*** taylor-calibrate   +++ random" || fail "no legend with the series' glyphs"
plot=$(tui_screen nc | sed -n '9,20p')
printf '%s\n' "$plot" | grep -q '\*' && printf '%s\n' "$plot" | grep -q '+' || { printf '%s\n' "$plot"; fail "the chart lacks one of the glyphs"; }
printf '%s\n' "$plot" | grep -q "$(printf '\342\240')" && { printf '%s\n' "$plot"; fail "braille dots without colour"; }
tui_keys nc q
tui_wait nc "GRAFT_EXIT=0" || fail "quit (NO_COLOR)"

# --- Results: stable sort, the selection follows its row, search ---
# the teacher's session key as the workbench makes it: an absolute path as given (a symlinked ../shared
# stays as it is), a relative one resolved
KEY=$(python3 -c 'import os, sys; p = sys.argv[1]; print(p if os.path.isabs(p) else os.path.realpath(p))' "$MODEL")
row() { printf '{"run": "ablate", "strategy": "uniform", "keep": 0.5, "init": "%s", "stage2_steps": 5, "corpus": "c.txt", "eval_windows": 4, "ctx": 256, "ppl": %s}' "$1" "$2"; }
mkdir -p "$XDG_STATE_HOME/graft"
cat > "$XDG_STATE_HOME/graft/session.json" <<JSON
{"version": 2, "current": "$KEY", "teachers": [{"key": "$KEY", "name": "stories260K.bin",
 "results": [$(row random 20), $(row taylor-only 18), $(row zero-gate 20), $(row small-gate 18)]}]}
JSON
tui_start r 100 24 TERM=xterm-256color LANG=C.UTF-8 -- "'$MODEL'"
tui_wait r "5 layers" 300 || fail "stories260K did not load"
tui_keys r 7
tui_wait r "4 rows in run order" || fail "the session's rows"
# order of the init column on screen
inits() { tui_screen r | grep -E '^ uniform' | awk '{print substr($3, 1, 4)}' | tr '\n' ' ' | sed 's/ $//'; }
tui_keys r PPage Down Down   # the third row in run order: zero-gate
tui_wait r "row 3 of 4" || fail "selection"
tui_screen r | grep -qF -- "--init zero-gate" || fail "row 3 is not zero-gate"
i=0
while [ $i -lt 20 ] && ! tui_screen r | grep -qF "sorted by ppl ascending"; do tui_keys r o; sleep 0.15; i=$((i+1)); done
tui_wait r "sorted by ppl ascending" || fail "no sort by ppl"
got=$(inits)
[ "$got" = "tayl smal rand zero" ] || fail "ascending ppl: '$got' (ties not in run order)"
tui_wait r "row 4 of 4" || fail "the selection did not follow zero-gate to row 4"
tui_screen r | grep -qF -- "--init zero-gate" || fail "the selection is not on zero-gate after sorting"
tui_keys r O
tui_wait r "sorted by ppl descending" || fail "reverse"
got=$(inits)
[ "$got" = "rand zero tayl smal" ] || fail "descending ppl: '$got' (ties not in run order)"
tui_wait r "row 2 of 4" || fail "the selection did not follow zero-gate to row 2"
# search: / small Enter selects small-gate, n wraps to... the next row holding it (itself)
tui_keys r / s m a l l Enter
tui_wait r "'small': row 4 of 4" || fail "search did not find small-gate"
tui_screen r | grep -qF -- "--init small-gate" || fail "search did not select small-gate"
tui_keys r / t a y l o r Enter
tui_wait r "'taylor': row 3 of 4" || fail "search: taylor-only"
tui_keys r n
tui_wait r "'taylor': row 3 of 4" || fail "n: the only taylor row again"
tui_keys r q
sleep 0.3
tui_screen r | grep -qF "Quit anyway" && tui_keys r y
tui_wait r "GRAFT_EXIT=0" 300 || fail "quit (Results)"
echo "tui_habits: all checks passed"
