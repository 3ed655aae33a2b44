#!/bin/sh
# The workbench refuses a terminal it cannot draw on (TERM=dumb, TERM unset,
# an unknown TERM, no terminal at all) with one line and exit 2, before it
# loads anything; and when the session's teacher cannot be opened (a Hub repo,
# offline and not cached) it opens the default teacher and says why, on the
# status line, the Teacher screen and in the Log.
set -u
. "$(dirname "$0")/lib/tui.sh"
tui_setup
SHARED=${GRAFT_SHARED:-/work/shared}
MODEL=$SHARED/models/tinyllamas/stories260K/stories260K.bin
[ -r "$MODEL" ] || { echo "stories260K not found under $SHARED"; exit 77; }

# --- terminals it cannot draw on: one line on stderr, exit 2 ---
for t in dumb unset nosuchterm-xyz; do
    if [ "$t" = unset ]; then envs="TERM="; else envs="TERM=$t"; fi
    tui_start "t_$t" 80 24 LANG=C.UTF-8 $envs -- "'$MODEL'"
    tui_wait "t_$t" "GRAFT_EXIT=2" 50 || fail "TERM=$t: not refused with exit 2"
    n=$(tui_screen "t_$t" | grep -c "graft tui: ")
    [ "$n" -eq 1 ] || { tui_screen "t_$t"; fail "TERM=$t: expected one line, got $n"; }
    tui_screen "t_$t" | grep -q "graft tui: .*\(cursor\|TERM\)" || { tui_screen "t_$t"; fail "TERM=$t: the line does not say why"; }
done
tui_screen t_dumb | grep -qF "TERM=dumb cannot move the cursor" || fail "TERM=dumb: reason"
# no terminal: the same (stdin not a terminal)
err=$(TERM=xterm "$GRAFT_BIN" tui "$MODEL" </dev/null 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] || fail "without a terminal: exit $rc, want 2"
[ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "without a terminal: more than one line: $err"
[ -e "$XDG_STATE_HOME/graft/session.json" ] && fail "a refused start wrote a session"

# --- the session's teacher is gone: the default teacher instead, with the reason ---
mkdir -p "$XDG_STATE_HOME/graft"
cat > "$XDG_STATE_HOME/graft/session.json" <<'JSON'
{"version": 2, "current": "/gone/snapshots/abc/model.bin",
 "teachers": [{"key": "/gone/snapshots/abc/model.bin", "arg": "someorg/gone-model", "name": "someorg/gone-model",
               "plan": {"layers": 12, "strategy": "ar", "keep_ratio": 0.25}}],
 "recent": [{"arg": "someorg/gone-model", "path": "/gone/snapshots/abc/model.bin"}]}
JSON
tui_start fb 100 30 TERM=xterm-256color LANG=C.UTF-8 HF_HUB_OFFLINE=1 HF_HOME="$TMP/hf" GRAFT_TEACHER= --
tui_wait fb "opened the default teacher instead" 200 || fail "no fallback message on the status line"
tui_wait fb "stories260K.bin · 5 layers" 200 || fail "the default teacher did not load"
tui_keys fb 1
tui_wait fb "o: open ORG/NAME" 50 || fail "the Teacher screen"
tui_wait fb "could not open someorg/gone-model" 50 || fail "the Teacher screen does not say why"
tui_wait fb "HF_HUB_OFFLINE is set" 50 || fail "the reason (offline) is not on the Teacher screen"
# the plan shown is the default teacher's own, not the gone teacher's 12-layer ar plan
tui_keys fb 2
tui_wait fb "keep 50% (3 of 5)" 50 || fail "the Plan is not the default teacher's"
tui_keys fb 8
tui_wait fb "could not open someorg/gone-model" 50 || fail "not in the Log"
tui_keys fb q
sleep 0.3
tui_screen fb | grep -qF "Quit anyway" && tui_keys fb y
tui_wait fb "GRAFT_EXIT=0" 100 || fail "quit"
echo "tui_terminal: all checks passed"
