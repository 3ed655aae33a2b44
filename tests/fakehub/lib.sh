# Shared setup for tests/integration/hub_*.sh (sourced, POSIX sh).
# Starts tests/fakehub/fakehub.py on 127.0.0.1 with a time limit, points
# HF_ENDPOINT at it, gives graft a temp HF_HOME, shortens the timeouts, and
# kills the server and removes everything on exit.
set -u
: "${GRAFT_ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${GRAFT_BIN:=$GRAFT_ROOT/build/graft}"
: "${GRAFT_SHARED:=$(cd "$GRAFT_ROOT/.." && pwd)/shared}"
export GRAFT_SHARED

skip() { echo "$*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
[ -x "$GRAFT_BIN" ] || fail "no graft binary at $GRAFT_BIN"

T=$(mktemp -d)
HUB_PID=""
cleanup() {
    if [ -n "$HUB_PID" ]; then # bounded: TERM, up to 2 s, then KILL (the server too)
        kill "$HUB_PID" 2>/dev/null
        i=0
        while kill -0 "$HUB_PID" 2>/dev/null && [ $i -lt 40 ]; do sleep 0.05; i=$((i + 1)); done
        kill -9 "$HUB_PID" 2>/dev/null # still our child (unreaped): the id cannot have been reused
        # the server itself, only if that id still runs fakehub.py
        if [ -n "${SERVER_PID:-}" ] && grep -q fakehub "/proc/$SERVER_PID/cmdline" 2>/dev/null; then
            kill -9 "$SERVER_PID" 2>/dev/null
        fi
        wait "$HUB_PID" 2>/dev/null
    fi
    [ -n "${EXTRA_CLEANUP:-}" ] && eval "$EXTRA_CLEANUP"
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

unset HF_TOKEN HUGGING_FACE_HUB_TOKEN HF_HUB_CACHE HUGGINGFACE_HUB_CACHE HF_HUB_OFFLINE TRANSFORMERS_OFFLINE \
      HF_TOKEN_PATH XDG_CACHE_HOME 2>/dev/null
export HF_HOME="$T/hf"
export HF_HUB_DOWNLOAD_TIMEOUT=2 HF_HUB_ETAG_TIMEOUT=5 GRAFT_HUB_RETRY_BASE_MS=50 GRAFT_HUB_MAX_RETRIES=4
CACHE="$HF_HOME/hub"
TOKEN=hf_fake_gated_token

# start_hub [FAULTS_JSON]
start_hub() {
    rm -f "$T/ports"
    timeout 300 python3 -S "$GRAFT_ROOT/tests/fakehub/fakehub.py" --port-file "$T/ports" --token "$TOKEN" \
        --faults "${1:-[]}" 2>"$T/hub.log" &
    HUB_PID=$!
    i=0
    while [ ! -s "$T/ports" ]; do
        i=$((i + 1))
        [ $i -gt 100 ] && { cat "$T/hub.log"; fail "the fake hub did not start"; }
        sleep 0.1
    done
    HUB_URL=$(python3 -S -c 'import json,sys; print(json.load(open(sys.argv[1]))["url"])' "$T/ports")
    SERVER_PID=$(python3 -S -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$T/ports")
    export HF_ENDPOINT="$HUB_URL"
}

# hub_commit REPO
hub_commit() { python3 -S -c 'import json,sys; print(json.load(open(sys.argv[1]))["commits"][sys.argv[2]])' "$T/ports" "$1"; }

# set_faults JSON ; reset_stats
set_faults() {
    python3 -S -c 'import sys,urllib.request; urllib.request.urlopen(urllib.request.Request(sys.argv[1]+"/_control/faults", data=sys.argv[2].encode(), method="POST"), timeout=10).read()' "$HUB_URL" "$1"
}
reset_stats() {
    python3 -S -c 'import sys,urllib.request; urllib.request.urlopen(urllib.request.Request(sys.argv[1]+"/_control/reset", data=b"", method="POST"), timeout=10).read()' "$HUB_URL"
}
# hubstat KEY [FILE]: gets/heads FILE count, or api / auth_leaks; ranges FILE prints the Range headers seen
hubstat() {
    python3 -S - "$HUB_URL" "$@" <<'PY'
import json, sys, urllib.request
s = json.load(urllib.request.urlopen(sys.argv[1] + "/_control/stats", timeout=10))
k = sys.argv[2]
if k in ("gets", "heads"):
    print(s[k].get(sys.argv[3], 0))
elif k == "ranges":
    print(" ".join(r or "-" for r in s["ranges"].get(sys.argv[3], [])))
elif k == "times":
    print(" ".join("%.3f" % t for t in s["times"].get(sys.argv[3], [])))
else:
    print(s[k])
PY
}

# g ARGS...: graft with a time limit; output in $T/out and $T/err, status in $RC
g() {
    timeout 120 "$GRAFT_BIN" "$@" >"$T/out" 2>"$T/err"
    RC=$?
}

expect_ok() { [ "$RC" -eq 0 ] || { cat "$T/err"; fail "$1: graft exited $RC"; }; }
expect_fail() { # what, grep pattern for the error line
    [ "$RC" -ne 0 ] || fail "$1: graft succeeded, expected an error"
    grep -q -- "$2" "$T/err" || { cat "$T/err"; fail "$1: error does not mention '$2'"; }
    [ "$(grep -c 'graft download:' "$T/err")" -eq 1 ] || { cat "$T/err"; fail "$1: expected exactly one error line"; }
}

# check_cache REPO: every snapshot link is relative and points to a blob whose
# sha256 (for 64-hex names) matches its name; no .incomplete left unless $2=partial-ok.
check_cache() {
    python3 -S - "$CACHE" "$1" "${2:-}" <<'PY' || fail "cache check failed for $1"
import hashlib, os, sys
cache, repo, partial_ok = sys.argv[1], sys.argv[2], sys.argv[3] == "partial-ok"
store = os.path.join(cache, "models--" + repo.replace("/", "--"))
bad = []
for root, dirs, files in os.walk(os.path.join(store, "snapshots")):
    for f in files:
        p = os.path.join(root, f)
        if not os.path.islink(p):
            bad.append("not a symlink: " + p); continue
        t = os.readlink(p)
        if t.startswith("/"):
            bad.append("absolute link: " + p)
        if not os.path.isfile(p):
            bad.append("dangling link: " + p)
blobs = os.path.join(store, "blobs")
for b in (os.listdir(blobs) if os.path.isdir(blobs) else []):
    if b.endswith(".incomplete"):
        if not partial_ok:
            bad.append("leftover partial: " + b)
        continue
    if len(b) == 64:
        h = hashlib.sha256(open(os.path.join(blobs, b), "rb").read()).hexdigest()
        if h != b:
            bad.append("corrupt blob: " + b)
for x in bad:
    print(x)
sys.exit(1 if bad else 0)
PY
}

# snapshot_file REPO FILE -> path in the snapshot of refs/main
snapshot_file() {
    store="$CACHE/models--$(echo "$1" | sed 's|/|--|')"
    echo "$store/snapshots/$(cat "$store/refs/main")/$2"
}
SHARED_BIN="$GRAFT_SHARED/models/tinyllamas/stories260K/stories260K.bin"
need_tinyllamas() { [ -f "$SHARED_BIN" ] || skip "no $SHARED_BIN (set GRAFT_SHARED)"; }

# slow_tinyllamas DELAY: the hub serves stories260K.bin (TL:F, sha256 SHA, blobs in BLOBS) in 32 kB
# chunks DELAY seconds apart, once (a later request gets it at full speed)
slow_tinyllamas() {
    need_tinyllamas
    TL=karpathy/tinyllamas
    F=stories260K/stories260K.bin
    SHA=b0a507e7ad0f626624f17112325e66691f9076d622e1d3274d103d00299f2696
    BLOBS="$CACHE/models--karpathy--tinyllamas/blobs"
    start_hub "[{\"file\": \"$TL/$F\", \"kind\": \"slow\", \"chunk\": 32768, \"delay\": $1, \"times\": 1}]"
}

# wait_partial PID BYTES: until the partial download holds more than BYTES (fails after 20 s; kills PID)
wait_partial() {
    i=0
    until [ "$(cat "$BLOBS/$SHA".*.incomplete 2>/dev/null | wc -c)" -gt "$2" ]; do
        i=$((i + 1))
        [ $i -gt 400 ] && { kill -9 "$1"; fail "the partial file never reached $2 bytes: $(cat "$T/err")"; }
        sleep 0.05
    done
}

# term_and_wait PID WHAT: SIGTERM to PID, which must end within 5 s (a hang guard: cancellation is
# prompt); RC gets its exit status
term_and_wait() {
    kill -TERM "$1"
    i=0
    while kill -0 "$1" 2>/dev/null; do
        i=$((i + 1))
        [ $i -gt 100 ] && fail "$2 did not stop within 5 s of SIGTERM"
        sleep 0.05
    done
    wait "$1"
    RC=$?
}
