#!/bin/sh
# A Results build whose folder holds a student of another request asks before
# it overwrites (the CLI refuses unless --force). Under tmux, on the real
# stories260K teacher: build a student; make its folder another request's
# (its recorded digest changed, nothing else); build the same plan again:
# the dialog names the folder and both digests; n keeps the folder as it is
# (every file, the record included); the next build asks again and y rebuilds
# it (its record is this request's again, one folder, a second row).
set -u
. "$(dirname "$0")/lib/tui.sh"
tui_need_stories
tui_setup
export XDG_DATA_HOME="$TMP/data"
STUDENTS="$XDG_DATA_HOME/graft/students"
OTHER=1111111111111111111111111111111111111111111111111111111111111111

folders() { ls -d "$STUDENTS"/* 2>/dev/null | wc -l | tr -d ' '; }
digest_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]+"/config.json"))["graft_request"]["digest"])' "$1"; }
# every file of the folder, names and contents: "untouched" means this does not change
folder_sum() {
    python3 - "$1" <<'PY'
import hashlib, os, sys
h = hashlib.sha256()
for name in sorted(os.listdir(sys.argv[1])):
    h.update(name.encode() + b"\0" + open(os.path.join(sys.argv[1], name), "rb").read())
print(h.hexdigest())
PY
}

tui_settings '{"stage2_steps": 4, "eval_windows": 4}'
tui_start w 220 40 TERM=xterm-256color LANG=C.UTF-8 XDG_DATA_HOME="$XDG_DATA_HOME" -- "'$MODEL'" --text "'$TEXT'"
tui_wait w "5 layers" 200 || fail "teacher did not load"

# the first build: one folder, one row
tui_first_build w "$STUDENTS"
[ "$(folders)" = 1 ] || fail "first build: $(folders) folders"
A=$(ls -d "$STUDENTS"/*)
dA=$(digest_of "$A")

# the folder becomes another request's: only its recorded digest changes
python3 - "$A" "$OTHER" <<'PY' || fail "could not rewrite the record"
import json, sys
p = sys.argv[1] + "/config.json"
c = json.load(open(p)); c["graft_request"]["digest"] = sys.argv[2]
json.dump(c, open(p, "w"))
PY
sum=$(folder_sum "$A")

# the same build again: asked, n keeps the folder
tui_evaluate w
tui_wait w "overwrite? y/N" 300 || fail "no overwrite question"
tui_wait w "1111111111;" 10 || fail "the question does not name the folder's digest"
tui_screen w | grep -qF "$(basename "$A" | cut -c1-20)" || { tui_screen w; fail "the question does not name the folder"; }
tui_wait w "overwrite (as graft convert --force)" 10 || fail "the key bar does not say what y does"
tui_keys w n
tui_wait w "nothing was built" 50 || fail "n said nothing"
sleep 0.5
[ "$(folder_sum "$A")" = "$sum" ] || fail "n changed the folder"
[ "$(digest_of "$A")" = "$OTHER" ] || fail "n changed the folder's record"
[ "$(folders)" = 1 ] || fail "n: $(folders) folders"
tui_screen w | grep -qF "overwrite? y/N" && fail "the question stays after n"
echo "n: $(basename "$A") untouched (record $(digest_of "$A" | cut -c1-10))"

# once more: asked again, y rebuilds it
tui_evaluate w
tui_wait w "overwrite? y/N" 300 || fail "no overwrite question the second time"
tui_keys w y
i=0
while [ $i -lt 900 ] && [ "$(digest_of "$A")" != "$dA" ]; do sleep 0.1; i=$((i+1)); done
[ "$(digest_of "$A")" = "$dA" ] || fail "y did not rebuild the folder (record $(digest_of "$A"))"
tui_no_evaluate w
[ "$(folders)" = 1 ] || fail "y: $(folders) folders"
tui_keys w 8
tui_wait w "replaced (--force)" 100 || fail "the Log does not say the folder was replaced"
tui_wait w "yes, building again (as graft convert --force)" 10 || fail "the Log does not record the answer"
tui_keys w 7
tui_wait w "row 2 of 2" 100 || fail "y: no second row"
echo "y: $(basename "$A") rebuilt (record $(echo "$dA" | cut -c1-10))"
tui_keys w q
sleep 0.3
tui_screen w | grep -qF "Quit anyway" && tui_keys w y
tui_wait w "GRAFT_EXIT=0" 50 || fail "quit"
echo "tui_overwrite: all checks passed"
