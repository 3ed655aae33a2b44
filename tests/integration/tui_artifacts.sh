#!/bin/sh
# Every student folder belongs to the request that made it (issue: the
# workbench once named folders by teacher file name + plan only, so a second
# build overwrote the first). Under tmux, on the real stories260K teacher:
#   1. build a student on Results;
#   2. open a second teacher file with the same name in another folder (a copy
#      of stories260K with some weights perturbed), build again;
#   3. back on the first teacher, other Stage 2 steps (Settings), build again;
# then: three folders, each config.json records its own request (teacher
# identity, steps), each row's command names its own folder and `g` opens
# its own; a folder whose recorded request changed is refused by `g` with a
# clear line.
set -u
. "$(dirname "$0")/lib/tui.sh"
SHARED=${GRAFT_SHARED:-/work/shared}
MODEL="$SHARED/models/tinyllamas/stories260K/stories260K.bin"
TOK="$SHARED/models/tinyllamas/stories260K/tok512.bin"
TEXT="$SHARED/data/tinystories.txt"
[ -r "$MODEL" ] && [ -r "$TOK" ] && [ -r "$TEXT" ] || { echo "stories260K or tinystories.txt not found under $SHARED"; exit 77; }
tui_setup
export XDG_DATA_HOME="$TMP/data"
STUDENTS="$XDG_DATA_HOME/graft/students"

# the other teacher: the same file name, the token embedding's first 4096 floats scaled by 1.01
mkdir -p "$TMP/other"
OTHER="$TMP/other/stories260K.bin"
python3 - "$MODEL" "$OTHER" <<'PY' || fail "could not write the perturbed teacher"
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
hdr = 7 * 4  # llama2.c header: 7 int32, then float32 weights (the token embedding first)
n = 4096
w = struct.unpack_from("<%df" % n, b, hdr)
struct.pack_into("<%df" % n, b, hdr, *[x * 1.01 for x in w])
open(sys.argv[2], "wb").write(bytes(b))
PY
cp "$TOK" "$TMP/other/"
cmp -s "$MODEL" "$OTHER" && fail "the perturbed teacher equals the first"

folders() { ls -d "$STUDENTS"/* 2>/dev/null | wc -l | tr -d ' '; }
# the selected row's command (under the table), joined
row_command() {
    tui_screen w | sed -n '/headless: /,/^ *$/p' | grep -v -e "hidden at this width" -e "last job:" \
        | sed 's/.*headless: //; s/^ *//' | tr '\n' ' ' | sed 's/ *$//'
}
# build on Results and wait for the row; prints the new folder
build() {
    before=$(folders)
    tui_keys w 7
    tui_wait w "Enter evaluates" || fail "Results"
    tui_keys w Enter
    sleep 0.5
    i=0 # the statistics job that follows a load may still run: Enter again (the line stays until the next one)
    while [ $i -lt 60 ] && tui_screen w | grep -q "is still running"; do
        sleep 1; i=$((i+1))
        tui_keys w Enter
        sleep 0.5
    done
    i=0
    while [ $i -lt 900 ] && [ "$(folders)" = "$before" ]; do sleep 0.1; i=$((i+1)); done
    tui_wait w "hl mean" 300 || fail "no results row"
    i=0 # the job ends after the folder is written: wait until no job runs
    while [ $i -lt 300 ] && tui_screen w | grep -q "● evaluate"; do sleep 0.1; i=$((i+1)); done
}
# g on the selected row: the box names the folder; Esc closes it
box_folder() {
    tui_keys w g
    tui_wait w "│ folder " || fail "the box does not name a folder"
    f=$(tui_screen w | grep -F "│ folder " | head -n 1)
    tui_keys w Escape
    tui_wait w "g prompt box" || fail "Esc did not close the box"
    printf '%s\n' "$f"
}
digest_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]+"/config.json"))["graft_request"]["digest"])' "$1"; }

tui_settings '{"stage2_steps": 4, "eval_windows": 4}'
tui_start w 220 40 TERM=xterm-256color LANG=C.UTF-8 XDG_DATA_HOME="$XDG_DATA_HOME" -- "'$MODEL'" --text "'$TEXT'"
tui_wait w "5 layers" 200 || fail "teacher did not load"
tui_keys w 8
i=0
while [ $i -lt 300 ] && ! tui_screen w | grep -qE "stats: (done|job|error)"; do sleep 0.1; i=$((i+1)); done

