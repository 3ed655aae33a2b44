#!/bin/sh
# graft bench-decode on stories260K and a 50 % student of it: the --json
# shape (a point per context x batch with prefill and decode figures), the
# memory per sequence as the decode run allocated it against the per-token
# KV bytes and GDN state bytes `graft generate --json` reports (two
# computations of the same allocation: the run's carving and the model's
# formula), the table, and the usage errors. Speed is only checked to be a
# positive finite number: timing belongs to benchmarks, not tests.
# (run alone: defaults as tests/run.sh sets them)
: "${GRAFT_ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}" "${GRAFT_BIN:=$GRAFT_ROOT/build/graft}"
: "${GRAFT_SHARED:=$(cd "$GRAFT_ROOT/.." && pwd)/shared}"
export GRAFT_ROOT GRAFT_BIN GRAFT_SHARED
. "$(dirname "$0")/../lib.sh"
need_stories
TEXT=$SHARED/data/tinystories.txt
[ -f "$TEXT" ] || skip "tinystories.txt not found under \$GRAFT_SHARED ($SHARED)"

# check JSON GENERATE_JSON CONTEXTS BATCHES TOKENS KIND
check() {
    python3 - "$@" <<'PY' || fail "bench-decode --json of $6: see above"
import json, math, sys
j, gen = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
ctxs, batches, tokens, kind = [int(x) for x in sys.argv[3].split(",")], [int(x) for x in sys.argv[4].split(",")], int(sys.argv[5]), sys.argv[6]
def bad(msg):
    print(msg); sys.exit(1)
if j["kind"] != kind: bad(f"kind {j['kind']}, expected {kind}")
if j["layers"] != 5: bad(f"layers {j['layers']}")
if (j["gdn_layers"] > 0) != (kind == "student"): bad(f"gdn_layers {j['gdn_layers']} for a {kind}")
if j["kv_bytes_per_token"] != gen["kv_bytes_per_token"]["student"]: bad("kv_bytes_per_token differs from generate's")
pts = j["points"]
if [(p["context"], p["batch"]) for p in pts] != [(c, b) for c in ctxs for b in batches]: bad(f"points {pts}")
for p in pts:
    for k in ("prefill_s", "prefill_tok_s", "decode_s", "decode_tok_s", "ms_per_step"):
        if not (isinstance(p[k], (int, float)) and math.isfinite(p[k]) and p[k] > 0): bad(f"{k} = {p[k]} in {p}")
    if p["tokens"] != tokens: bad(f"tokens {p['tokens']}")
    # tokens per second follow from the times (the same run, nothing re-timed): within float printing
    if abs(p["decode_tok_s"] * p["decode_s"] - p["batch"] * tokens) > 1e-6 * p["batch"] * tokens: bad(f"decode rate {p}")
    if abs(p["prefill_tok_s"] * p["prefill_s"] - p["batch"] * p["context"]) > 1e-6 * p["batch"] * p["context"]: bad(f"prefill rate {p}")
    m = p["memory_per_seq"]
    positions = p["context"] + tokens + 1  # the cache holds the warm-up step's position too
    # stories260K's per-layer K and V rows are multiples of 64 bytes, so the carving adds no padding: exact
    if m["kv_cache"] != positions * gen["kv_bytes_per_token"]["student"]: bad(f"kv_cache {m['kv_cache']} != {positions} x {gen['kv_bytes_per_token']['student']}")
    if m["gdn_state"] != gen["gdn_state_bytes"]: bad(f"gdn_state {m['gdn_state']} != generate's {gen['gdn_state_bytes']}")
    if m["total"] != m["kv_cache"] + m["gdn_state"]: bad("total != kv_cache + gdn_state")
    if not p["run_bytes"] > m["total"] * p["batch"]: bad("run_bytes holds less than the caches")
PY
}

"$G" generate "$STORIES" -n 1 --json >"$TMP/gen_t.json" || fail "generate teacher"
"$G" bench-decode "$STORIES" --contexts 32,100 --batch 1,3 --tokens 4 --json >"$TMP/t.json" || fail "bench-decode teacher"
check "$TMP/t.json" "$TMP/gen_t.json" 32,100 1,3 4 teacher

"$G" convert "$STORIES" --keep 0.5 --strategy uniform --init taylor-calibrate --calib "$TEXT" --ctx 64 \
    --calib-seqs 1 --steps 2 --eval-windows 1 --out "$TMP/s" >/dev/null 2>&1 || fail "convert"
"$G" generate "$TMP/s" -n 1 --json >"$TMP/gen_s.json" || fail "generate student"
# a prefill in chunks of 16 (the context is no multiple of it): the GDN state carried between calls
"$G" bench-decode "$TMP/s" --contexts 1k --batch 2 --tokens 3 --json >/dev/null 2>"$TMP/err" && fail "1k fits stories260K's 512"
grep -q "exceeds the model's context of 512" "$TMP/err" || fail "context error: $(cat "$TMP/err")"
"$G" bench-decode "$TMP/s" --contexts 40 --batch 1,2 --tokens 3 --prefill-chunk 16 --json >"$TMP/s.json" ||
    fail "bench-decode student"
check "$TMP/s.json" "$TMP/gen_s.json" 40 1,2 3 student
[ "$(json_get "$TMP/s.json" "j['points'][0]['prefill_chunk']")" = 16 ] || fail "prefill_chunk not 16"

# the table: a header and a row per point
"$G" bench-decode "$STORIES" --contexts 16 --batch 1,2 --tokens 2 >"$TMP/table" || fail "bench-decode table"
grep -q "decode t/s" "$TMP/table" || fail "no table header: $(cat "$TMP/table")"
[ "$(grep -cE '^ +16 +[12] ' "$TMP/table")" = 2 ] || fail "table rows: $(cat "$TMP/table")"

expect_error "--contexts '1x'" "$G" bench-decode "$STORIES" --contexts 1x
[ "$rc" = 2 ] || fail "--contexts 1x: exit $rc, expected 2"
expect_error "--batch '0'" "$G" bench-decode "$STORIES" --batch 0
[ "$rc" = 2 ] || fail "--batch 0: exit $rc, expected 2"
expect_error "--tokens must be in [1, " "$G" bench-decode "$STORIES" --tokens 0
expect_error "exceeds the model's context of 512" "$G" bench-decode "$STORIES" --contexts 500 --tokens 64
[ "$rc" = 1 ] || fail "context too long: exit $rc, expected 1"
echo "ok"
