#!/bin/sh
# The workbench under tmux: tabs, the Stats cursor and metrics, resize, help,
# a job with quit confirmation, settings saved on exit, a corrupt config, and
# the ASCII / no-colour fallback.
set -u
. "$(dirname "$0")/lib/tui.sh"
tui_setup

# --- UTF-8, 256 colours, 110x30 ---
tui_start main 110 30 TERM=xterm-256color LANG=C.UTF-8 -- --demo
tui_wait main "3 Stats" || fail "workbench did not start"
tui_wait main "┌ 1 Teacher ┬" || fail "boxed tab bar missing at 110 columns"
tui_wait main "9 Settings ┐" || fail "the Settings tab"
tui_wait main "q quit" || fail "key bar missing"

tui_keys main 8
tui_wait main "demo: synthetic data for 28 layers x 12 heads" || fail "Log screen"
tui_keys main 1
tui_wait main "synthetic statistics (graft tui --demo)" || fail "Teacher screen"
tui_keys main 4
tui_wait main "Stage 1 (taylor-only)" || fail "Calibrate screen"
tui_keys main Tab Tab Tab
tui_wait main "eval slice" || fail "Results screen (Tab from Calibrate)"
tui_keys main 3

# cursor: layer 3, head 2; the live panel must match the headless snapshot
tui_keys main Down Down Down Right Right
tui_wait main "layer 3 head 2" || fail "cursor did not move"
want=$(LANG=C.UTF-8 "$GRAFT_BIN" tui --demo --snapshot stats --size 110x30 \
       --keys '<down><down><down><right><right>' | grep -o 'd         [0-9.e+-]*' | head -n 1)
[ -n "$want" ] || fail "snapshot has no d line"
tui_screen main | grep -qF -- "$want" || { tui_screen main; fail "panel does not show '$want'"; }
echo "head value on screen: $want"
# the JSON snapshot reports the same head, with the exact number behind the text
"$GRAFT_BIN" tui --demo --snapshot stats --json --keys '<down><down><down><right><right>' | python3 -c '
import json, sys
d = json.load(sys.stdin)
c = d["cursor"]
assert d["screen"] == "Stats" and c["layer"] == 3 and c["head"] == 2, c
v = c["values"]["teacher"]["mean_dist"]
shown = sys.argv[1].split()[-1]
assert abs(v - float(shown)) <= 0.01 * abs(v), (v, shown)
' "$want" || fail "JSON snapshot disagrees with the screen"

# mouse: a click on a tab switches screens, a click on a heat-map cell moves the cursor
col=$(tui_col main 2 '8 Log')
[ "$col" -gt 0 ] || fail "no Log tab on row 2"
tui_click main $((col + 1)) 2
tui_wait main "demo: synthetic data for 28 layers" || fail "click on the Log tab"
tui_keys main 3
tui_wait main "layer 3 head 2" || fail "back to Stats"
col=$(tui_col main 4 ' 7 ')            # the header number of head 7
[ "$col" -gt 0 ] || fail "no head 7 in the header"
tui_click main $((col + 1)) 7           # row 7: layers 4 and 5 (two per row)
tui_wait main "layer 4 head 7" || fail "click on a heat-map cell"
tui_click main $((col + 1)) 7           # again: the lower layer of that pair
tui_wait main "layer 5 head 7" || fail "second click on the same cell"

tui_keys main m
tui_wait main "metric: attention entropy (nats)   scale: linear" || fail "metric cycle"
tui_keys main l
tui_wait main "scale: log" || fail "log toggle"

# resize: the frame redraws for 80x24 (compact tab bar, key bar on the last row)
tmux -L "$SOCK" resize-window -t main -x 80 -y 24
tui_wait main "1 Teacher 2 Plan 3 Stats" || fail "no redraw after resize"
last=$(tui_screen main | sed -n 24p)
echo "$last" | grep -qF "q quit" || fail "key bar not on row 24 after resize: '$last'"
tui_screen main | grep -qF "┌ 1 Teacher" && fail "old boxed tab bar still shown after resize"

tui_keys main '?'
tui_wait main "cancel the running job" || fail "help overlay"
tui_keys main x
i=0; while tui_screen main | grep -qF "cancel the running job" && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
tui_screen main | grep -qF "cancel the running job" && fail "help did not close"

