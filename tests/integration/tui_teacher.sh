#!/bin/sh
# The Teacher screen under tmux, against the fake hub: open a repo id typed in
# the entry (live per-file progress, then the summary), a one-line error for an
# unknown repo, the recent teachers saved in the session, and the session's
# last teacher reopened when the workbench starts without MODEL.
. "$GRAFT_ROOT/tests/fakehub/lib.sh"
. "$GRAFT_ROOT/tests/integration/lib/tui.sh"
command -v tmux >/dev/null 2>&1 || skip "tmux is not installed"
need_tinyllamas
TL=karpathy/tinyllamas:stories260K/stories260K.bin
SOCK="graft_teacher_$$"
export XDG_CONFIG_HOME="$T/config" XDG_STATE_HOME="$T/state"
mkdir -p "$XDG_CONFIG_HOME" "$XDG_STATE_HOME"
EXTRA_CLEANUP='tmux -L "$SOCK" kill-server >/dev/null 2>&1; sleep 0.3'
unset GRAFT_TEACHER
# the checkpoint arrives slowly (about 3 s) so the progress can be seen
start_hub '[{"file": "karpathy/tinyllamas/stories260K/stories260K.bin", "kind": "slow", "chunk": 32768, "delay": 0.1, "times": 1}]'
HUBENV="HF_HOME='$HF_HOME' HF_ENDPOINT='$HF_ENDPOINT' LANG=C.UTF-8 TERM=xterm-256color"
SESSION="$XDG_STATE_HOME/graft/session.json"

# tui_wait_re NAME ERE [TENTHS]
tui_wait_re() {
    i=0
    while [ $i -lt "${3:-50}" ]; do
        tui_screen "$1" | grep -qE -- "$2" && return 0
        sleep 0.1
        i=$((i + 1))
    done
    echo "timed out waiting for /$2/ on screen $1; it shows:"
    tui_screen "$1"
    return 1
}

quit() { # quit, confirming when a job still runs; bounded
    tui_keys "$1" q
    sleep 0.3
    tui_screen "$1" | grep -qF "Quit anyway" && tui_keys "$1" y
    tui_wait "$1" "GRAFT_EXIT=0" 100 || fail "$1: graft did not exit cleanly"
}

# --- first run: a Hugging Face fixture (2 layers), then the typed repo id ---
tui_start a 140 32 $HUBENV -- graft-test/qwen2-fixture
tui_keys a 1
tui_wait a "layers      2" 200 || fail "the qwen2 fixture did not load"
tui_wait a "Recent teachers" 50 || fail "no recent list after the first load"
i=0 # statistics follow a load; wait until no job runs (bounded)
while tui_screen a | grep -qF "●" && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
tui_keys a o
tui_wait a "open:" || fail "o did not focus the entry"
tui_keys a -l "$TL"
# while typing, 'q' and digits are text, not frame keys: the screen must not change
tui_wait a "open: $TL" || fail "typed text not shown in the entry"
tui_keys a Enter
tui_wait a "opening $TL" 50 || fail "no 'opening' line"
tui_wait_re a "Files [01]/2  [0-9.]+ [kM]?B / 1.1 MB" 50 || fail "no total progress"
tui_wait a "→ stories260K/stories260K.bin" 50 || fail "no per-file line for the checkpoint"
tui_wait_re a "[1-9][0-9.]* [kM]?B / 1.1 MB" 50 || fail "no per-file bytes for the checkpoint"
tui_wait_re a "[0-9] [kM]?B/s +eta [0-9]+s" 50 || fail "no download speed and eta"
tui_screen a | grep -qF "████" || fail "no progress bar while downloading"

tui_wait a "layers      5" 300 || fail "stories260K did not load"
tui_wait a "heads       8 query" 10 || fail "summary lacks 8 heads"
tui_wait a "Files of $TL" 10 || fail "the loaded teacher's files are not listed"
tui_screen a | grep -qE "done +[0-9.]+ [kM]?B  stories260K/stories260K.bin" || { tui_screen a; fail "checkpoint not marked done"; }
COMMIT=$(hub_commit karpathy/tinyllamas)
tui_screen a | grep "^  path  " | grep -qE "${COMMIT#??????????}/stories260K/stories260K.bin *\$" \
    || { tui_screen a; fail "resolved path not in the cache"; }
