#!/bin/sh
# graft train --recompute (activation recomputation in the backward): on and
# off train the same bits (the JSON curves and perplexity are equal); auto
# turns it on, with one stderr line, when only then the job fits the memory
# allowed (GRAFT_MEM_LIMIT between the two estimates), and says so in
# --json; below both estimates the refusal names what recomputing would need.
. "$(dirname "$0")/../lib.sh"
need_stories
DATA=$SHARED/data/tinystories.txt
[ -f "$DATA" ] || skip "tinystories.txt not found under \$GRAFT_SHARED"
ARGS="$STORIES --teacher $STORIES --keep 0.5 --strategy manual:0,1,3 --data $DATA --ctx 128 --batch 4 --tokens 10240
      --lr-mixer 1e-3 --lr-rest 1e-4 --threads 2 --json --log-every 0"
for r in off on; do
    $G train $ARGS --recompute $r >"$TMP/$r.json" 2>"$TMP/$r.err" || fail "--recompute $r: $(cat "$TMP/$r.err")"
done
python3 - "$TMP/off.json" "$TMP/on.json" <<'PY' || fail "--recompute on differs from off"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a["curve"] == b["curve"] and a["final_eval_ppl"] == b["final_eval_ppl"]
assert a["memory"]["recompute"] is False and b["memory"]["recompute"] is True
assert b["memory"]["parts"]["train_runs"] < a["memory"]["parts"]["train_runs"], (a["memory"], b["memory"])
PY
lo=$(json_get "$TMP/on.json" "j['memory']['estimate_bytes']")
hi=$(json_get "$TMP/off.json" "j['memory']['estimate_bytes']")
mid=$(( (lo + hi) / 2 ))
GRAFT_MEM_LIMIT=$mid $G train $ARGS >"$TMP/auto.json" 2>"$TMP/auto.err" || fail "auto under $mid bytes: $(cat "$TMP/auto.err")"
grep -q "^graft: recomputing activations in the backward to fit: .* instead of .* on cpu$" "$TMP/auto.err" ||
    fail "auto's stderr: $(cat "$TMP/auto.err")"
[ "$(wc -l <"$TMP/auto.err")" -eq 1 ] || fail "auto's stderr is not one line: $(cat "$TMP/auto.err")"
json_get "$TMP/auto.json" "j['memory']['recompute'] and j['curve'] == json.load(open('$TMP/off.json'))['curve']" |
    grep -q True || fail "auto did not recompute, or trained other bits"
expect_error "needs" env GRAFT_MEM_LIMIT=$mid $G train $ARGS --recompute off
expect_error "recomputing activations); lower --batch or --ctx" env GRAFT_MEM_LIMIT=$((lo - 1)) $G train $ARGS
expect_error "--recompute takes auto, on or off, not 'half'" $G train $ARGS --recompute half
exit 0