# a job runs; the UI stays live; q asks before quitting
tui_keys main p Enter
tui_wait main "● stats" || fail "job progress line missing"
tui_wait main "elapsed" || fail "job line without elapsed time"
tui_keys main 8
tui_wait main "stats: computing statistics" || fail "job log line"
tui_keys main q
tui_wait main "Quit anyway? (y/n)" || fail "no quit confirmation while a job runs"
tui_keys main y
tui_wait main "GRAFT_EXIT=0" || fail "graft did not exit cleanly"
grep -q '"palette":[[:space:]]*"magma"' "$XDG_CONFIG_HOME/graft/config.json" || fail "palette not saved"
[ -e "$XDG_STATE_HOME/graft/session.json" ] && fail "demo data must not be saved as the session"

# --- a corrupt config: a warning in the log, defaults, no crash ---
printf '{"palette": "magma", ' > "$XDG_CONFIG_HOME/graft/config.json"
tui_start corrupt 80 24 TERM=xterm-256color LANG=C.UTF-8 -- --demo
tui_wait corrupt "3 Stats" || fail "did not start with a corrupt config"
tui_keys corrupt 8
tui_wait corrupt "warning: " || fail "no warning about the corrupt config"
n=$(tui_screen corrupt | grep -c "warning: ")
[ "$n" -eq 1 ] || fail "expected one warning line, got $n"
tui_keys corrupt q
tui_wait corrupt "GRAFT_EXIT=0" || fail "quit (corrupt config)"

# --- a saved session comes back (no demo) and is written back on exit ---
mkdir -p "$XDG_STATE_HOME/graft"
cat > "$XDG_STATE_HOME/graft/session.json" <<'JSON'
{"version": 2, "corpus": "c.txt", "current": "/models/tiny.bin",
 "teachers": [{"key": "/models/tiny.bin", "arg": "org/Tiny-Model", "name": "org/Tiny-Model @main",
               "plan": {"layers": 4, "strategy": "ga-s2", "keep_ratio": 0.25},
               "results": [{"run": "evaluate", "strategy": "ga-s2", "keep": 0.25, "init": "taylor-calibrate",
                            "stage2_steps": 300, "corpus": "c.txt", "eval_windows": 32, "ctx": 256, "ppl": 18.9}]}]}
JSON
# restored: the headless snapshot shows what the session holds
LANG=C.UTF-8 "$GRAFT_BIN" tui --snapshot teacher --size 80x24 | grep -qF "org/Tiny-Model @main" \
    || fail "session teacher not restored"
LANG=C.UTF-8 "$GRAFT_BIN" tui --snapshot results --size 100x24 | grep -qF "t-calib  300" \
    || { LANG=C.UTF-8 "$GRAFT_BIN" tui --snapshot results --size 100x24; fail "session results not restored"; }
# live (whatever teacher the workbench opens): quitting writes the session back
tui_start sess 80 24 TERM=xterm-256color LANG=C.UTF-8 --
tui_wait sess "3 Stats" 100 || fail "workbench (no demo) did not start"
tui_keys sess q
sleep 0.2
tui_screen sess | grep -qF "Quit anyway" && tui_keys sess y
tui_wait sess "GRAFT_EXIT=0" 100 || fail "quit (session)"
grep -q '"strategy":[[:space:]]*"ga-s2"' "$XDG_STATE_HOME/graft/session.json" || fail "session not written back"
grep -q '"ppl":[[:space:]]*18.9' "$XDG_STATE_HOME/graft/session.json" || fail "results lost from the session"

# --- ASCII and no colour: LANG=C, NO_COLOR=1 ---
tui_start ascii 80 24 TERM=xterm-256color LANG=C LC_ALL=C NO_COLOR=1 -- --demo
tui_wait ascii "3 Stats" || fail "ASCII start"
tui_keys ascii Down
tui_wait ascii "layer 1 head 0" || fail "ASCII cursor"
scr=$(tui_screen ascii)
printf '%s\n' "$scr" | LC_ALL=C grep -q "$(printf '[\200-\377]')" && { printf '%s\n' "$scr"; fail "non-ASCII bytes under LANG=C"; }
# one layer per line: the cursor on layer 1, layer 2 marked as kept attention
printf '%s\n' "$scr" | grep -qE '^ +1 +\[' || { printf '%s\n' "$scr"; fail "ASCII cursor row missing"; }
printf '%s\n' "$scr" | grep -qE '^ +2 \* ' || { printf '%s\n' "$scr"; fail "ASCII kept marker missing"; }
printf '%s\n' "$scr" | grep -qF "arrows cursor" || fail "ASCII key names"
tui_keys ascii q
tui_wait ascii "GRAFT_EXIT=0" || fail "quit (ASCII)"
echo "tui_basic: all checks passed"
