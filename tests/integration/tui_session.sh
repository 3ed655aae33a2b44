#!/bin/sh
# The session outlives the terminal, on stories260K under tmux: an evaluated row is
# saved when its job ends; a second graft tui on the same session opens it read-only
# (and writes nothing); kill -HUP during a race leaves the terminal restored (out of
# the alternate screen), the process ended by SIGHUP, and the session with the race
# marked interrupted where it had got to; the next start shows the finished row and
# the interrupted job. --session NAME opens a session of its own; a bad NAME is a
# usage error.
set -u
. "$(dirname "$0")/lib/tui.sh"
tui_need_stories
tui_setup
export XDG_DATA_HOME="$TMP/data"
SESSION="$XDG_STATE_HOME/graft/session.json"
# q, and y when a job still runs (the statistics after a load)
quit() {
    tui_keys "$1" q
    sleep 0.3
    tui_screen "$1" | grep -qF "Quit anyway" && tui_keys "$1" y
    tui_wait "$1" "GRAFT_EXIT=0" 300 || fail "$1 did not quit"
}

# a race long enough to interrupt (100 steps an init), a quick evaluation
tui_settings '{"stage2_steps": 5, "eval_windows": 4, "race_tokens": 51200}'
tui_start a 100 30 TERM=xterm-256color LANG=C.UTF-8 XDG_DATA_HOME="$XDG_DATA_HOME" -- "'$MODEL'" --text "'$TEXT'"
tui_keys a 8
tui_wait a "stats: done" 600 || fail "teacher load + statistics did not finish"
pid=$(cat "$SESSION.lock" 2>/dev/null)
[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || fail "no lock file naming the running graft ($SESSION.lock: '$pid')"
tui_keys a 1
tui_wait a "first conversion: 7 then Enter builds and evaluates" 50 || fail "no first-start line on the Teacher screen"

# a finished job is saved at once, not on quit
tui_keys a 7 Enter
tui_wait a "1 row in run order" 900 || fail "no evaluated row"
i=0
while [ $i -lt 50 ] && ! grep -q '"run":[[:space:]]*"evaluate"' "$SESSION" 2>/dev/null; do sleep 0.1; i=$((i+1)); done
grep -q '"run":[[:space:]]*"evaluate"' "$SESSION" || fail "the finished evaluation is not in the session file before quitting"

# a second instance while the first runs: read-only, says so, writes nothing
sum=$(md5sum "$SESSION" | cut -d' ' -f1)
tui_start b 100 30 TERM=xterm-256color LANG=C.UTF-8 XDG_DATA_HOME="$XDG_DATA_HOME" -- "'$MODEL'" --text "'$TEXT'"
tui_wait b "[read-only]" 300 || fail "the second instance does not say read-only"
tui_keys b 8
tui_wait b "read-only: graft tui (pid $pid) writes this session; graft tui --session NAME opens" 100 \
    || fail "the second instance does not name the writer"
tui_keys b 7 Enter
tui_wait b "read-only session" 50 || fail "a job that adds results ran in the read-only instance"
tui_keys b 9 Right
sleep 0.3
quit b
[ "$(md5sum "$SESSION" | cut -d' ' -f1)" = "$sum" ] || fail "the read-only instance wrote the session"

# --session NAME: its own file and lock, beside the default one; a bad name is refused
tui_start c 100 30 TERM=xterm-256color LANG=C.UTF-8 XDG_DATA_HOME="$XDG_DATA_HOME" -- --session side "'$MODEL'" --text "'$TEXT'"
tui_wait c "5 layers" 300 || fail "--session side did not start"
tui_screen c | grep -qF "[read-only]" && fail "--session side is read-only"
quit c
[ -s "$XDG_STATE_HOME/graft/sessions/side.json" ] || fail "--session side wrote no sessions/side.json"
"$GRAFT_BIN" tui --session ../x --snapshot 1 >/dev/null 2>"$TMP/err"; rc=$?
[ $rc -eq 2 ] && grep -qF -- "--session wants a name" "$TMP/err" || fail "bad --session name: rc $rc, $(cat "$TMP/err")"

# kill -HUP during the race
tui_keys a 6 Enter
tui_wait a "random step" 600 || fail "the race did not start training"
i=0   # a few steps in, so that a resumed run is told from a fresh one by its step
while [ $i -lt 300 ] && ! tui_screen a | grep -qE "random step ([5-9]|[1-9][0-9])/100"; do sleep 0.1; i=$((i+1)); done
kill -HUP "$pid"
tui_wait a "GRAFT_EXIT=129" 300 || fail "graft did not end by SIGHUP (129)"
[ "$(tmux -L "$SOCK" display -p -t a '#{alternate_on}')" = "0" ] || fail "the terminal was left in the alternate screen"
python3 - "$SESSION" <<'PY' || fail "session after the hang-up"
import json, sys
s = json.load(open(sys.argv[1]))
rows = [r for t in s["teachers"] for r in t.get("results", [])]
assert any(r["run"] == "evaluate" for r in rows), rows
race = [j for j in s["jobs"] if j["name"] == "race"]
assert race and race[-1]["outcome"] == "interrupted", s["jobs"]
j = race[-1]
assert j["fraction"] > 0 and j["label"], j
assert j.get("checkpoint", "").startswith("random step "), j  # the race checkpointed as it stopped
print("interrupted race:", j["phase"], j["label"], round(j["fraction"], 3), j["checkpoint"])
PY
ck=$(python3 -c 'import json, sys; print([j for j in json.load(open(sys.argv[1]))["jobs"] if j["name"] == "race"][-1]["checkpoint"].split()[2].rstrip(":"))' "$SESSION")

# the next start: the finished row, and the race interrupted where it was
tui_start d 100 30 TERM=xterm-256color LANG=C.UTF-8 XDG_DATA_HOME="$XDG_DATA_HOME" -- "'$MODEL'" --text "'$TEXT'"
tui_keys d 1
tui_wait d "stories260K.bin" 300 || fail "Teacher screen"
tui_screen d | grep -qF "first conversion:" && fail "the first-start line shows with rows in the session"
tui_keys d 7
tui_wait d "1 row in run order" 300 || fail "the evaluated row did not come back"
tui_keys d 8
tui_wait d "race on stories260K.bin was interrupted at step" 300 || fail "no interrupted line in the log"
tui_keys d h
tui_wait d "interrupted at step" 50 || fail "the job history does not show the interrupted race"
tui_keys d h 6
tui_wait d "interrupted at step" 50 || fail "Recover does not show the interrupted race"
tui_wait d "R resumes, Enter starts afresh; race interrupted at step" 50 || fail "Recover does not offer to resume"
# R: the race goes on from the random run's checkpoint (step $ck), not from step 1
i=0
while [ $i -lt 100 ] && tui_screen d | grep -qF "● stats"; do sleep 0.1; i=$((i+1)); done
tui_keys d R
# the race's own progress line ("random step N/100"); "random step" alone also matches the interrupted
# line's checkpoint ("random step 5: PATH"), which is on screen before the race has drawn a step
first=
i=0
while [ $i -lt 600 ] && [ -z "$first" ]; do
    first=$(tui_screen d | grep -oE "random step [0-9]+/100" | head -n 1 | sed -E 's/random step ([0-9]+).*/\1/')
    [ -n "$first" ] || { sleep 1; i=$((i+1)); }
done
[ -n "$first" ] || fail "R did not start the race (no 'random step N/100' in 600 s): $(tui_screen d | tail -n 5)"
[ "$first" -gt "$ck" ] || fail "the resumed race is at step $first, not past its checkpoint (step $ck)"
echo "resumed at step $first after the checkpoint at step $ck"
tui_keys d c
tui_wait d "race cancelled" 300 || tui_wait d "race interrupted" 10 || true
quit d
echo "tui_session: all checks passed"
