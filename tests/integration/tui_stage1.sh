#!/bin/sh
# Stage 1 piece by piece in the workbench, on the real stories260K under tmux:
#   - Stats: the no-sink distance and the sink share per head equal
#     `graft stats --json` (to the digits shown);
#   - Calibrate: beta switched off and the no-sink distance on, one Stage 1
#     step: every per-head number equals `graft convert --init taylor-only
#     --stage1 decay,sigma,gate --distance no-sink --json` for that layer (beta
#     shows "-" and "off"); then a half-life override re-runs every layer and
#     equals `--half-life 24`;
#   - Results: Enter builds under the options; the row says them (init detail),
#     its command carries the flags, the student's config.json records them;
#   - the component ablation (9 Settings: ablation): its rows equal `graft
#     ablate --stage1-subsets --distance no-sink --json` on the same split;
#   - the options are saved with the session (a snapshot shows them again).
set -u
. "$(dirname "$0")/lib/tui.sh"
SHARED=${GRAFT_SHARED:-/work/shared}
MODEL=$SHARED/models/tinyllamas/stories260K/stories260K.bin
TEXT=$SHARED/data/tinystories.txt
[ -r "$MODEL" ] && [ -r "$TEXT" ] || { echo "stories260K or tinystories.txt not in $SHARED"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "python3 is not installed"; exit 77; }
tui_setup
export XDG_DATA_HOME="$TMP/data"
WIN=4

tui_settings '{"stage2_steps": 5, "ablate_steps": 3, "eval_windows": '$WIN'}'
tui_start s 100 30 TERM=xterm-256color LANG=C.UTF-8 GRAFT_TEACHER="$MODEL" GRAFT_TEXT="$TEXT" XDG_DATA_HOME="$XDG_DATA_HOME" --
tui_wait s "5 layers · 8 heads" 100 || fail "teacher did not load"
tui_keys s 8
tui_wait s "stats: done" 300 || fail "statistics did not finish"

# ---- Stats: the two sink metrics, head by head, against graft stats --json ----
"$GRAFT_BIN" stats "$MODEL" --text "$TEXT" --ctx 256 --seqs 4 --json >"$TMP/stats.json" || fail "graft stats"
tui_keys s 3
i=0
while ! tui_screen s | grep -qF "metric: mean distance without the first key" && [ $i -lt 12 ]; do tui_keys s m; sleep 0.1; i=$((i + 1)); done
tui_wait s "metric: mean distance without the first key (tokens)" || fail "Stats has no no-sink distance map"
for hd in 0 1 2; do
    tui_wait s "layer 0 head $hd" || fail "cursor"
    tui_screen s >"$TMP/stats_$hd.txt"
    tui_keys s Right
done
tui_keys s m
tui_wait s "metric: attention on the first key (sink share)" || fail "Stats has no sink share map"
python3 - "$TMP/stats.json" "$TMP"/stats_0.txt "$TMP"/stats_1.txt "$TMP"/stats_2.txt <<'PY' || fail "Stats panel disagrees with graft stats --json"
import json, re, sys
ref = json.load(open(sys.argv[1]))["layers"][0]["heads"]
for h, path in enumerate(sys.argv[2:]):
    text = open(path, encoding="utf-8").read()
    for sym, key in (("d no-sink", "mean_distance_no_sink"), ("sink", "sink_share")):
        m = re.search(r"(?<![-\w])" + re.escape(sym) + r"\s+([0-9][0-9.e+-]*)", text)
        assert m, (h, sym)
        shown = m.group(1)
        # tolerance: half a unit of the last digit shown
        dec = len(shown.split(".")[1]) if "." in shown and "e" not in shown else 0
        tol = 0.5 * 10 ** -dec + 1e-12 if "e" not in shown else abs(float(shown)) * 0.05
        want = ref[h][key]
        assert abs(float(shown) - want) <= tol, (h, sym, shown, want)
print("Stats: no-sink distance and sink share of layer 0, heads 0-2, match graft stats --json")
PY

# ---- Calibrate: beta off, no-sink on, one layer ----
tui_keys s 4
tui_wait s "0 of 2 converted layers calibrated" || fail "Calibrate screen"
tui_wait s "d b s g components" || fail "the key bar names the component keys"
tui_keys s b n
tui_wait s "b [ ] beta" || fail "b did not switch beta off"
tui_wait s "decay from d no-sink (without the first key)" || fail "n did not switch the distance"
tui_keys s Space
tui_wait s "1 of 2 converted layers calibrated" 300 || fail "Stage 1 step"
tui_wait s "last run: done" 100 || fail "calibrate job did not finish"
tui_screen s >"$TMP/cal1.txt"

