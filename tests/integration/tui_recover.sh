#!/bin/sh
# The Recover screen under tmux on stories260K: Enter races random vs
# taylor-calibrate on a tiny budget (the race tokens setting); the curves, axis
# labels, checkpoints and the "target reached ... ratio" line appear, and the
# numbers equal `graft race --json` with the same options (run alongside).
# Then a bigger race is cancelled with c and leaves its checkpoint.
set -u
. "$(dirname "$0")/lib/tui.sh"
tui_setup
SHARED=${GRAFT_SHARED:-/work/shared}
STORIES=$SHARED/models/tinyllamas/stories260K/stories260K.bin
DATA=$SHARED/data/tinystories.txt
[ -f "$STORIES" ] && [ -f "$DATA" ] || { echo "stories260K or tinystories.txt not found under \$GRAFT_SHARED"; exit 77; }
TOK=2048

# headless reference, in the background while the workbench races
"$GRAFT_BIN" race "$STORIES" --data "$DATA" --ctx 128 --batch 4 --tokens $TOK --lr-mixer 1e-3 --lr-rest 1e-4 \
    --keep 0.5 --json --log-every 0 >"$TMP/race.json" 2>"$TMP/race.err" &
CLI=$!

tui_settings "{\"race_tokens\": $TOK}"
tui_start rec 80 24 TERM=xterm-256color LANG=C.UTF-8 -- "'$STORIES'" --text "'$DATA'"
tui_keys rec 8
tui_wait rec "stats: done" 1200 || fail "teacher load + statistics did not finish"
tui_keys rec 6
tui_wait rec "budget $TOK tokens/init" || fail "Recover screen"
tui_keys rec Enter
tui_wait rec "KL per token" 1200 || fail "no curves"
tui_wait rec "random step" 1200 || fail "no progress line"
tui_wait rec "target reached: random" 3000 || fail "the race did not finish"
tui_screen rec >"$TMP/screen.txt"
grep -qF "taylor-calibrate" "$TMP/screen.txt" || fail "legend lacks taylor-calibrate"
grep -qF "tokens" "$TMP/screen.txt" || fail "x label missing"
grep -qF "last checkpoint: taylor-calibrate step 4:" "$TMP/screen.txt" || fail "checkpoint line missing"
grep -qE "target [0-9]" "$TMP/screen.txt" || fail "target line missing from the legend"
# the race's checkpoints: race/<teacher>-<digest of the race's request>, which request.json records
D1=$(ls -d "$XDG_STATE_HOME"/graft/race/stories260K-* 2>/dev/null)
[ "$(printf '%s\n' "$D1" | grep -c .)" = 1 ] || fail "want one race folder under \$XDG_STATE_HOME/graft/race: $D1"
[ -s "$D1/random.ckpt" ] && [ -s "$D1/taylor-calibrate.ckpt" ] || fail "checkpoints not in $D1"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["command"].startswith("graft race ") and sys.argv[1].split("/")[-2].endswith(r["digest"][:10]), r' \
    "$D1/request.json" || fail "$D1/request.json does not record the race"
got=$(grep -o "target reached: .*" "$TMP/screen.txt" | sed 's/ *$//')

wait $CLI || fail "graft race failed: $(cat "$TMP/race.err")"
want=$(python3 - "$TMP/race.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
t = j["tokens_to_target"]
f = lambda v: "never" if v is None else "%.0f" % v
r = "undefined" if j["ratio"] is None else "%.2f" % j["ratio"]
print("target reached: random %s, taylor-calibrate %s -> ratio %s" % (f(t["random"]), f(t["taylor-calibrate"]), r))
PY
)
[ "$got" = "$want" ] || fail "workbench says '$got', graft race --json says '$want'"
# the held-out perplexities beside the teacher's on the same sequences, which the screen names
line=$(grep -oE "held-out (ppl, the same [0-9]+ sequences of 128 tokens|[0-9]+x128 ppl): teacher [0-9.e+]+ .*" "$TMP/screen.txt")
[ -n "$line" ] || fail "Recover does not show the held-out perplexities with the teacher's"
python3 - "$TMP/race.json" "$line" <<'PY' || fail "held-out perplexities on Recover: $line"
import json, re, sys
j, line = json.load(open(sys.argv[1])), sys.argv[2]
teacher = float(re.search(r"teacher ([0-9.e+]+)", line).group(1))
runs = {r["init"]: r["final_eval_ppl"] for r in j["runs"]}
shown = {k: float(re.search(re.escape(k) + r" ([0-9.e+]+)", line).group(1)) for k in runs}
for k, v in runs.items():  # 4 significant digits on screen
    assert abs(shown[k] - v) <= 5e-4 * v, (k, shown[k], v)
# the teacher scores its own held-out text better than students trained for 4 steps (finite, positive)
assert 1 < teacher < min(runs.values()), (teacher, runs)
if "teacher_eval_ppl" in j:  # graft race reports it on the same sequences: the same number
    assert abs(teacher - j["teacher_eval_ppl"]) <= 5e-4 * j["teacher_eval_ppl"], (teacher, j["teacher_eval_ppl"])
print("held-out ppl: teacher %.4g, %s" % (teacher, runs))
PY
# the held-out perplexities land in Results with the CLI's numbers
ppl=$(python3 -c "import json,sys; print('%.4f' % json.load(open(sys.argv[1]))['runs'][1]['final_eval_ppl'])" "$TMP/race.json")
tui_keys rec 7
tui_wait rec "race tinystories held-out" || fail "Results lacks the race rows and their slice"
tui_screen rec | grep -E "t-calib|taylor-calibrate" | grep -qE " $ppl( |\$)" || { tui_screen rec; fail "Results row lacks the held-out ppl $ppl"; }

# a bigger race (+ doubles the budget), cancelled while random trains
tui_keys rec 6
for i in 1 2 3 4 5; do tui_keys rec +; done
tui_wait rec "budget 65536 tokens/init" || fail "+ did not double the budget"
sum1=$(cat "$D1"/*.ckpt | md5sum)
tui_keys rec Enter
tui_wait rec "random step" 300 || fail "the second race did not start"
tui_keys rec c
tui_wait rec "last checkpoint: random step" 100 || fail "no checkpoint shown on cancel"
tui_keys rec 8
tui_wait rec "race: cancelled after" 100 || fail "cancel not logged"
# another budget, another request: its own folder; the first race's checkpoints are as they were
D2=$(ls -d "$XDG_STATE_HOME"/graft/race/stories260K-* | grep -vxF "$D1")
[ -n "$D2" ] || fail "the second race shares the first one's checkpoint folder"
[ -s "$D2/random.ckpt" ] || fail "cancel left no checkpoint"
[ "$(cat "$D1"/*.ckpt | md5sum)" = "$sum1" ] || fail "the second race changed the first one's checkpoints"
tui_keys rec q
tui_wait rec "GRAFT_EXIT=0" 100 || fail "graft did not exit cleanly"
echo "ok: $got"
