#!/bin/sh
# The folders the workbench's jobs write are claimed like the command line's
# (src/method/place_lock.h: an flock on FOLDER.lock): under tmux, on
# stories260K, a student is built on Results; then, while another process
# (a flock from python, standing in for a `graft convert --out` on the same folder) holds
# that folder's lock, building the same student again is refused with one
# line naming the folder, and the folder, its Results rows and the folder
# count are left as they were; once the lock is free the build runs again
# (the same request reuses its folder).
set -u
. "$(dirname "$0")/lib/tui.sh"
tui_stories
tui_setup
export XDG_DATA_HOME="$TMP/data"
STUDENTS="$XDG_DATA_HOME/graft/students"
holder=
trap '[ -n "$holder" ] && kill "$holder" 2>/dev/null; tmux -L "$SOCK" kill-server >/dev/null 2>&1; sleep 0.2; rm -rf "$TMP"' EXIT

folders() { ls -d "$STUDENTS"/*/ 2>/dev/null | wc -l | tr -d ' '; }
rows() { tui_screen w | grep -c "evaluate  uniform"; }

tui_settings '{"stage2_steps": 2, "eval_windows": 2}'
tui_start w 240 40 TERM=xterm-256color LANG=C.UTF-8 XDG_DATA_HOME="$XDG_DATA_HOME" -- "'$MODEL'" --text "'$TEXT'"
tui_wait w "5 layers" 200 || fail "teacher did not load"

tui_first_build w "$STUDENTS"
[ "$(folders)" = 1 ] || fail "first build: $(folders) folders"
A=$(ls -d "$STUDENTS"/*/ | sed 's:/$::')
[ -e "$A.lock" ] && fail "the job left its lock file $A.lock"
sum_before=$(cat "$A"/* | md5sum)
n_rows=$(rows)

# the holder: one process with the flock (killing it frees the lock; flock(1)'s child would keep it)
python3 -c 'import fcntl, sys, time; f = open(sys.argv[1], "w"); fcntl.flock(f, fcntl.LOCK_EX); time.sleep(120)' "$A.lock" &
holder=$!
i=0
until [ -e "$A.lock" ]; do i=$((i + 1)); [ $i -gt 100 ] && fail "flock did not start"; sleep 0.1; done
sleep 0.2
tui_evaluate w
tui_wait w "student folder $A is being written by another graft process; wait for it to end, then build again" 300 ||
    fail "the job did not refuse a folder another process holds"
tui_no_evaluate w
[ "$(cat "$A"/* | md5sum)" = "$sum_before" ] || fail "the refused job changed the folder"
[ "$(folders)" = 1 ] || fail "the refused job made another folder"
[ "$(rows)" = "$n_rows" ] || fail "the refused job added a Results row"

kill "$holder"
wait "$holder" 2>/dev/null
holder=
tui_evaluate w
tui_wait w "last job: evaluate done in" 600 || fail "once the lock was free, the build did not run"
tui_no_evaluate w
[ "$(folders)" = 1 ] || fail "the same request made a second folder"
[ -e "$A.lock" ] && fail "the job left its lock file"
tui_keys w q
sleep 0.3
tui_screen w | grep -qF "Quit anyway" && tui_keys w y
tui_wait w "GRAFT_EXIT=0" 50 || fail "quit"
echo "tui_place_lock: all checks passed"
