#!/bin/sh
# Half-lives on text on 3 Stats under tmux, on the real stories260K teacher:
# Enter on Results builds a student (random: no Stage 2, heads off their
# teacher distances, so some are flagged); h on Stats measures its half-lives on
# the corpus; the heat map's value under the cursor (the head's p50 and
# log2(p50 / target)) equals graft halflife --json's for that head on the
# same text and shape; f jumps the cursor to the flagged heads worst first.
set -u
. "$(dirname "$0")/lib/tui.sh"
tui_need_stories
tui_setup
export XDG_DATA_HOME="$TMP/data"
W=120 H=40
tui_settings '{"stage2_steps": 10, "eval_windows": 4}'
tui_start r $W $H TERM=xterm-256color LANG=C.UTF-8 XDG_DATA_HOME="$XDG_DATA_HOME" -- "'$MODEL'" --text "'$TEXT'"
tui_wait r "5 layers" 200 || fail "teacher did not load"
tui_keys r 8
i=0
while [ $i -lt 300 ] && ! tui_screen r | grep -qE "stats: (done|job|error)"; do sleep 0.1; i=$((i+1)); done
tui_keys r 3
tui_keys r h
tui_wait r "no student to measure yet" || fail "h without a student does not say what is missing"
tui_keys r 7
tui_keys r i
tui_wait r "Enter builds the student under random" || fail "i on Results did not pick the random init"
tui_keys r Enter
tui_wait r "hl mean" 900 || fail "no results row"
tui_keys r 3
tui_keys r h
tui_wait r "half-life p50 on text (tokens)" 600 || { tui_screen r; fail "the half-life p50 map did not show after h"; }
tui_wait r "flagged heads, worst first" 100 || { tui_screen r; fail "no flagged list beside the map"; }
# the student folder the job measured: the only one the workbench wrote
folder=$(find "$XDG_DATA_HOME" -name config.json -exec grep -l graft_student {} + | head -n 1 | xargs dirname)
[ -d "$folder" ] || fail "no student folder under $XDG_DATA_HOME"
json="$TMP/hl.json"
# the targets: the teacher statistics on the same text and shape as the workbench's (256 x 4)
"$GRAFT_BIN" stats "$MODEL" --text "$TEXT" --ctx 256 --seqs 4 --json >"$TMP/stats.json" 2>"$TMP/hl.err" || { cat "$TMP/hl.err"; fail "graft stats failed"; }
"$GRAFT_BIN" halflife "$folder" --text "$TEXT" --ctx 256 --seqs 4 --stats "$TMP/stats.json" --json >"$json" 2>"$TMP/hl.err" || { cat "$TMP/hl.err"; fail "graft halflife failed"; }
tui_keys r 3
# the first GDN layer, head 1: the cursor moves there from the top-left
L=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["heads"][0]["layer"])' "$json")
[ -n "${SHOW:-}" ] && tui_screen r

