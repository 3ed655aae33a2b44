# Stage 1 piece by piece on stories260K (small settings): --stage1, --distance,
# --half-life in convert, ablate (--stage1-subsets) and race, the records in
# config.json / report.json / --json, the no-sink statistics of graft stats,
# and the errors.
. "$(dirname "$0")/../lib.sh"
need_stories
TS=$SHARED/data/tinystories.txt
[ -f "$TS" ] || skip "tinystories.txt not found under \$GRAFT_SHARED"
SMALL="--keep 0.5 --strategy uniform --calib $TS --ctx 128 --calib-seqs 2 --steps 10"

# all four components are today's taylor-calibrate, bit for bit (report: all but the timings)
"$G" convert "$STORIES" $SMALL --init taylor-calibrate --out "$TMP/def" >/dev/null || fail "convert default"
"$G" convert "$STORIES" $SMALL --init taylor-calibrate --stage1 gate,sigma,beta,decay --out "$TMP/all" --json >"$TMP/all.json" ||
    fail "convert --stage1 all four"
cmp -s "$TMP/def/model.safetensors" "$TMP/all/model.safetensors" || fail "all four components differ from the default"
same_report() { # same_report A B: report.json equal but for the Stage 2 seconds
    python3 - "$1" "$2" <<'PY'
import json, sys
def strip(o):
    if isinstance(o, dict):
        return {k: strip(v) for k, v in o.items() if k != "seconds"}
    if isinstance(o, list):
        return [strip(v) for v in o]
    return o
a, b = (strip(json.load(open(p))) for p in sys.argv[1:3])
sys.exit(0 if a == b else 1)
PY
}
same_report "$TMP/def/report.json" "$TMP/all/report.json" || fail "all four components: report differs"
[ "$(json_get "$TMP/all/config.json" "(j['graft_student']['init']['stage1'], j['graft_student']['init']['decay_distance'], j['graft_student']['init']['half_life'])")" = "(['decay', 'beta', 'sigma', 'gate'], 'all', None)" ] ||
    fail "config.json Stage 1 record: $(cat "$TMP/all/config.json")"
[ "$(json_get "$TMP/all.json" "[l['stage1']['components'] for l in j['layers']] == [['decay', 'beta', 'sigma', 'gate']] * 2 and j['student']['init']['stage1'] == ['decay', 'beta', 'sigma', 'gate']")" = True ] ||
    fail "--json lacks the components"

# none is align-only, bit for bit
"$G" convert "$STORIES" $SMALL --init taylor-calibrate --stage1 none --out "$TMP/none" >/dev/null || fail "convert --stage1 none"
"$G" convert "$STORIES" $SMALL --init align-only --out "$TMP/ao" >/dev/null || fail "convert align-only"
cmp -s "$TMP/none/model.safetensors" "$TMP/ao/model.safetensors" || fail "--stage1 none differs from align-only"
[ "$(json_get "$TMP/none/report.json" "[('stage1' in l, l['stage2']['loss']) for l in j['layers']] == [(False, l['stage2']['loss']) for l in json.load(open('$TMP/ao/report.json'))['layers']]")" = True ] ||
    fail "--stage1 none: report differs from align-only"

# one component: recorded; its values set, the others null; a student folder reloads with it
"$G" convert "$STORIES" $SMALL --init taylor-only --stage1 beta --distance no-sink --out "$TMP/beta" --json >"$TMP/beta.json" || fail "convert --stage1 beta"
[ "$(json_get "$TMP/beta.json" "[(l['stage1']['components'], l['stage1']['dt_bias'][0], l['stage1']['sigma_star'][0], l['stage1']['alpha_star'], l['stage1']['beta_star'][0] is not None) for l in j['layers']]")" = "[(['beta'], None, None, None, True), (['beta'], None, None, None, True)]" ] ||
    fail "single component report: $(cat "$TMP/beta.json")"
[ "$(json_get "$TMP/beta/config.json" "(j['graft_student']['init']['stage1'], j['graft_student']['init']['decay_distance'])")" = "(['beta'], 'no-sink')" ] ||
    fail "single component config"
"$G" eval "$TMP/beta" --text "$TS" --ctx 128 --eval-windows 1 --split --json >/dev/null 2>&1 || "$G" eval "$TMP/beta" --text "$TS" --ctx 128 --json >/dev/null ||
    fail "a student folder with --stage1 beta does not load"

# the decay override: every head's idle half-life is N; the no-sink distance feeds the decay
"$G" convert "$STORIES" $SMALL --init taylor-only --half-life 24 --out "$TMP/hl" --json >"$TMP/hl.json" || fail "convert --half-life"
[ "$(json_get "$TMP/hl.json" "all(abs(h - 24) < 24e-6 for l in j['layers'] for h in l['half_life']) and j['student']['init']['half_life'] == 24")" = True ] ||
    fail "--half-life 24: $(cat "$TMP/hl.json")"
"$G" convert "$STORIES" $SMALL --init taylor-only --stage1 decay --distance no-sink --out "$TMP/ns" --json >"$TMP/ns.json" || fail "convert --distance no-sink"
[ "$(json_get "$TMP/ns.json" "all(d == n for l in j['layers'] for d, n in zip(l['stage1']['decay_distance'], l['stage1']['mean_distance_no_sink'])) and any(d != n for l in j['layers'] for d, n in zip(l['stage1']['mean_distance'], l['stage1']['mean_distance_no_sink']))")" = True ] ||
    fail "--distance no-sink did not set the decay from the no-sink distance"

