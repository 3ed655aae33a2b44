#!/bin/sh
# Calibrate and Align on the real stories260K teacher under tmux: one Stage 1
# step whose beta* and sigma* must equal `graft convert --init taylor-only
# --json` for the same layer and head, then Stage 2 with a few steps (the
# Stage 2 steps setting, written to the session), cancelled once mid-way, then
# run to the end.
set -u
. "$(dirname "$0")/lib/tui.sh"
SHARED=${GRAFT_SHARED:-/work/shared}
MODEL=$SHARED/models/tinyllamas/stories260K/stories260K.bin
TEXT=$SHARED/data/tinystories.txt
[ -r "$MODEL" ] && [ -r "$TEXT" ] || { echo "stories260K or tinystories.txt not in $SHARED"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "python3 is not installed"; exit 77; }
tui_setup

tui_settings '{"stage2_steps": 60}'
tui_start cal 100 30 TERM=xterm-256color LANG=C.UTF-8 GRAFT_TEACHER="$MODEL" GRAFT_TEXT="$TEXT" --
tui_wait cal "5 layers · 8 heads" 100 || fail "teacher did not load"
tui_keys cal 8   # the teacher statistics start after loading; one job at a time
tui_wait cal "stats: done" 300 || fail "statistics did not finish"
tui_keys cal 4
tui_wait cal "0 of 2 converted layers calibrated" || fail "Calibrate screen"
tui_wait cal "plan: uniform 50%" || fail "default plan not named"
tui_wait cal "space next layer" || fail "Calibrate key bar"
tui_keys cal Space
tui_wait cal "1 of 2 converted layers calibrated" 300 || fail "first Stage 1 step"
tui_wait cal "last run: done" 100 || fail "calibrate job did not finish"
tui_screen cal >"$TMP/cal.txt"
grep -qF " 4 pending" "$TMP/cal.txt" || fail "layer 4 should still be pending"

# headless parity: the same numbers from graft convert --json
"$GRAFT_BIN" convert "$MODEL" --keep 0.5 --strategy uniform --init taylor-only --calib "$TEXT" \
    --out "$TMP/student" --json >"$TMP/convert.json" 2>"$TMP/convert.err" || { cat "$TMP/convert.err"; fail "graft convert"; }
python3 - "$TMP/cal.txt" "$TMP/convert.json" <<'PY' || fail "Calibrate screen disagrees with graft convert --json"
import json, re, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
rep = json.load(open(sys.argv[2]))
layer = next(int(m.group(1)) for l in lines if (m := re.match(r"\s*layer (\d+)\s+head 0", l)))
# a row: its group (stats, decay, beta, sigma; "off" under a component that did not run), its name, a number per head
def row(name):
    pat = re.compile(r"^\s*(?:stats|decay|beta|sigma|off)?\s+" + re.escape(name) + r"\s+(-?[0-9].*)$")
    found = [pat.match(l) for l in lines]
    return [float(x) for x in next(m.group(1) for m in found if m).split()]
lr = next(l for l in rep["layers"] if l["layer"] == layer)
s1 = lr["stage1"]
pairs = {"beta*": s1["beta_star"], "sigma*": s1["sigma_star"], "sigma raw": s1["sigma_unclamped"],
         "d_h": s1["mean_distance"], "c_h": s1["concentration"], "logit b*": s1["beta_logit"],
         "Wb logit": s1["write_logit_mean"], "target g": s1["target_g"], "dt_bias": s1["dt_bias"],
         "t1/2 idle": lr["half_life"], "d no-sink": s1["mean_distance_no_sink"], "sink": s1["sink_share"],
         "d used": s1["decay_distance"], "H_h": s1["entropy"]}
checked = 0
for name, want in pairs.items():
    shown = row(name)
    assert len(shown) == 8, (name, shown)
    for h in range(8):
        assert abs(shown[h] - want[h]) <= 1e-3 * max(1.0, abs(want[h])), (name, layer, h, shown[h], want[h])
        checked += 1
alpha = float(next(l for l in lines if re.match(r"\s*gate\s+alpha\*", l)).split()[2])
assert abs(alpha - s1["alpha_star"]) <= 1e-3 * abs(s1["alpha_star"]), (alpha, s1["alpha_star"])
print(f"layer {layer}: {checked} per-head Stage 1 values and alpha* match graft convert --json")
PY

# the rest of Stage 1 with Enter
tui_keys cal Enter
tui_wait cal "2 of 2 converted layers calibrated" 300 || fail "Enter: all remaining layers"

# Stage 2: cancel once mid-way; the UI stays live and says so
tui_keys cal 5
tui_wait cal "Enter runs taylor-calibrate" || fail "Align screen"
tui_keys cal Enter
tui_wait cal "● align" 100 || fail "align job did not start"
tui_keys cal c
tui_wait cal "last run: cancelled" 100 || fail "align was not cancelled"
tui_keys cal 4
tui_wait cal "Stage 1 (taylor-only)" || fail "UI not responsive after cancel"
tui_keys cal 5
tui_wait cal "last run: cancelled" || fail "Align screen after cancel"
# then to the end
tui_keys cal Enter
tui_wait cal "last run: done" 600 || fail "align did not finish"
tui_screen cal >"$TMP/align.txt"
for l in 2 4; do
    # progress, kept best step, loss first > best, |Wb| and |Wg| ratios, half-life mean and median drift
    grep -E "^ L$l +60/60 +[0-9]+ +[0-9.e+-]+>[0-9.e+-]+ +x[0-9.]+ +x[0-9.]+ +[0-9.]+>[0-9.]+ +[0-9.]+>[0-9.]+" \
        "$TMP/align.txt" >/dev/null || { cat "$TMP/align.txt"; fail "layer $l summary"; }
done
grep -qF "layer 2 MSE" "$TMP/align.txt" || fail "no loss chart"
# the X-ray on Stats: random, taylor-only and taylor-calibrate half-lives side by side
tui_keys cal 3 s
i=0
while ! tui_screen cal | grep -qF "metric: idle half-life" && [ $i -lt 12 ]; do tui_keys cal m; sleep 0.1; i=$((i + 1)); done
tui_screen cal >"$TMP/stats.txt"
for init in "taylor-only:" "random:" "taylor-calibrate:"; do
    grep -qF "$init" "$TMP/stats.txt" || { cat "$TMP/stats.txt"; fail "Stats X-ray lacks $init"; }
done
# one teacher capture served every Stage 1 step and both Stage 2 runs
tui_keys cal 8
tui_wait cal "layer 4 aligned" || fail "Log screen"
n=$(tui_screen cal | grep -c "capturing the teacher")
[ "$n" -eq 1 ] || { tui_screen cal; fail "the teacher was captured $n times (want once)"; }
tui_keys cal q
tui_wait cal "GRAFT_EXIT=0" 50 || fail "quit"
echo "calibrate + align workbench flow ok"
