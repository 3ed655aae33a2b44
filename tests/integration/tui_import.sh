#!/bin/sh
# graft tui --import under tmux: the workbench opened on stories260K with the
# committed SmolLM2-135M runs of docs/runs/smollm2-135m-h200 (two ablations and
# a race made on an H200). Their rows go under SmolLM2 (named by the JSON), not
# under the open teacher; 1 Teacher's recent list shows that teacher without
# loading it (its file is not here); its Results rows say the file they came
# from, g on one refuses with its line, Recover shows the imported race, I
# refuses a malformed file with one line, and the session keeps the rows; the
# Stage 1 sets graft ablate made with the gated sigma fit come in with it.
set -u
. "$(dirname "$0")/lib/tui.sh"
SHARED=${GRAFT_SHARED:-/work/shared}
ROOT=${GRAFT_ROOT:-.}
MODEL="$SHARED/models/tinyllamas/stories260K/stories260K.bin"
TEXT="$SHARED/data/tinystories.txt"
RUNS="$ROOT/docs/runs/smollm2-135m-h200"
[ -r "$MODEL" ] && [ -r "$TEXT" ] || { echo "stories260K or tinystories.txt not found under $SHARED"; exit 77; }
[ -r "$RUNS/ablate_train.json" ] || { echo "no $RUNS/ablate_train.json"; exit 1; }
tui_setup
mkdir -p "$TMP/no-teachers"
W=200 H=40
SMOL=SmolLM2-135M-Instruct.Q4_1.gguf

