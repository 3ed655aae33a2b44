#!/bin/sh
# Key latency of the workbench while a job runs: time from tmux send-keys to
# the screen showing the change (polling capture-pane, which adds its own few
# milliseconds). Runs `graft tui --demo`, starts the demo stats job (Enter),
# then moves the Stats cursor down N times.
set -u
cd "$(dirname "$0")/../.."
GRAFT_BIN=${GRAFT_BIN:-$PWD/build/graft}
. tests/integration/lib/tui.sh
tui_setup
N=20
tui_start lat 100 30 TERM=xterm-256color LANG=C.UTF-8 GRAFT_UI_TRACE="$TMP/trace" -- --demo
tui_wait lat "3 Stats" >/dev/null || { echo "bench_tui_latency: workbench did not start"; exit 1; }
tui_keys lat Enter
tui_wait lat "● stats" >/dev/null || { echo "bench_tui_latency: job did not start"; exit 1; }
ms_list=""
k=1
while [ $k -le $N ]; do
    t0=$(date +%s%N)
    tui_keys lat Down
    ts=$(date +%s%N)
    i=0
    while ! tui_screen lat | grep -qF "layer $k head 0"; do
        i=$((i + 1))
        [ $i -gt 2000 ] && { echo "bench_tui_latency: no change after key $k"; exit 1; }
    done
    t1=$(date +%s%N)
    ms_list="$ms_list $(( (t1 - t0) / 1000 )):$(( (t1 - ts) / 1000 ))"
    k=$((k + 1))
done
# the cost of one capture-pane poll: a floor under every number above
t0=$(date +%s%N)
for i in 1 2 3 4 5 6 7 8 9 10; do tui_screen lat >/dev/null; done
t1=$(date +%s%N)
poll_ms=$(( (t1 - t0) / 10000 ))
running=no
tui_screen lat | grep -qF "● stats" && running=yes
tui_keys lat q
tui_keys lat y
echo "$ms_list" | tr ' ' '\n' | grep . | cut -d: -f1 | sort -n | awk -v running="$running" -v poll="$poll_ms" '
    { v[NR] = $1; s += $1 }
    END { printf "key latency while a job runs (%d keys, job still running at the end: %s): mean %.1f ms  median %.1f ms  max %.1f ms\n",
          NR, running, s / NR / 1000, v[int((NR + 1) / 2)] / 1000, v[NR] / 1000
          printf "one capture-pane poll costs %.1f ms (included above)\n", poll / 1000 }'
echo "$ms_list" | tr ' ' '\n' | grep . | cut -d: -f2 | sort -n | awk '
    { v[NR] = $1; s += $1 }
    END { printf "from send-keys returning to the change on screen: mean %.1f ms  median %.1f ms  max %.1f ms\n",
          s / NR / 1000, v[int((NR + 1) / 2)] / 1000, v[NR] / 1000 }'

# inside graft: from poll() waking to the frame written (render + blit), per frame
sleep 0.3
awk '{ print $1 }' "$TMP/trace" | sort -n | awk '
    { v[NR] = $1; s += $1 }
    END { if (NR) printf "inside graft, wake to frame written (%d frames): mean %.2f ms  median %.2f ms  max %.2f ms\n",
          NR, s / NR, v[int((NR + 1) / 2)], v[NR] }'

# baseline: the same measurement against `cat` echoing keys (tmux + pty alone)
tmux -L "$SOCK" -f /dev/null new-session -d -s echo -x 80 -y 24 "cat"
sleep 0.3
base=""
for k in a b c d e f g h i j; do
    tui_keys echo "$k$k$k"
    ts=$(date +%s%N)
    i=0
    while ! tui_screen echo | grep -qF "$k$k$k"; do i=$((i + 1)); [ $i -gt 2000 ] && break; done
    t1=$(date +%s%N)
    base="$base $(( (t1 - ts) / 1000 ))"
done
echo "$base" | tr ' ' '\n' | grep . | sort -n | awk '
    { v[NR] = $1; s += $1 }
    END { printf "baseline (cat echo under tmux), from send-keys returning: mean %.1f ms  median %.1f ms\n",
          s / NR / 1000, v[int((NR + 1) / 2)] / 1000 }'