SMALL="--keep 0.5 --strategy uniform --calib $TEXT"
"$GRAFT_BIN" convert "$MODEL" $SMALL --init taylor-only --stage1 decay,sigma,gate --distance no-sink \
    --out "$TMP/st_nb" --json >"$TMP/conv1.json" 2>"$TMP/conv.err" || { cat "$TMP/conv.err"; fail "graft convert"; }

cat >"$TMP/parity.py" <<'PY'
import json, math, re, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
rep = json.load(open(sys.argv[2]))
off = set(sys.argv[3].split(",")) if len(sys.argv) > 3 and sys.argv[3] else set()
layer = next(int(m.group(1)) for m in (re.match(r"\s*layer (\d+)\s+head 0", l) for l in lines) if m)
def row(name):
    pat = re.compile(r"^\s*(?:stats|decay|beta|sigma|off)?\s+" + re.escape(name) + r"\s+(\S.*)$")
    for l in lines:
        m = pat.match(l)
        if m:
            return [None if x == "-" else float(x) for x in m.group(1).split()]
    raise AssertionError("no row " + name)
lr = next(l for l in rep["layers"] if l["layer"] == layer)
s1 = lr["stage1"]
pairs = {"d_h": s1["mean_distance"], "d no-sink": s1["mean_distance_no_sink"], "sink": s1["sink_share"],
         "H_h": s1["entropy"], "c_h": s1["concentration"], "d used": s1["decay_distance"],
         "target g": s1["target_g"], "dt_bias": s1["dt_bias"], "t1/2 idle": lr["half_life"],
         "beta*": s1["beta_star"], "logit b*": s1["beta_logit"], "Wb logit": s1["write_logit_mean"],
         "sigma raw": s1["sigma_unclamped"], "sigma*": s1["sigma_star"]}
checked = 0
for name, want in pairs.items():
    shown = row(name)
    assert len(shown) == 8, (name, shown)
    for h in range(8):
        if want[h] is None:  # a component that did not run: "-" on screen
            assert shown[h] is None, (name, h, shown[h])
        else:
            assert shown[h] is not None and abs(shown[h] - want[h]) <= 1e-3 * max(1.0, abs(want[h])), (name, layer, h, shown[h], want[h])
        checked += 1
g = next(l for l in lines if re.match(r"\s*gate\s+alpha\*", l)).split()[2]
if s1["alpha_star"] is None:
    assert g == "-", g
else:
    assert abs(float(g) - s1["alpha_star"]) <= 1e-3 * abs(s1["alpha_star"]), (g, s1["alpha_star"])
assert s1["components"] == [c for c in ("decay", "beta", "sigma", "gate") if c not in off], s1["components"]
for c in off:  # the component's group says "off" under its name
    i = next(i for i, l in enumerate(lines) if re.match(r"\s*" + c + r"\s", l))
    assert re.match(r"\s*off\s", lines[i + 1]) or c == "gate", (c, lines[i + 1])
print(f"layer {layer}: {checked} per-head Stage 1 values and alpha* match graft convert --json ({','.join(s1['components'])})")
PY
python3 "$TMP/parity.py" "$TMP/cal1.txt" "$TMP/conv1.json" beta || { cat "$TMP/cal1.txt"; fail "Calibrate (-beta, no-sink) disagrees with graft convert"; }

# ---- a half-life override: every converted layer again ----
tui_keys s h
tui_wait s "half-life override, tokens" || fail "h did not open the entry"
tui_keys s 2 4 Enter
tui_wait s "decay: every head's idle half-life 24 tokens" || fail "half-life override"
tui_wait s "numbers below: Stage 1 -beta (no-sink); space / Enter re-run with -beta (half-life 24)" || fail "stale numbers not marked"
tui_keys s Enter
tui_wait s "2 of 2 converted layers calibrated" 300 || fail "re-run after the override"
tui_wait s "last run: done" 100 || fail "calibrate job did not finish"
tui_screen s >"$TMP/cal2.txt"
grep -qF "numbers below" "$TMP/cal2.txt" && fail "still marked stale after the re-run"
"$GRAFT_BIN" convert "$MODEL" $SMALL --init taylor-only --stage1 decay,sigma,gate --half-life 24 \
    --out "$TMP/st_hl" --json >"$TMP/conv2.json" 2>"$TMP/conv.err" || { cat "$TMP/conv.err"; fail "graft convert --half-life"; }
