# Shared helpers for integration scripts (sourced).
set -u
G=${GRAFT_BIN:?GRAFT_BIN not set}
SHARED=${GRAFT_SHARED:-}
STORIES=$SHARED/models/tinyllamas/stories260K/stories260K.bin
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

skip() { echo "$*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
need_stories() { [ -f "$STORIES" ] || skip "stories260K not found under \$GRAFT_SHARED ($SHARED)"; }

# expect_error "substring" cmd...: the command must exit non-zero (not by a
# signal) with one stderr line containing substring. (rc is taken from the
# command itself: after `if cmd; then ...; fi` $? is the if's status, 0.)
expect_error() {
    want=$1; shift
    rc=0
    "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
    [ "$rc" -eq 0 ] && fail "expected failure: $*"
    [ "$rc" -ge 128 ] && fail "crashed with signal (exit $rc): $*"
    grep -qF -- "$want" "$TMP/err" || fail "stderr of '$*' lacks '$want': $(cat "$TMP/err")"
    [ "$(wc -l <"$TMP/err")" -eq 1 ] || fail "stderr of '$*' is not one line: $(cat "$TMP/err")"
}

# numpy_python: prints the first of python3 and the system's /usr/bin/python3 that
# imports numpy (scripts/install-deps.sh installs Debian's python3-numpy, which a
# python3 earlier on PATH, a pyenv or venv one, does not see); fails if neither does.
numpy_python() {
    for p in python3 /usr/bin/python3; do
        command -v "$p" >/dev/null 2>&1 && "$p" -c 'import numpy' 2>/dev/null && { echo "$p"; return 0; }
    done
    return 1
}

# json_get FILE EXPR: evaluates a Python expression over the parsed JSON `j`
json_get() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }
