# Ctrl-C ends every command the way shells expect: by SIGINT (exit status
# 130), after the command's own cleanup. train writes its checkpoint first;
# the workbench leaves the terminal's alternate screen first (what the pane
# shows afterwards is the wrapper's line, not curses' last frame); a command
# with nothing to clean up just dies of the signal. Each runs under a small
# wrapper that restores SIGINT's default action (a background job of this
# script would ignore it) and reports the child's status.
. "$(dirname "$0")/../lib.sh"
need_stories
DATA=$SHARED/data/tinystories.txt

# run_and_interrupt WAIT_FOR_FILE_OR_SECONDS CMD...: starts CMD, waits, sends SIGINT; prints the status
cat >"$TMP/intr.py" <<'PY'
import os, signal, subprocess, sys, time
wait = sys.argv[1]
p = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=open(os.environ["ERR"], "w"),
                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
t0 = time.time()
while time.time() - t0 < 60 and p.poll() is None:
    if (os.path.exists(wait) and os.path.getsize(wait) > 0) if not wait.replace(".", "").isdigit() else time.time() - t0 > float(wait):
        break
    time.sleep(0.05)
p.send_signal(signal.SIGINT)
try:
    rc = p.wait(30)
except subprocess.TimeoutExpired:
    p.kill(); rc = "hang"
print(rc)
PY
export ERR="$TMP/err"

# train: stops after the running step, writes the checkpoint, ends by SIGINT
rc=$(python3 "$TMP/intr.py" "$TMP/log" sh -c "exec '$G' train '$STORIES' --teacher '$STORIES' --keep 0.5 --data '$DATA' \
    --ctx 32 --batch 2 --tokens 10000000 --ckpt '$TMP/run.ckpt' --log-every 1 --threads 1 >'$TMP/log'")
[ "$rc" = "-2" ] || fail "train after Ctrl-C: status $rc (want death by SIGINT, 130 in a shell); $(cat "$ERR")"
[ -s "$TMP/run.ckpt" ] || fail "train did not write its checkpoint on Ctrl-C"
grep -q "stopped by SIGINT" "$ERR" || fail "train did not say it stopped: $(cat "$ERR")"

# a command without cleanup (stats on a long text): the default action
rc=$(python3 "$TMP/intr.py" 1 "$G" stats "$STORIES" --text "$DATA" --seqs 0 --ctx 256 --threads 1)
[ "$rc" = "-2" ] || fail "stats after Ctrl-C: status $rc"

# the workbench under tmux: Ctrl-C restores the terminal, then SIGINT
if command -v tmux >/dev/null 2>&1; then
    SOCK="graft_ctrlc_$$"
    export XDG_CONFIG_HOME="$TMP/config" XDG_STATE_HOME="$TMP/state"
    tmux -L "$SOCK" -f /dev/null new-session -d -s w -x 100 -y 30 \
        "env XDG_CONFIG_HOME='$XDG_CONFIG_HOME' XDG_STATE_HOME='$XDG_STATE_HOME' python3 -c \"
import signal, subprocess, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
r = subprocess.run(['$G', 'tui', '--demo'], preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
print('GRAFT_STATUS', r.returncode, flush=True)
\"; sleep 30"
    i=0
    until tmux -L "$SOCK" capture-pane -p -t w | grep -q "Stats"; do
        i=$((i + 1)); [ $i -gt 100 ] && { tmux -L "$SOCK" kill-server; fail "the workbench did not start"; }
        sleep 0.1
    done
    tmux -L "$SOCK" send-keys -t w C-c
    i=0
    until tmux -L "$SOCK" capture-pane -p -t w | grep -q "GRAFT_STATUS"; do
        i=$((i + 1)); [ $i -gt 100 ] && { tmux -L "$SOCK" capture-pane -p -t w; tmux -L "$SOCK" kill-server; fail "the workbench did not exit on Ctrl-C"; }
        sleep 0.1
    done
    screen=$(tmux -L "$SOCK" capture-pane -p -t w)
    tmux -L "$SOCK" kill-server
    printf '%s\n' "$screen" | grep -q "GRAFT_STATUS -2" || fail "workbench after Ctrl-C: $(printf '%s' "$screen" | grep GRAFT_STATUS)"
    printf '%s\n' "$screen" | grep -q "Stats" && fail "the terminal still shows the workbench after Ctrl-C (alternate screen not left)"
fi
exit 0
