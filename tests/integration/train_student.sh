#!/bin/sh
# Recovery training on student folders (made by `graft convert`):
# stories260K at 50 % uniform, random vs taylor-calibrate students raced on the
# same budget and data order; the race prints a tokens-to-target ratio; a
# trained student written with --out reloads (graft eval) with the perplexity
# the trainer reported.
. "$(dirname "$0")/../lib.sh"
need_stories
DATA=$SHARED/data/tinystories.txt
[ -f "$DATA" ] || skip "tinystories.txt not found under \$GRAFT_SHARED"
for i in random taylor-calibrate; do
    $G convert "$STORIES" --keep 0.5 --strategy uniform --init $i --calib "$DATA" --steps 60 --threads 1 \
        --out "$TMP/stu-$i" >/dev/null 2>"$TMP/conv.err" || fail "convert --init $i failed: $(cat "$TMP/conv.err")"
done
$G race "$STORIES" "$TMP/stu-random" "$TMP/stu-taylor-calibrate" --data "$DATA" --ctx 64 --batch 2 --tokens 6400 \
    --lr-mixer 1e-3 --lr-rest 1e-4 --threads 1 --log-every 0 --json >"$TMP/race.json" 2>"$TMP/race.err" ||
    fail "race failed: $(cat "$TMP/race.err")"
python3 - "$TMP/race.json" <<'PY' || fail "race JSON check failed"
import json, sys
j = json.load(open(sys.argv[1]))
assert [r["init"] for r in j["runs"]] == ["random", "taylor-calibrate"]
n1 = j["tokens_to_target"]["random"]; n2 = j["tokens_to_target"]["taylor-calibrate"]
assert 0 < n1 <= 6400
if n2 is not None:
    assert abs(j["ratio"] - n1 / n2) < 1e-12
print("ratio", j["ratio"])
PY
$G race "$STORIES" "$TMP/stu-random" "$TMP/stu-taylor-calibrate" --data "$DATA" --ctx 64 --batch 2 --tokens 1280 \
    --lr-mixer 1e-3 --threads 1 --log-every 0 >"$TMP/race.txt" 2>/dev/null || fail "race (text) failed"
grep -q "tokens-to-target ratio" "$TMP/race.txt" || fail "race does not print the ratio: $(cat "$TMP/race.txt")"

$G train "$TMP/stu-random" --teacher "$STORIES" --data "$DATA" --ctx 64 --batch 2 --tokens 3200 --lr-mixer 1e-3 \
    --eval-frac 0.5 --eval-seqs 0 --threads 1 --log-every 0 --json --out "$TMP/trained" >"$TMP/train.json" ||
    fail "train --out failed"
[ -f "$TMP/trained/config.json" ] || fail "no trained student folder"
$G eval "$TMP/trained" --text "$DATA" --ctx 64 --json >"$TMP/eval.json" 2>/dev/null || fail "graft eval of the trained student failed"
python3 - "$TMP/train.json" "$TMP/eval.json" <<'PY' || fail "trained student does not reload with its perplexity"
import json, sys
t, e = (json.load(open(p)) for p in sys.argv[1:3])
assert t["init"] == "random"
# the trainer's held-out half and eval's whole text differ; both must be far below the untrained student's
assert abs(e["ppl"] / t["final_eval_ppl"] - 1) < 0.3, (e["ppl"], t["final_eval_ppl"])
PY
expect_error "already a student" $G train "$TMP/stu-random" --teacher "$STORIES" --keep 0.5 --tokens 64 --ctx 32 --data "$DATA"
exit 0