tui_screen a | grep -qF "(f32 weights)" || fail "dtype missing"

# --- an unknown repo: one error on the screen (whole) and in the Log, no crash; the files stay the teacher's ---
i=0
while tui_screen a | grep -qF "●" && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
tui_keys a o
tui_keys a -l "nobody/no-such-model"
tui_keys a Enter
tui_wait a "error: " 100 || fail "no error line for an unknown repo"
n=$(tui_screen a | grep -c "error: ")
[ "$n" -eq 1 ] || { tui_screen a; fail "expected one error line, got $n"; }
tui_screen a | grep -F "error: " | grep -qi "nobody/no-such-model" || fail "the error does not name the repo"
tui_wait a "layers      5" 10 || fail "the loaded teacher was lost after the error"
tui_screen a | grep -qF "Files of $TL" || { tui_screen a; fail "the failed open's files replaced the teacher's"; }
tui_keys a 8
tui_wait a "load: error after" 20 || fail "the error is not in the Log"
tui_keys a 1
quit a
python3 - "$SESSION" "$TL" "$CACHE/models--karpathy--tinyllamas/snapshots/$COMMIT/stories260K/stories260K.bin" <<'PY' \
    || { cat "$SESSION"; fail "recent teachers not saved as expected"; }
import json, sys
r = json.load(open(sys.argv[1]))["recent"]
assert [x["arg"] for x in r] == [sys.argv[2], "graft-test/qwen2-fixture"], r
assert r[0]["path"] == sys.argv[3], r[0]
PY

# --- second run, no MODEL: the session's last teacher, from the cache, and the recent list ---
tui_start b 140 32 $HUBENV HF_HUB_OFFLINE=1 --
tui_keys b 1
tui_wait b "layers      5" 200 || fail "the session's last teacher was not reopened"
tui_wait b "cached" 20 || fail "cached files not shown as such"
tui_screen b | grep -qF "→ $TL" || { tui_screen b; fail "recent list lacks the last teacher at the cursor"; }
tui_screen b | grep -qF "graft-test/qwen2-fixture" || fail "recent list lacks the first teacher"
i=0
while tui_screen b | grep -qF "●" && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
tui_keys b Down Enter
tui_wait b "layers      2" 200 || fail "Enter on a recent teacher did not open it"
# offline and missing: one line, no crash
i=0
while tui_screen b | grep -qF "●" && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
tui_keys b o
tui_keys b -l "graft-test/never-downloaded"
tui_keys b Enter
tui_wait b "HF_HUB_OFFLINE" 100 || fail "no offline error"
# a local checkpoint: its files (and the tokenizer beside it) listed as on disk
tui_keys b o
tui_keys b -l "$SHARED_BIN"
tui_keys b Enter
tui_wait b "layers      5" 200 || fail "the local checkpoint did not load"
tui_wait_re b "cached +[0-9.]+ [kM]?B  tok512.bin" 20 || fail "the tokenizer beside the checkpoint is not listed"
# a GGUF file carries its own tokenizer: a tokenizer file beside it is not the teacher's and is not listed
mkdir -p "$T/gg"
cp "$GRAFT_ROOT/tests/fixtures/gguf/llama.gguf" "$T/gg/"
cp "$(dirname "$SHARED_BIN")/tok512.bin" "$T/gg/"
i=0
while tui_screen b | grep -qF "●" && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
tui_keys b o
tui_keys b -l "$T/gg/llama.gguf"
tui_keys b Enter
tui_wait b "layers      3" 200 || fail "the GGUF fixture did not load"
tui_wait b "Files of llama.gguf" 20 || fail "the GGUF's files are not listed"
tui_screen b | grep -qF "tok512.bin" && { tui_screen b; fail "a tokenizer beside a GGUF is listed as the teacher's"; }
quit b
echo "tui_teacher: all checks passed"