# 1. the first teacher
build
[ "$(folders)" = 1 ] || fail "first build: $(folders) folders"
A=$(ls -d "$STUDENTS"/*)
cmdA=$(row_command)
case "$cmdA" in "graft eval '$A' "*) ;; *) fail "row 1's command is not on its folder: $cmdA";; esac
box_folder | grep -qF "$(basename "$A")" || fail "g on row 1 opens another folder"

# 2. the other teacher file of the same name
tui_keys w 1
tui_keys w o
tui_keys w -l "$OTHER"
tui_keys w Enter
tui_wait w "path        $OTHER" 300 || fail "the second teacher did not open"
tui_wait w "0 results rows" 50 || fail "the second teacher is not a teacher of its own"
tui_keys w 8
i=0
while [ $i -lt 300 ] && ! tui_screen w | grep -qE "stats: (done|job|error)"; do sleep 0.1; i=$((i+1)); done
build
[ "$(folders)" = 2 ] || fail "second teacher: $(folders) folders, want 2 (same file name, other weights)"
B=$(ls -d "$STUDENTS"/* | grep -vxF "$A")
cmdB=$(row_command)
case "$cmdB" in "graft eval '$B' "*) ;; *) fail "row 2's command is not on its folder: $cmdB";; esac
box_folder | grep -qF "$(basename "$B")" || fail "g on row 2 opens another folder"
python3 - "$A" "$B" "$MODEL" "$OTHER" <<'PY' || fail "the folders do not record their teachers"
import json, sys, os
for d, t in ((sys.argv[1], sys.argv[3]), (sys.argv[2], sys.argv[4])):
    rec = json.load(open(d + "/config.json"))["graft_request"]
    ident = rec["identity"]["inputs"][0]
    assert ident["path"] == os.path.realpath(t), (ident, t)
    assert len(ident["content"]["sha256"]) == 64 and ident["content"]["size"] == os.path.getsize(t), ident
    assert "--steps 4" in rec["command"], rec["command"]
a = json.load(open(sys.argv[1] + "/config.json"))["graft_request"]["identity"]["inputs"][0]["content"]["sha256"]
b = json.load(open(sys.argv[2] + "/config.json"))["graft_request"]["identity"]["inputs"][0]["content"]["sha256"]
assert a != b, "two teachers, one hash"
PY

# 3. the first teacher again (the recent list: o with its path), other Stage 2 steps
tui_keys w 1
tui_keys w o
tui_keys w -l "$MODEL"
tui_keys w Enter
tui_wait w "path        $MODEL" 300 || fail "the first teacher did not open again"
tui_wait w "1 results rows" 50 || tui_wait w "1 results row" 10 || fail "the first teacher's row is gone"
tui_keys w 9
tui_wait w "Stage 2 steps" || fail "Settings"
tui_keys w +
tui_wait w "Stage 2 steps: " 50 || fail "+ on Settings said nothing"
# the key reaches the screen a redraw later: read the value until it changes (at most ~10 s)
tries=0
while :; do
    tui_wait_steps=$(tui_screen w | grep -oE "Stage 2 steps: [0-9]+" | head -n 1 | grep -oE "[0-9]+$")
    [ -n "$tui_wait_steps" ] && [ "$tui_wait_steps" != 4 ] && break
    tries=$((tries + 1))
    [ $tries -lt 50 ] || fail "+ did not change the Stage 2 steps"
    sleep 0.2
done
build
[ "$(folders)" = 3 ] || fail "other Stage 2 steps: $(folders) folders, want 3"
C=$(ls -d "$STUDENTS"/* | grep -vxF -e "$A" -e "$B")
tui_keys w Down Down  # the newest row is the last (rows in run order)
sleep 0.2
cmdC=$(row_command)
case "$cmdC" in "graft eval '$C' "*) ;; *) fail "row 3's command is not on its folder: $cmdC";; esac
box_folder | grep -qF "$(basename "$C")" || fail "g on row 3 opens another folder"
python3 -c 'import json,sys; c=json.load(open(sys.argv[1]+"/config.json"))["graft_request"]["command"]; assert "--steps %s" % sys.argv[2] in c, c' \
    "$C" "$tui_wait_steps" || fail "the third folder does not record its steps"
[ "$(digest_of "$A")" != "$(digest_of "$C")" ] || fail "one digest for two requests"
echo "three folders: $(basename "$A"), $(basename "$B"), $(basename "$C")"

# the first row (older, the same teacher) still names the first folder
tui_keys w Up Up
sleep 0.2
cmd=$(row_command)
case "$cmd" in "graft eval '$A' "*) ;; *) fail "row 1's command after row 3 was built: $cmd";; esac
box_folder | grep -qF "$(basename "$A")" || fail "g on row 1 opens another folder after row 3 was built"
# its folder now holds another request: g refuses with a line naming it
dA=$(digest_of "$A")
python3 - "$A" <<'PY'
import json, sys
p = sys.argv[1] + "/config.json"
c = json.load(open(p)); c["graft_request"]["digest"] = "0" * 64
json.dump(c, open(p, "w"))
PY
tui_keys w g
tui_keys w Enter
tui_wait w "no longer holds this row's artifact" 50 || fail "g did not refuse a folder another request rewrote"
tui_keys w Escape
echo "row 1 ($dA) refused once its folder's record changed"
tui_keys w q
sleep 0.3
tui_screen w | grep -qF "Quit anyway" && tui_keys w y
tui_wait w "GRAFT_EXIT=0" 50 || fail "quit"
echo "tui_artifacts: all checks passed"
