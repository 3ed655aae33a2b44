#!/bin/sh
# Recall through the race on the Recover screen under tmux, on stories260K:
# with 9 Settings' race recall on, Enter races random vs taylor-calibrate on a
# tiny budget; each run measures recall at four evaluations (graft race
# --recall-every) and the screen draws their curve under the loss curves; the
# Log names each measure.
set -u
. "$(dirname "$0")/lib/tui.sh"
tui_setup
SHARED=${GRAFT_SHARED:-/work/shared}
STORIES=$SHARED/models/tinyllamas/stories260K/stories260K.bin
DATA=$SHARED/data/tinystories.txt
[ -f "$STORIES" ] && [ -f "$DATA" ] || { echo "stories260K or tinystories.txt not found under \$GRAFT_SHARED"; exit 77; }
tui_settings '{"race_tokens": 2048, "race_recall": "on"}'
tui_start rc 100 32 TERM=xterm-256color LANG=C.UTF-8 -- "'$STORIES'" --text "'$DATA'"
tui_keys rc 8
tui_wait rc "stats: done" 1200 || fail "teacher load + statistics did not finish"
tui_keys rc 6
tui_keys rc Enter
tui_wait rc "target reached: random" 3000 || fail "the race did not finish"
tui_wait rc "y: recall accuracy" 50 || fail "no recall chart under the loss"
tui_keys rc 8
tui_wait rc "recall of taylor-calibrate at step 4:" 50 || fail "the Log does not name the last recall measure"
tui_keys rc q
exit 0
