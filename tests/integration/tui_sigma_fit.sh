#!/bin/sh
# The value scale's fit in the workbench (4 Calibrate, f), on the real stories260K under tmux:
#   - f cycles reference -> scaled -> gated; the options line and the job line say it, and a fit
#     without sigma among the components is named as unused;
#   - Results' Enter builds the plan's student with the gated fit: the row says it, the student's
#     config.json records it, and its perplexity equals `graft convert ... --sigma-fit gated`'s
#     (the same build, so the fit reached the builder and not only the label);
#   - the fit is saved with the session.
set -u
. "$(dirname "$0")/lib/tui.sh"
tui_stories
command -v python3 >/dev/null 2>&1 || { echo "python3 is not installed"; exit 77; }
tui_setup
export XDG_DATA_HOME="$TMP/data"
WIN=4
STEPS=5

tui_settings '{"stage2_steps": '$STEPS', "eval_windows": '$WIN'}'
tui_start s 110 30 TERM=xterm-256color LANG=C.UTF-8 GRAFT_TEACHER="$MODEL" GRAFT_TEXT="$TEXT" XDG_DATA_HOME="$XDG_DATA_HOME" --
tui_wait s "5 layers · 8 heads" 100 || fail "teacher did not load"
tui_keys s 4
# (the key bar drops f first on a narrow screen: the options line names it)
tui_wait s "f: sigma fit reference" || fail "the options line does not show the fit"
tui_keys s f
tui_wait s "f: sigma fit scaled" || fail "f did not move to the scaled fit"
tui_keys s s
tui_wait s "s [ ] sigma" || fail "s did not switch sigma off"
tui_keys s f
tui_wait s "sigma fit gated (used once sigma is on: s)" || fail "a fit without sigma is not named as unused"
tui_keys s s
tui_wait s "s [x] sigma" || fail "s did not switch sigma on"
tui_wait s "Stage 1 is now all, sigma gated" || fail "the options' label does not carry the fit"

# ---- Results: the plan's student with the gated fit ----
tui_evaluate s
tui_wait s "hl mean" 900 || fail "no results row"
tui_no_evaluate s
tui_wait s "sigma gated" 50 || fail "the row does not say its fit"
dir=$(ls -d "$XDG_DATA_HOME"/graft/students/*taylor-calibrate-* 2>/dev/null | head -n 1)
[ -n "$dir" ] || fail "no student folder"
"$GRAFT_BIN" convert "$MODEL" --keep 0.5 --strategy uniform --calib "$TEXT" --init taylor-calibrate --sigma-fit gated \
    --steps $STEPS --eval-windows $WIN --out "$TMP/ref" --json >"$TMP/ref.json" 2>"$TMP/ref.err" ||
    { cat "$TMP/ref.err"; fail "graft convert --sigma-fit gated"; }
# the session is written whole when the workbench quits
tui_keys s q
tui_wait s "GRAFT_EXIT=0" 50 || fail "quit"
python3 - "$dir/config.json" "$TMP/ref/config.json" "$XDG_STATE_HOME/graft/session.json" <<'PY' || fail "the workbench's gated student differs from graft convert's"
import json, sys
mine = json.load(open(sys.argv[1]))["graft_student"]
ref = json.load(open(sys.argv[2]))["graft_student"]
assert mine["init"]["sigma_fit"] == "gated", mine["init"]
assert mine["init"] == ref["init"], (mine["init"], ref["init"])
s = json.load(open(sys.argv[3]))
t = [t for t in s["teachers"] if t["key"] == s["current"]][0]
assert t["stage1"].get("sigma_fit") == "gated", t["stage1"]
rows = [r for r in t["results"] if r.get("student")]
assert rows and rows[-1]["stage1"].get("sigma_fit") == "gated", rows[-1]["stage1"] if rows else rows
print("gated fit: the student's init and the session's options say gated, as graft convert's")
PY
# the same build: graft eval of graft convert's student on the row's slice gives the row's perplexity
# (1e-6 relative: the same weights, summation order only)
"$GRAFT_BIN" eval "$TMP/ref" --text "$TEXT" --split --eval-windows $WIN --json >"$TMP/ref_eval.json" || fail "graft eval"
python3 - "$XDG_STATE_HOME/graft/session.json" "$TMP/ref_eval.json" <<'PY' || fail "the gated student's perplexity differs from graft convert's"
import json, math, sys
s = json.load(open(sys.argv[1]))
t = [t for t in s["teachers"] if t["key"] == s["current"]][0]
mine = [r for r in t["results"] if r.get("student")][-1]["ppl"]
want = json.load(open(sys.argv[2]))["ppl"]
assert math.isfinite(mine) and math.isfinite(want) and abs(mine - want) <= 1e-6 * want, (mine, want)
print(f"gated fit: the row's perplexity {mine:.6f} equals graft convert's student's {want:.6f}")
PY
"$GRAFT_BIN" tui --snapshot calibrate --size 110x30 | grep -qF "f: sigma fit gated" || fail "the fit was not restored with the session"
echo "tui_sigma_fit: all checks passed"
