# Stage 1's value-scale fit (--sigma-fit reference|scaled|gated, METHOD.md section 3)
# on stories260K: the default is the reference fit, recorded in config.json and
# in the JSON of convert, ablate and race; scaled differs only in Wv / Wg and
# its sigma before the clamp is sqrt(dk) times the reference one; the forward's
# query scale stays dk^-1/2; errors.
. "$(dirname "$0")/../lib.sh"
need_stories
TS=$SHARED/data/tinystories.txt
[ -f "$TS" ] || skip "tinystories.txt not found under \$GRAFT_SHARED"
SMALL="--keep 0.5 --strategy uniform --calib $TS --ctx 64 --calib-seqs 2 --steps 0"

"$G" convert "$STORIES" $SMALL --init taylor-only --out "$TMP/ref" --json >"$TMP/ref.json" || fail "convert (default fit)"
"$G" convert "$STORIES" $SMALL --init taylor-only --sigma-fit scaled --out "$TMP/sc" --json >"$TMP/sc.json" ||
    fail "convert --sigma-fit scaled"
[ "$(json_get "$TMP/ref/config.json" "(j['graft_student']['init']['sigma_fit'], j['graft_student']['gdn']['query_scale'])")" = "('reference', 'dk^-1/2')" ] ||
    fail "config.json of the default: $(cat "$TMP/ref/config.json")"
[ "$(json_get "$TMP/sc/config.json" "(j['graft_student']['init']['sigma_fit'], j['graft_student']['gdn']['query_scale'])")" = "('scaled', 'dk^-1/2')" ] ||
    fail "config.json of --sigma-fit scaled"
# sqrt(dk) = sqrt(8) on stories260K; 1e-5 relative: the core output is linear in
# the query scale, float32 rounding of scale * q is ~1e-7
python3 - "$TMP/ref.json" "$TMP/sc.json" "$TMP/ref/config.json" <<'PY' || fail "scaled / reference sigma"
import json, math, sys
a, b, cfg = (json.load(open(p)) for p in sys.argv[1:4])
assert a["student"]["init"]["sigma_fit"] == "reference" and b["student"]["init"]["sigma_fit"] == "scaled"
root = math.sqrt(cfg["graft_student"]["gdn"]["head_k_dim"])
n = 0
for la, lb in zip(a["layers"], b["layers"]):
    for x, y in zip(la["stage1"]["sigma_unclamped"], lb["stage1"]["sigma_unclamped"]):
        assert math.isfinite(x) and math.isfinite(y) and abs(y - root * x) <= 1e-5 * abs(root * x), (x, y, root)
        n += 1
    # the fit moves the value scale only: decay and write gate are the same
    assert la["stage1"]["dt_bias"] == lb["stage1"]["dt_bias"] and la["stage1"]["beta_star"] == lb["stage1"]["beta_star"]
assert n > 0
PY

# ablate: both fits in one call; sets without sigma once; rows record the fit
"$G" ablate "$STORIES" --calib "$TS" --eval "$TS" --keep 0.5 --strategy uniform --init random,taylor-only \
    --stage1 all/decay --sigma-fit reference,scaled --ctx 64 --calib-seqs 2 --select-windows 1 --eval-windows 2 --steps 0 \
    --json >"$TMP/ab.json" || fail "ablate --sigma-fit reference,scaled"
[ "$(json_get "$TMP/ab.json" "([(r['init'], r['stage1'], r['sigma_fit']) for r in j['rows']], j['meta']['sigma_fits'])")" = \
  "([('random', [], None), ('taylor-only', ['decay', 'beta', 'sigma', 'gate'], 'reference'), ('taylor-only', ['decay'], None), ('taylor-only', ['decay', 'beta', 'sigma', 'gate'], 'scaled')], ['reference', 'scaled'])" ] ||
    fail "ablate rows: $(json_get "$TMP/ab.json" "[(r['init'], r['stage1'], r['sigma_fit'], r['ppl']) for r in j['rows']]")"
[ "$(json_get "$TMP/ab.json" "j['rows'][1]['ppl'] != j['rows'][3]['ppl']")" = True ] || fail "the two fits gave one perplexity"

# race: the fit in the label and in each run's JSON
"$G" race "$STORIES" --inits random,taylor-only --sigma-fit scaled --data "$TS" --ctx 32 --batch 2 --tokens 192 --threads 1 \
    --json --log-every 0 >"$TMP/race.json" 2>"$TMP/race.err" || fail "race --sigma-fit: $(cat "$TMP/race.err")"
[ "$(json_get "$TMP/race.json" "[(r['init'], r['sigma_fit']) for r in j['runs']]")" = "[('random', None), ('taylor-only[decay,beta,sigma,gate,sigma scaled]', 'scaled')]" ] ||
    fail "race runs: $(cat "$TMP/race.json")"

# gated (graft's variant): recorded; the gate runs before the fit, so alpha* is
# that of decay,beta,gate; sigma* is the clamp of the fit
"$G" convert "$STORIES" $SMALL --init taylor-only --sigma-fit gated --out "$TMP/g" --json >"$TMP/g.json" ||
    fail "convert --sigma-fit gated"
"$G" convert "$STORIES" $SMALL --init taylor-only --stage1 decay,beta,gate --out "$TMP/dbg" --json >"$TMP/dbg.json" ||
    fail "convert --stage1 decay,beta,gate"
python3 - "$TMP/g.json" "$TMP/dbg.json" "$TMP/g/config.json" <<'PY' || fail "gated fit"
import json, math, sys
g, d, cfg = (json.load(open(p)) for p in sys.argv[1:4])
assert cfg["graft_student"]["init"]["sigma_fit"] == "gated" and g["student"]["init"]["sigma_fit"] == "gated"
for lg, ld in zip(g["layers"], d["layers"]):
    assert lg["stage1"]["alpha_star"] == ld["stage1"]["alpha_star"], (lg["stage1"]["alpha_star"], ld["stage1"]["alpha_star"])
    for raw, st in zip(lg["stage1"]["sigma_unclamped"], lg["stage1"]["sigma_star"]):
        assert math.isfinite(raw) and st == min(10.0, max(0.1, raw)), (raw, st)
PY

expect_error "--sigma-fit: unknown fit 'half'" "$G" convert "$STORIES" $SMALL --init taylor-only --sigma-fit half
expect_error "init random has no Stage 1" "$G" convert "$STORIES" $SMALL --init random --sigma-fit scaled
expect_error "a fit given twice" "$G" ablate "$STORIES" --calib "$TS" --eval "$TS" --init taylor-only --sigma-fit scaled,scaled
exit 0
