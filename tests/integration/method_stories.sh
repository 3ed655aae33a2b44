# The method end to end on stories260K (small settings to stay fast):
# select, convert (folder contents, report, determinism), eval / ppl of the
# student folder, a small ablate.
. "$(dirname "$0")/../lib.sh"
need_stories
TS=$SHARED/data/tinystories.txt
[ -f "$TS" ] || skip "tinystories.txt not found under \$GRAFT_SHARED"
SMALL="--ctx 128 --calib-seqs 2 --steps 20"

"$G" select "$STORIES" --strategy uniform --keep 0.5 --json >"$TMP/sel.json" || fail "select uniform"
[ "$(json_get "$TMP/sel.json" "j['kept_layers']")" = "[0, 1, 3]" ] || fail "uniform 0.5 of 5 layers: $(cat "$TMP/sel.json")"
"$G" select "$STORIES" --strategy ar --keep 0.25 --text "$TS" --ctx 128 --select-windows 2 --json >"$TMP/ar.json" || fail "select ar"
[ "$(json_get "$TMP/ar.json" "len(j['scores']) == 5 and len(j['kept_layers']) == 1 and j['scores'][j['kept_layers'][0]] == max(j['scores'])")" = True ] ||
    fail "ar keeps the layer whose removal hurts most: $(cat "$TMP/ar.json")"

"$G" convert "$STORIES" --keep 0.5 --strategy uniform --init taylor-calibrate --calib "$TS" --out "$TMP/tc" $SMALL --json >"$TMP/conv.json" ||
    fail "convert taylor-calibrate"
for f in config.json model.safetensors report.json tokenizer.bin; do [ -f "$TMP/tc/$f" ] || fail "student folder lacks $f"; done
[ "$(json_get "$TMP/tc/config.json" "j['graft_student']['gdn_layers']")" = "[2, 4]" ] || fail "gdn layers"
[ "$(json_get "$TMP/tc/config.json" "(j['graft_student']['gdn']['query_scale'], j['graft_student']['init']['write_gate'], j['graft_student']['init']['name'])")" = "('dk^-1/2', 'reference', 'taylor-calibrate')" ] ||
    fail "GDN settings missing from config.json"
R=$TMP/tc/report.json
[ "$(json_get "$R" "[len(l['stage1'][k]) for l in j['layers'] for k in ('mean_distance','entropy','concentration','beta_star','sigma_star','dt_bias')] == [8]*12")" = True ] ||
    fail "per-head Stage 1 quantities missing"
[ "$(json_get "$R" "all(len(l['stage2']['loss']) == 21 and len(l['stage2']['heldout_loss']) == 21 and l['stage2']['best_loss'] <= l['stage2']['loss'][0] for l in j['layers'])")" = True ] ||
    fail "Stage 2 curves"
[ "$(json_get "$R" "all(0.3 <= b <= 0.7 for l in j['layers'] for b in l['stage1']['beta_star']) and all(isinstance(l['stage1']['alpha_star'], float) for l in j['layers'])")" = True ] ||
    fail "beta* / alpha*"
python3 - "$TMP/tc/model.safetensors" <<'PY' || fail "safetensors names"
import json, struct, sys
b = open(sys.argv[1], "rb").read(); n = struct.unpack("<Q", b[:8])[0]; h = json.loads(b[8:8 + n])
need = ["model.layers.2.linear_attn." + s for s in ("q_proj.weight", "k_proj.weight", "v_proj.weight", "a_proj.weight",
        "b_proj.weight", "g_proj.weight", "o_proj.weight", "A_log", "dt_bias", "o_norm.weight")]
