# tests/gpu/paper/run.sh (issue 29's GPU steps) as a dry run on the CPU:
# stories260K for both teachers, tinystories.txt for the text, tiny shapes
# (GRAFT_PAPER_SMALL=1), 3 Stage-2 steps; every step's commands run, each
# writes the JSON the doc's tables read, and tests/gpu/runs/report.py prints them.
. "$(dirname "$0")/../lib.sh"
need_stories
TS=$SHARED/data/tinystories.txt
[ -f "$TS" ] || skip "tinystories.txt not found under \$GRAFT_SHARED"
export GRAFT_SHARED="$SHARED" GRAFT_BIN="$G" GRAFT_RUN_DEVICE=cpu GRAFT_QWEN="$STORIES" GRAFT_SMOLLM2="$STORIES" \
    GRAFT_ABLATE_STEPS=3 GRAFT_PAPER_SMALL=1 GRAFT_PAPER_TEXT="$TS" GRAFT_PAPER_DIR="$TMP/dir" OUT="$TMP/out"
S="$GRAFT_ROOT/tests/gpu/paper/run.sh"
R="$GRAFT_ROOT/tests/gpu/runs/report.py"
cd "$GRAFT_ROOT" || fail "no $GRAFT_ROOT"
sh "$S" teacher >"$TMP/teacher.log" 2>&1 || fail "run.sh teacher: $(tail -n 5 "$TMP/teacher.log")"
python3 "$R" teacher "$TMP/out/teacher_ppl.json" | grep -q '| small | 64 | graft cpu f32 |' || fail "teacher table"
[ "$(json_get "$TMP/out/stats.json" "len(j['layers']) > 0")" = True ] || fail "teacher stats"
sh "$S" ablate >"$TMP/ablate.log" 2>&1 || fail "run.sh ablate: $(tail -n 5 "$TMP/ablate.log")"
[ "$(json_get "$TMP/out/ablate_train.json" "(j['meta']['sigma_fits'], sorted({r['strategy'] for r in j['rows']}), j['meta']['keep_best'])")" = \
  "(['reference', 'scaled'], ['ar', 'ga-s2', 'uniform'], 'train')" ] || fail "ablate_train.json"
[ "$(json_get "$TMP/out/ablate_heldout.json" "j['meta']['keep_best']")" = heldout ] || fail "ablate_heldout.json"
python3 "$R" paper-ablate "$TMP/out/ablate_train.json" | grep -q '^| taylor-calibrate | scaled |' || fail "paper-ablate table"
sh "$S" stage1 >"$TMP/stage1.log" 2>&1 || fail "run.sh stage1: $(tail -n 5 "$TMP/stage1.log")"
python3 "$R" components "$TMP/out/stage1_components.json" | grep -q '^| without sigma |' || fail "components table"
sh "$S" race 1e-3 256 decay,beta >"$TMP/race.log" 2>&1 || fail "run.sh race: $(tail -n 5 "$TMP/race.log")"
[ "$(json_get "$TMP/out/race_lr1e-3_256.json" "([r['init'] for r in j['runs']], j['teacher_eval_ppl'] > 1)")" = \
  "(['random', 'taylor-calibrate', 'taylor-calibrate[decay,beta]'], True)" ] ||
    fail "race JSON: $(json_get "$TMP/out/race_lr1e-3_256.json" "[r['init'] for r in j['runs']]")"
# other students (a Stage 1 subset, a sigma fit) and more race options, as the 1.5B race takes them
GRAFT_RACE_STUDENTS="random taylor-calibrate:gate taylor-calibrate@gated" \
    GRAFT_RACE_ARGS="--recall-every 2 --recall-lengths 300 --recall-tasks niah-number" \
    sh "$S" race 1e-3 128 >"$TMP/race2.log" 2>&1 || fail "run.sh race (students): $(tail -n 5 "$TMP/race2.log")"
[ "$(json_get "$TMP/out/race_lr1e-3_128.json" "([r['init'] for r in j['runs']], len(j['runs'][2]['recall_curve']))")" = \
  "(['random', 'taylor-calibrate[gate]', 'taylor-calibrate[decay,beta,sigma,gate,sigma gated]'], 1)" ] ||
    fail "race JSON (students): $(json_get "$TMP/out/race_lr1e-3_128.json" "[r['init'] for r in j['runs']]")"
rm -f "$TMP/out/race_lr1e-3_128.json"
python3 "$R" verdict "$TMP/out/ablate_train.json" "$TMP/out/race_lr1e-3_256.json" | grep -q 'tokens to the same target' ||
    fail "verdict table"
n=$(ls "$TMP/out" | wc -l)
[ "$n" -le 8 ] || fail "$n files in \$OUT (the device tool brings back 8)"
exit 0
