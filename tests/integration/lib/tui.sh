# Shared helpers for the tmux-driven workbench tests and benches (sourced, not run).
# Each test gets its own tmux server (-L), temp XDG folders, and bounded waits.

tui_setup() {
    command -v tmux >/dev/null 2>&1 || { echo "tmux is not installed"; exit 77; }
    GRAFT_BIN=${GRAFT_BIN:-build/graft}
    [ -x "$GRAFT_BIN" ] || { echo "graft binary not found at $GRAFT_BIN"; exit 1; }
    TMP=$(mktemp -d)
    SOCK="graft_tui_$$"
    export XDG_CONFIG_HOME="$TMP/config" XDG_STATE_HOME="$TMP/state"
    mkdir -p "$XDG_CONFIG_HOME" "$XDG_STATE_HOME"
    trap 'tmux -L "$SOCK" kill-server >/dev/null 2>&1; sleep 0.2; rm -rf "$TMP"' EXIT
}

# tui_stories: MODEL and TEXT, stories260K and tinystories.txt under $GRAFT_SHARED; skips the test without them.
tui_stories() {
    SHARED=${GRAFT_SHARED:-/work/shared}
    MODEL="$SHARED/models/tinyllamas/stories260K/stories260K.bin"
    TEXT="$SHARED/data/tinystories.txt"
    [ -r "$MODEL" ] && [ -r "$TEXT" ] || { echo "stories260K or tinystories.txt not found under $SHARED"; exit 77; }
}

# tui_evaluate NAME: Enter on 7 Results (the evaluate job), again while the statistics job after a load still runs.
tui_evaluate() {
    tui_keys "$1" 7
    tui_wait "$1" "Enter evaluates" || fail "Results"
    tui_keys "$1" Enter
    sleep 0.5
    i=0
    while [ $i -lt 60 ] && tui_screen "$1" | grep -q "is still running"; do
        sleep 1; i=$((i+1))
        tui_keys "$1" Enter
        sleep 0.5
    done
}

# tui_no_evaluate NAME: waits (at most 30 s) until no evaluate job shows.
tui_no_evaluate() {
    i=0
    while [ $i -lt 300 ] && tui_screen "$1" | grep -q "● evaluate"; do sleep 0.1; i=$((i+1)); done
}

# tui_first_build NAME STUDENTS: tui_evaluate, then waits for something in the folder STUDENTS, the
# Results row and the job's end.
tui_first_build() {
    tui_evaluate "$1"
    i=0
    while [ $i -lt 900 ] && [ -z "$(ls -A "$2" 2>/dev/null)" ]; do sleep 0.1; i=$((i+1)); done
    tui_wait "$1" "hl mean" 300 || fail "no results row"
    tui_no_evaluate "$1"
}

# tui_start NAME WIDTH HEIGHT ENV... -- ARGS: runs graft in a detached session.
tui_start() {
    name=$1 w=$2 h=$3
    shift 3
    envs=""
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs="$envs $1"; shift; done
    [ $# -gt 0 ] && shift
    tmux -L "$SOCK" -f /dev/null new-session -d -s "$name" -x "$w" -y "$h" \
        "env XDG_CONFIG_HOME='$XDG_CONFIG_HOME' XDG_STATE_HOME='$XDG_STATE_HOME' $envs '$GRAFT_BIN' tui $*; echo GRAFT_EXIT=\$?; sleep 60"
}

tui_screen() { tmux -L "$SOCK" capture-pane -p -t "$1"; }
tui_keys() { n=$1; shift; tmux -L "$SOCK" send-keys -t "$n" "$@"; }

# tui_wait NAME FIXED-STRING [TENTHS]: polls capture-pane until the text shows (default 5 s).
tui_wait() {
    n=$1 pat=$2 tries=${3:-50}
    i=0
    while [ $i -lt "$tries" ]; do
        if tui_screen "$n" | grep -qF -- "$pat"; then return 0; fi
        sleep 0.1
        i=$((i + 1))
    done
    echo "timed out waiting for '$pat' on screen $n; it shows:"
    tui_screen "$n"
    return 1
}

# tui_gone NAME FIXED-STRING [TENTHS]: polls until the text no longer shows (a key takes effect a
# redraw later, so a screen read right after the key can still show the old text).
tui_gone() {
    n=$1 pat=$2 tries=${3:-50}
    i=0
    while [ $i -lt "$tries" ]; do
        tui_screen "$n" | grep -qF -- "$pat" || return 0
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}

fail() { echo "FAIL: $*"; exit 1; }

# tui_click NAME COL ROW: a left click (1-based cell), as an xterm SGR mouse report.
tui_click() {
    tmux -L "$SOCK" send-keys -t "$1" -l "$(printf '\033[<0;%d;%dM\033[<0;%d;%dm' "$2" "$3" "$2" "$3")"
}

# tui_col NAME ROW TEXT: 1-based column where TEXT starts on screen row ROW (characters, not bytes).
tui_col() {
    tui_screen "$1" | sed -n "${2}p" | python3 -c "import sys, re; m = re.search(sys.argv[1], sys.stdin.read()); print(m.start() + 1 if m else 0)" "$3"
}

# tui_settings JSON: run settings for the next start, as a session file
# (e.g. '{"stage2_steps": 10, "eval_windows": 8}'; the Settings screen's keys).
tui_settings() {
    mkdir -p "$XDG_STATE_HOME/graft"
    printf '{"version": 2, "settings": %s}\n' "$1" > "$XDG_STATE_HOME/graft/session.json"
}

# tui_need_stories: MODEL (stories260K) and TEXT (tinystories.txt) from
# $GRAFT_SHARED (default: ../shared beside the source tree), or skip (77)
tui_need_stories() {
    SHARED=${GRAFT_SHARED:-$(cd "$(dirname "$0")/../../.." && pwd)/shared}
    MODEL="$SHARED/models/tinyllamas/stories260K/stories260K.bin"
    TEXT="$SHARED/data/tinystories.txt"
    [ -r "$MODEL" ] && [ -r "$TEXT" ] || { echo "stories260K or tinystories.txt not found under $SHARED"; exit 77; }
}