assert all(k in h for k in need), [k for k in need if k not in h]
assert "model.layers.3.linear_attn.q_proj.weight" not in h
assert h["model.layers.2.linear_attn.g_proj.weight"]["shape"] == [64, 64] and h["model.layers.2.linear_attn.A_log"]["shape"] == [8]
assert all(v["dtype"] == "F32" for k, v in h.items() if k != "__metadata__")
PY
head -c 20000 "$TS" >"$TMP/eval.txt"
"$G" eval "$TMP/tc" --text "$TMP/eval.txt" --ctx 128 --json >"$TMP/e1.json" || fail "eval student"
"$G" ppl "$TMP/tc" --text "$TMP/eval.txt" --ctx 128 --json >"$TMP/e2.json" || fail "ppl student"
[ "$(json_get "$TMP/e1.json" "j['kind']")" = student ] || fail "eval did not load a student"
[ "$(json_get "$TMP/e1.json" "j['ppl']")" = "$(json_get "$TMP/e2.json" "j['ppl']")" ] || fail "eval and ppl disagree"
"$G" eval "$STORIES" --text "$TMP/eval.txt" --ctx 128 --json >"$TMP/e0.json" || fail "eval teacher"
[ "$(python3 -c "import json;a=json.load(open('$TMP/e0.json'))['ppl'];b=json.load(open('$TMP/e1.json'))['ppl'];print(1<a<b<100)")" = True ] ||
    fail "student ppl should be finite and above the teacher's: $(cat "$TMP/e0.json" "$TMP/e1.json")"

# default init is seeded and reproducible
"$G" convert "$STORIES" --keep 0.5 --strategy uniform --init random --calib "$TS" --out "$TMP/r1" $SMALL >/dev/null || fail "convert random"
"$G" convert "$STORIES" --keep 0.5 --strategy uniform --init random --calib "$TS" --out "$TMP/r2" $SMALL >/dev/null || fail "convert random 2"
cmp -s "$TMP/r1/model.safetensors" "$TMP/r2/model.safetensors" || fail "same seed, different students"
"$G" convert "$STORIES" --keep 0.5 --strategy uniform --init random --calib "$TS" --out "$TMP/r3" $SMALL --seed 2 >/dev/null || fail "convert seed 2"
cmp -s "$TMP/r1/model.safetensors" "$TMP/r3/model.safetensors" && fail "different seeds, same student"

# a small ablate, same file for calibration and evaluation (split)
"$G" ablate "$STORIES" --calib "$TS" --eval "$TS" --keep 0.5 --strategy uniform,manual:0+4 --init random,zero-gate,taylor-only \
    --ctx 64 --calib-seqs 2 --select-windows 1 --eval-windows 4 --json >"$TMP/abl.json" || fail "ablate"
[ "$(json_get "$TMP/abl.json" "len(j['rows'])")" = 6 ] || fail "ablate rows"
[ "$(json_get "$TMP/abl.json" "j['rows'][3]['kept_layers'] == [0, 4] and all(r['ppl'] > 1 and r['half_life']['max'] >= r['half_life']['median'] for r in j['rows']) and j['teacher_ppl'] > 1")" = True ] ||
    fail "ablate content: $(cat "$TMP/abl.json")"
[ "$(json_get "$TMP/abl.json" "j['meta']['split']['eval_begin'] >= j['meta']['split']['select_end'] > j['meta']['split']['select_begin'] > 0")" = True ] ||
    fail "calibration, selection and evaluation slices overlap"
"$G" ablate "$STORIES" --calib "$TS" --eval "$TS" --keep 0.5 --strategy uniform --init zero-gate --ctx 64 --calib-seqs 2 \
    --select-windows 1 --eval-windows 4 >"$TMP/abl.md" || fail "ablate markdown"
grep -q "^| uniform | 0.50 | 0,1,3 | zero-gate |" "$TMP/abl.md" || fail "markdown table: $(cat "$TMP/abl.md")"

# the shape of METHOD.md section 12 at small settings (deterministic: fixed seed and split):
# Stage 2 clearly beats the closed gate at 25 %, Stage 1 alone does not, and
# Stage 1 tightens the half-lives of the random init
"$G" ablate "$STORIES" --calib "$TS" --eval "$TS" --keep 0.25 --strategy uniform \
    --init zero-gate,taylor-only,align-only,taylor-calibrate --ctx 64 --calib-seqs 2 --select-windows 1 --eval-windows 8 \
    --steps 20 --json >"$TMP/shape.json" 2>/dev/null || fail "ablate shape"
[ "$(json_get "$TMP/shape.json" "(lambda p, h: p[2] < 0.8 * p[0] and p[3] < 0.8 * p[0] and abs(p[1] - p[0]) < 0.05 * p[0] and h[1] < h[0] / 4)([r['ppl'] for r in j['rows']], [r['half_life']['max'] for r in j['rows']])")" = True ] ||
    fail "section 12 shape: $(cat "$TMP/shape.json")"
exit 0