# a bad file and a refused --import: one line naming the file and the field, exit 1, nothing shown
printf '{"rows": [{"strategy": "uniform", "keep": 0.5, "kept_layers": [0], "init": "random", "ppl": "x"}], "meta": {"model": "m.gguf"}}\n' >"$TMP/bad.json"
"$GRAFT_BIN" tui --import "$TMP/bad.json" --snapshot results >"$TMP/out" 2>"$TMP/err" </dev/null
rc=$?
[ $rc -eq 1 ] || fail "--import of a malformed file: exit $rc, want 1"
[ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -qF "bad.json: rows[0].ppl should be a number" "$TMP/err" ||
    { cat "$TMP/err"; fail "--import of a malformed file: not the one line naming the file and the field"; }
echo "refused before starting: $(cat "$TMP/err")"

tui_start g $W $H TERM=xterm-256color LANG=C.UTF-8 GRAFT_TEACHERS="$TMP/no-teachers" -- "'$MODEL'" --text "'$TEXT'" \
    --import "'$RUNS/ablate_train.json'" --import "'$RUNS/race_lr1e-3_3M.json'" --import "'$RUNS/ablate_stage1.json'"
tui_wait g "stories260K.bin · 5 layers" 200 || fail "teacher did not load"
tui_keys g 8
tui_wait g "imported 12 ablate rows from ablate_train.json for $SMOL" || fail "the Log does not say where ablate_train.json went"
tui_wait g "imported race: 2 rows and curves from race_lr1e-3_3M.json for $SMOL" || fail "no race import in the Log"
tui_wait g "imported 24 ablate rows from ablate_stage1.json for $SMOL" || fail "no component rows import in the Log"

# the open teacher's Results hold none of them
tui_keys g 7
tui_wait g "results of converted students of this teacher" || fail "stories260K's Results should be empty"
tui_screen g | grep -qF "ablate_train.json" && fail "an imported row shows under stories260K"
echo "stories260K: no imported rows"

# I on Results: a malformed file refused with its line
tui_keys g I
tui_wait g "import JSON:" || fail "I did not open the import entry"
tui_keys g -l "$TMP/bad.json"
tui_keys g Enter
tui_wait g "bad.json: rows[0].ppl should be a number" || fail "I: the malformed file's line is not shown"
echo "I refuses bad.json with its line"

# 1 Teacher: SmolLM2 is among the recent teachers; Enter shows its imported runs (its file is not here)
tui_keys g 1
tui_wait g "$SMOL" || fail "SmolLM2 is not in the recent list"
tries=0 # Down until the recent list's cursor (→) is on it
while ! tui_screen g | grep -F "→" | grep -qF "$SMOL"; do
    [ $tries -lt 8 ] || fail "the recent list's cursor never reached $SMOL"
    tui_keys g Down
    sleep 0.2
    tries=$((tries + 1))
done
tui_keys g Enter
tui_wait g "graft  $SMOL (not loaded)" || fail "Enter on the imported teacher did not show it"
echo "SmolLM2 shown without loading: $(tui_screen g | grep -F 'showing the runs imported' | head -1 | sed 's/^ *//')"

tui_keys g 7
tui_wait g "38 rows in run order" || fail "SmolLM2's Results do not hold the 12 ablate, 2 race and 24 component rows"
[ "$(tui_screen g | grep -cF 'ablate_stage1.json')" -ge 5 ] || fail "rows do not name their file in the from column"
tui_wait g "imported from $(cd "$RUNS" && pwd)/ablate_stage1.json (its row 24), as run there: graft ablate" ||
    fail "the footer does not name the selected row's file"
tui_wait g "best measured here (uniform 50%" || fail "no best-variant line"
echo "SmolLM2 Results: $(tui_screen g | grep -F 'best measured here' | sed 's/^ *//')"
tui_keys g g
tui_wait g "g: this row was imported from" || fail "g on an imported row did not refuse"
tui_screen g | grep -qF "prompt box:" && fail "g opened the prompt box on an imported row"
echo "g refuses: $(tui_screen g | grep -F 'g: this row was imported' | sed 's/^ *//')"

tui_keys g 6
tui_wait g "imported from race_lr1e-3_3M.json: 2998272 tokens per init" || fail "Recover does not show the imported race"
tui_wait g "target reached: random 2998272, taylor-calibrate never" || fail "Recover: no target line"

tui_keys g q
tui_wait g "GRAFT_EXIT=0" || fail "graft did not quit cleanly"
python3 - "$XDG_STATE_HOME/graft/session.json" "$SMOL" <<'PY' || fail "the session does not keep the imported rows"
import json, sys
s = json.load(open(sys.argv[1]))
t = [t for t in s["teachers"] if t["name"] == sys.argv[2]][0]
rows = [r for r in t["results"] if r.get("imported_from")]
assert len(rows) == 38, len(rows)
assert all(r["teacher"] == sys.argv[2] for r in rows)
print(f"session: {len(rows)} imported rows under {sys.argv[2]}")
PY
# the next start (no MODEL) does not try to load the teacher whose file is not here, though it was shown last
tui_start h $W $H TERM=xterm-256color LANG=C.UTF-8 GRAFT_TEACHERS="$TMP/no-teachers" -- --text "'$TEXT'"
tui_wait h "stories260K.bin · 5 layers" 200 || fail "the next start did not open stories260K"
tui_screen h | grep -qF "could not open" && fail "the next start tried to open the imported teacher"
tui_keys h q
sleep 0.3
tui_screen h | grep -qF "quit (cancels the job)" && tui_keys h y # its statistics may still run
tui_wait h "GRAFT_EXIT=0" || fail "the second start did not quit cleanly"

# graft ablate --sigma-fit reference,gated (docs/runs/stage1-gated): the gated rows come in, their command says the fit
GATED="$ROOT/docs/runs/stage1-gated/stories260k-stage1-sets.json"
tui_start k $W $H TERM=xterm-256color LANG=C.UTF-8 GRAFT_TEACHERS="$TMP/no-teachers" -- "'$MODEL'" --text "'$TEXT'" \
    --import "'$GATED'"
tui_wait k "stories260K.bin · 5 layers" 200 || fail "teacher did not load (gated import)"
tui_keys k 7
tui_wait k "imported from $(cd "$(dirname "$GATED")" && pwd)/stories260k-stage1-sets.json (its row 12)" ||
    fail "the gated file's rows are not under stories260K"
tui_wait k "gated --json" || fail "no command in the footer"
# the footer wraps: its words joined again
tui_screen k | tr -s ' \n' '  ' | grep -qF -- "--stage1 sigma --sigma-fit gated --json" ||
    fail "the gated row's command does not say --sigma-fit gated"
echo "gated: $(tui_screen k | grep -F 'best measured here' | sed 's/^ *//')"
tui_keys k q
sleep 0.3
tui_screen k | grep -qF "quit (cancels the job)" && tui_keys k y
tui_wait k "GRAFT_EXIT=0" || fail "the gated import's workbench did not quit cleanly"
echo "tui_import: ok"