# graft stats: the no-sink distance and the sink share, text and JSON
"$G" stats "$STORIES" --text "$TS" --ctx 64 --seqs 2 --json >"$TMP/st.json" || fail "stats --json"
[ "$(json_get "$TMP/st.json" "all(0.5 <= h['mean_distance_no_sink'] and 0 <= h['sink_share'] <= 1 for l in j['layers'] for h in l['heads'])")" = True ] ||
    fail "stats JSON lacks sane no-sink statistics: $(head -c 600 "$TMP/st.json")"
"$G" stats "$STORIES" --text "$TS" --ctx 64 --seqs 2 >"$TMP/st.txt" || fail "stats text"
grep -q "without the first key" "$TMP/st.txt" && grep -q "share on the first key" "$TMP/st.txt" || fail "stats text lacks the new tables"

# ablate --stage1-subsets: all, none, 4 singles, 4 leave-one-outs, + the override; none's row is align-only's
"$G" ablate "$STORIES" --calib "$TS" --eval "$TS" --keep 0.5 --strategy uniform --init align-only,taylor-calibrate --stage1-subsets \
    --half-life 16 --ctx 64 --calib-seqs 2 --select-windows 1 --eval-windows 2 --steps 5 --json >"$TMP/sub.json" || fail "ablate --stage1-subsets"
python3 - "$TMP/sub.json" <<'PY' || fail "ablate --stage1-subsets rows: $(cat "$TMP/sub.json")"
import json, sys
j = json.load(open(sys.argv[1]))
rows = j["rows"]
sets = [(r["init"], tuple(r["stage1"]), r["half_life_override"]) for r in rows]
full = ("decay", "beta", "sigma", "gate")
want = [("align-only", (), None), ("taylor-calibrate", full, None), ("taylor-calibrate", (), None)]
want += [("taylor-calibrate", (c,), None) for c in full]
want += [("taylor-calibrate", tuple(c for c in full if c != d), None) for d in full]
want += [("taylor-calibrate", full, 16)]
assert sets == want, sets
assert rows[2]["ppl"] == rows[0]["ppl"], "none is not align-only"
hl = rows[-1]["half_life"]  # Stage 2 (5 steps) moves the half-lives of 16 a little
assert abs(hl["mean"] - 16) < 0.8 and hl["max"] - hl["min"] < 1.6, hl
assert j["meta"]["students"] == 11 and all(r["ppl"] > 1 for r in rows)
PY
"$G" ablate "$STORIES" --calib "$TS" --eval "$TS" --keep 0.5 --strategy uniform --init taylor-only --stage1 decay/beta,gate \
    --ctx 64 --calib-seqs 2 --select-windows 1 --eval-windows 2 >"$TMP/sub.md" || fail "ablate --stage1 list"
grep -q "^| uniform | 0.50 | 0,1,3 | taylor-only | decay |" "$TMP/sub.md" && grep -q "| taylor-only | beta,gate |" "$TMP/sub.md" ||
    fail "ablate markdown stage1 column: $(cat "$TMP/sub.md")"

# race builds with the components and names them
"$G" race "$STORIES" --inits random,taylor-only --stage1 decay --data "$TS" --ctx 32 --batch 2 --tokens 320 --threads 1 \
    --json --log-every 0 >"$TMP/race.json" 2>"$TMP/race.err" || fail "race --stage1: $(cat "$TMP/race.err")"
[ "$(json_get "$TMP/race.json" "[(r['init'], r['stage1']) for r in j['runs']]")" = "[('random', []), ('taylor-only[decay]', ['decay'])]" ] ||
    fail "race runs: $(cat "$TMP/race.json")"

# errors: one line, non-zero exit
expect_error "unknown Stage 1 component 'alpha'" "$G" convert "$STORIES" $SMALL --init taylor-only --stage1 decay,alpha
expect_error "given twice" "$G" convert "$STORIES" $SMALL --init taylor-only --stage1 beta,beta
expect_error "it needs decay among the --stage1 components" "$G" convert "$STORIES" $SMALL --init taylor-only --stage1 beta --half-life 8
expect_error "--half-life must be a number of tokens" "$G" convert "$STORIES" $SMALL --init taylor-only --half-life -3
expect_error "unknown distance 'far'" "$G" convert "$STORIES" $SMALL --init taylor-only --distance far
expect_error "init random has no Stage 1" "$G" convert "$STORIES" $SMALL --init random --stage1 decay
expect_error "not both" "$G" ablate "$STORIES" --calib "$TS" --eval "$TS" --stage1-subsets --stage1 decay
expect_error "need an init with Stage 1" "$G" ablate "$STORIES" --calib "$TS" --eval "$TS" --init random --half-life 8
expect_error "unknown Stage 1 component" "$G" ablate "$STORIES" --calib "$TS" --eval "$TS" --init taylor-only --stage1 decay/sigmas
expect_error "apply when race builds the students" "$G" race "$STORIES" "$TMP/def" "$TMP/all" --stage1 decay --data "$TS"
# a student folder with a bad Stage 1 record is refused, the folder left as it is
python3 - "$TMP/beta/config.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); j["graft_student"]["init"]["stage1"] = ["beta", "omega"]
json.dump(j, open(sys.argv[1], "w"))
PY
expect_error "graft_student.init.stage1" "$G" eval "$TMP/beta" --text "$TS" --ctx 128
[ -f "$TMP/beta/model.safetensors" ] || fail "a refused folder lost a file"
exit 0