j=0; while [ $j -lt "$L" ]; do tui_keys r Down; j=$((j+1)); done
tui_keys r Right
tui_wait r "layer $L head 1" 50 || { tui_screen r; fail "the cursor is not on layer $L head 1"; }
scr=$(tui_screen r)
got=$(printf '%s\n' "$scr" | grep -o "t1/2 p50 .*" | head -n 1 | awk '{print $NF}')
got=$got/$(printf '%s\n' "$scr" | grep -o "log2 p/d .*" | head -n 1 | awk '{print $NF}')
want=$(python3 - "$json" "$L" <<'PY'
import json, sys, math
j = json.load(open(sys.argv[1])); L = int(sys.argv[2])
h = [x for x in j["heads"] if x["layer"] == L and x["head"] == 1][0]
# the workbench's number format (ui/widgets/scale.c fmt_num)
def fmt(v):
    if v is None: return "inf"  # graft halflife writes an infinite median as null
    a = abs(v)
    if a == 0: return "0"
    if a >= 99999.5 or a < 0.001: return "%.1e" % v
    if a >= 100: return "%.0f" % v
    if a >= 10: return "%.1f" % v
    if a >= 1: return "%.2f" % v
    return "%.3f" % v
r = math.log2(h["p50"] / h["teacher_distance"]) if h["p50"] and h["teacher_distance"] else None
print(fmt(h["p50"]) + "/" + (fmt(r) if r is not None else "-"))
PY
)
[ -n "${SHOW:-}" ] && { printf '%s\n' "$scr"; echo "got=$got want=$want"; }
[ -n "$got" ] && [ "$got" = "$want" ] || { printf '%s\n' "$scr"; fail "p50 of layer $L head 1 on screen '$got', graft halflife says '$want'"; }
# f: the worst flagged head first (the JSON's order by severity)
nflag=$(python3 -c 'import json,sys; print(sum(1 for h in json.load(open(sys.argv[1]))["heads"] if h["flags"]))' "$json")
if [ "$nflag" -gt 0 ]; then
    order() { python3 -c '
import json, sys
hs = [h for h in json.load(open(sys.argv[1]))["heads"] if h["flags"]]
h = sorted(hs, key=lambda h: -h["severity"])[int(sys.argv[2])]
print("layer %d head %d" % (h["layer"], h["head"]))' "$json" "$1"; }
    worst=$(order 0)
    tui_keys r f
    tui_wait r "flagged 1 of $nflag: $worst" 50 || { tui_screen r; fail "f did not jump to the worst flagged head ($worst)"; }
    tui_wait r "$worst" 10 || fail "the cursor panel does not show $worst"
    if [ "$nflag" -gt 1 ]; then
        next=$(order 1)
        tui_keys r f
        tui_wait r "flagged 2 of $nflag: $next" 50 || { tui_screen r; fail "a second f did not go to the next worst ($next)"; }
    fi
else
    tui_keys r f
    tui_wait r "is flagged" 50 || fail "f with no flagged head does not say so"
fi
# 4 Calibrate (no Stage 1 run here: the fix works on the Stats cursor's head): x sets it to its
# no-sink distance, Stage 2 of its layer follows; the fixed student is a new folder
sum_before=$(cat "$folder"/* 2>/dev/null | cksum)
tui_keys r 4
tui_wait r "x: to its no-sink distance" 50 || { tui_screen r; fail "Calibrate shows no fix panel after a measurement"; }
cur=$(tui_screen r | grep -o "half-life fix of [a-z-]*: layer [0-9]* head [0-9]*" | head -n 1 | sed 's/.*: //')
tui_keys r x
tui_wait r "fixed layer" 600 || { tui_screen r; fail "the fix did not finish"; }
scr=$(tui_screen r)
[ -n "${SHOW:-}" ] && printf '%s\n' "$scr"
printf '%s\n' "$scr" | grep -q "perplexity [0-9.]* -> [0-9.]*" || { printf '%s\n' "$scr"; fail "no perplexity change"; }
printf '%s\n' "$scr" | grep -q "before the fix" || { printf '%s\n' "$scr"; fail "no before histogram"; }
fixed=$(ls -d "$folder"-fix-* 2>/dev/null | head -n 1)
[ -n "$fixed" ] && [ -f "$fixed/config.json" ] || fail "no fixed student folder beside $folder"
[ "$(cat "$folder"/* 2>/dev/null | cksum)" = "$sum_before" ] || fail "the original student folder changed"
# the half-life the fix set is the head's no-sink distance through Stage 1's clamp (graft stats'
# numbers; the screen's 4 digits), and after Stage 2 of its layer (which trains A_log and dt_bias
# too) graft halflife on the new folder finds its idle half-life nearer that than before
L=$(echo "$cur" | awk '{print $2}'); Hh=$(echo "$cur" | awk '{print $4}')
set_to=$(printf '%s\n' "$scr" | grep -o "fixed layer $L head $Hh to [0-9.e+-]* tokens" | awk '{print $7}')
"$GRAFT_BIN" halflife "$fixed" --text "$TEXT" --ctx 256 --seqs 4 --stats "$TMP/stats.json" --json >"$TMP/fixed.json" 2>"$TMP/hl.err" || { cat "$TMP/hl.err"; fail "graft halflife on the fixed folder failed"; }
python3 - "$json" "$TMP/fixed.json" "$L" "$Hh" "$set_to" <<'PY' || fail "the fix did not set layer $L head $Hh as it should"
import json, math, sys
def head(path, L, H):
    return [x for x in json.load(open(path))["heads"] if x["layer"] == L and x["head"] == H][0]
L, H = int(sys.argv[3]), int(sys.argv[4])
b, a = head(sys.argv[1], L, H), head(sys.argv[2], L, H)
d = b["teacher_distance_no_sink"]
want = math.log(2) / min(max(math.log(2) / d, 1e-3), 5)  # Stage 1's clamp
print("L%d H%d: set to %s (want %.4g); idle %.4g before, %.4g after" % (L, H, sys.argv[5], want, b["idle"], a["idle"]))
ok = sys.argv[5] == "%.4g" % want
ok = ok and all(math.isfinite(x) for x in (b["idle"], a["idle"]))
ok = ok and abs(math.log(a["idle"] / want)) < abs(math.log(b["idle"] / want))
sys.exit(0 if ok else 1)
PY
tui_keys r q
tui_wait r "GRAFT_EXIT=0" 100 || fail "graft did not exit cleanly (under the sanitizers: a leak or an error on the way out)"
exit 0