python3 "$TMP/parity.py" "$TMP/cal2.txt" "$TMP/conv2.json" beta || { cat "$TMP/cal2.txt"; fail "Calibrate (half-life 24) disagrees with graft convert"; }

# ---- Results: the plan's student under these options ----
tui_keys s 7
tui_wait s "taylor-calibrate (stage1 -beta (half-life 24))" || fail "Results does not say the Stage 1 options"
tui_keys s Enter
tui_wait s "hl mean" 600 || fail "no results row"
tui_wait s "S1 -beta (half-life 24)" 50 || tui_wait s "stage1 -beta (half-life 24)" 10 || fail "the row lacks its components"
# (the finished job's status line, "● evaluate ... elapsed", may still be drawn under it for a moment)
cmd=$(tui_screen s | sed -n '/headless: /,/^ *$/p' | grep -v -e "hidden at this width" -e "last job:" -e "q quit" -e "elapsed" \
      | sed 's/.*headless: //; s/^ *//' \
      | tr '\n' ' ' | sed 's/ *$//')
case "$cmd" in *"--json   # built with --stage1 decay,sigma,gate --half-life 24 by request "[0-9a-f]*) ;;
    *) tui_screen s; fail "the row's command does not say its Stage 1 options: '$cmd'";; esac
dir=$(ls -d "$XDG_DATA_HOME"/graft/students/*taylor-calibrate-* 2>/dev/null | head -n 1)
[ -n "$dir" ] || fail "no student folder"
python3 -c '
import json, sys
i = json.load(open(sys.argv[1]))["graft_student"]["init"]
assert i["stage1"] == ["decay", "sigma", "gate"] and i["half_life"] == 24, i
' "$dir/config.json" || fail "the student's config.json does not record the options"

# ---- no component: Stage 1 does not run; the statistics still show, the half-lives are the random init's ----
tui_keys s 4 d s g
tui_wait s "d [ ] decay  b [ ] beta  s [ ] sigma  g [ ] gate" || fail "every component off"
tui_wait s "numbers below: Stage 1 -beta (half-life 24); space / Enter re-run with none" || fail "stale numbers not marked"
tui_keys s Enter
# the re-run's end: every layer done and no longer marked stale
i=0
while [ $i -lt 300 ]; do
    tui_screen s >"$TMP/cal3.txt"
    grep -qF "2 of 2 converted layers calibrated   last run: done" "$TMP/cal3.txt" && ! grep -qF "numbers below" "$TMP/cal3.txt" && break
    sleep 0.1
    i=$((i + 1))
done
[ $i -lt 300 ] || { cat "$TMP/cal3.txt"; fail "Stage 1 with no component did not finish"; }
"$GRAFT_BIN" convert "$MODEL" $SMALL --init taylor-only --stage1 none --out "$TMP/st_none" --json >"$TMP/conv3.json"     2>"$TMP/conv.err" || { cat "$TMP/conv.err"; fail "graft convert --stage1 none"; }
python3 - "$TMP/cal2.txt" "$TMP/cal3.txt" "$TMP/conv3.json" <<'PY' || { cat "$TMP/cal3.txt"; fail "Calibrate with no component"; }
import json, re, sys
def rows(path):
    out = {}
    for l in open(path, encoding="utf-8").read().splitlines():
        m = re.match(r"^\s*(?:stats|decay|beta|sigma|off)?\s+(d_h|d no-sink|sink|H_h|c_h|d used|target g|dt_bias|t1/2 idle|beta\*|logit b\*|Wb logit|sigma raw|sigma\*)\s+(\S.*)$", l)
        if m:
            out[m.group(1)] = m.group(2).split()
    return out
before, now = rows(sys.argv[1]), rows(sys.argv[2])
for k in ("d_h", "d no-sink", "sink", "H_h", "c_h"):  # the same capture: the same statistics
    assert now[k] == before[k], (k, now[k], before[k])
for k in ("d used", "target g", "dt_bias", "beta*", "logit b*", "Wb logit", "sigma raw", "sigma*"):
    assert now[k] == ["-"] * 8, (k, now[k])
rep = json.load(open(sys.argv[3]))
assert all("stage1" not in l for l in rep["layers"])
hl = next(l for l in rep["layers"] if l["layer"] == 4)["half_life"]  # the random init's
assert all(abs(float(a) - b) <= 1e-3 * max(1, b) for a, b in zip(now["t1/2 idle"], hl)), (now["t1/2 idle"], hl)
print("no component: statistics kept, every component's number '-', half-lives the random init's (graft convert --stage1 none)")
PY
grep -qE "^ *gate +alpha\* +- +\(off" "$TMP/cal3.txt" || fail "alpha* should be off"

# ---- the component ablation: all, none, singles, leave-one-outs, with the no-sink distance ----
tui_keys s d b s g
tui_wait s "b [x] beta" || fail "beta back on"
tui_wait s "decay from d no-sink" || fail "override cleared"
tui_keys s 9 Down Down
tui_wait s "ablation compares" || fail "Settings has no ablation choice"
tui_keys s Right
tui_wait s "Stage 1 components" || fail "ablation: Stage 1 components"
tui_keys s 7 a
tui_wait s "● ablate" 30 || fail "the ablation did not start"
tui_keys s 8
tmux -L "$SOCK" resize-window -t s -x 400 -y 30 # the Log's long lines whole
tui_wait s "ablate: Stage 1 component ablation (taylor-calibrate): 3 strategies x 3 ratios x 10 component sets" 300 ||
    fail "the ablation is not the component one"
tui_wait s "ablate: done" 3000 || fail "the component ablation did not finish"
tui_wait s "headless: graft ablate '$MODEL' --calib '$TEXT' --eval '$TEXT' --init taylor-calibrate --steps 3 --eval-windows $WIN --distance no-sink --stage1-subsets --json" ||
    fail "the ablation's headless command"
tmux -L "$SOCK" resize-window -t s -x 100 -y 30
tui_keys s 7
tui_wait s "S1 -gate" 50 || fail "ablation rows lack their components"
tui_keys s q
tui_wait s "GRAFT_EXIT=0" 50 || fail "quit"

"$GRAFT_BIN" ablate "$MODEL" --calib "$TEXT" --eval "$TEXT" --strategy uniform --keep 0.5 --stage1-subsets --distance no-sink \
    --steps 3 --eval-windows $WIN --json >"$TMP/abl.json" 2>"$TMP/abl.err" || { cat "$TMP/abl.err"; fail "graft ablate --stage1-subsets"; }
python3 - "$XDG_STATE_HOME/graft/session.json" "$TMP/abl.json" <<'PY' || fail "the workbench's component ablation disagrees with graft ablate"
import json, sys
s = json.load(open(sys.argv[1]))
t = [t for t in s["teachers"] if t["key"] == s["current"]][0]
assert t["stage1"] == {"components": ["decay", "beta", "sigma", "gate"], "distance": "no-sink", "half_life": None}, t["stage1"]
assert s["settings"]["ablation"] == "components", s["settings"]
rows = [r for r in t["results"] if r["run"] == "ablate"]
assert len(rows) == 90, len(rows)  # 3 strategies x 3 ratios x 10 component sets
ref = json.load(open(sys.argv[2]))["rows"]
assert len(ref) == 10
for r in ref:
    comps = r["stage1"]
    mine = [w for w in rows if w["strategy"] == "uniform" and w["keep"] == 0.5 and w["stage1"]["components"] == comps]
    assert len(mine) == 1, (comps, len(mine))
    w = mine[0]
    assert w["stage1"]["distance"] == "no-sink" and w["stage2_steps"] == 3 and w["eval_windows"] == int(sys.argv[3] if len(sys.argv) > 3 else 4)
    # the same computation on the same split; 1e-6 relative leaves room only for summation order
    assert abs(w["ppl"] - r["ppl"]) <= 1e-6 * r["ppl"], (comps, w["ppl"], r["ppl"])
print("component ablation: the 10 uniform 50% rows equal graft ablate --stage1-subsets --json")
PY
# the options come back with the session
"$GRAFT_BIN" tui --snapshot calibrate --size 100x30 | grep -qF "decay from d no-sink" || fail "the Stage 1 options were not restored"
echo "tui_stage1: all checks passed"
