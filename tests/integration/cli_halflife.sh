#!/bin/sh
# graft halflife on stories260K students: the JSON's shape and its internal
# consistency (quantiles ordered, histograms summing to the tokens, the teacher
# distance Stage 1 aimed at equal to report.json's statistics and, for a
# taylor-only student, to the idle half-life), a training checkpoint and the
# drift over it, and the bad inputs (one line, exit 2 or 1).
. "$(dirname "$0")/../lib.sh"
need_stories
DATA=$SHARED/data/tinystories.txt
[ -f "$DATA" ] || skip "tinystories.txt not found under \$GRAFT_SHARED"
$G convert "$STORIES" --keep 0.5 --strategy uniform --init taylor-only --calib "$DATA" --threads 1 \
    --out "$TMP/stu" >/dev/null 2>"$TMP/conv.err" || fail "convert failed: $(cat "$TMP/conv.err")"

# default text: the calibration file named in report.json
$G halflife "$TMP/stu" --ctx 64 --seqs 3 --threads 1 --json >"$TMP/hl.json" 2>"$TMP/hl.err" ||
    fail "halflife failed: $(cat "$TMP/hl.err")"
python3 - "$TMP/hl.json" "$TMP/stu/report.json" "$DATA" <<'PY' || fail "halflife JSON check failed"
import json, math, sys
j = json.load(open(sys.argv[1])); rep = json.load(open(sys.argv[2]))
assert j["student"].endswith("stu") and j["text"] == sys.argv[3], (j["student"], j["text"])
assert j["ctx"] == 64 and j["seqs"] == 3 and j["tokens"] == 192
gdn = [l["layer"] for l in rep["layers"]]
H = 8
assert [(h["layer"], h["head"]) for h in j["heads"]] == [(l, h) for l in gdn for h in range(H)]
names = {"too_short", "too_long", "too_spread", "write_gate_shut", "write_gate_saturated"}
dist = {(L["layer"], h["head"]): h for L in rep["teacher_attention_stats"] for h in L["heads"]}
for h in j["heads"]:
    for k in ("idle", "p10", "p50", "p90", "beta_p10", "beta_p50", "beta_p90", "teacher_distance"):
        assert isinstance(h[k], (int, float)) and math.isfinite(h[k]), (k, h[k])
    assert 0 < h["p10"] <= h["p50"] <= h["p90"], h
    assert 0 <= h["beta_p10"] <= h["beta_p50"] <= h["beta_p90"] <= 1, h
    assert 0 <= h["under_one"] <= 1 and 0 <= h["over_ctx"] <= 1
    assert sum(h["hist"]) == j["tokens"] and len(h["hist"]) == j["hist"]["bins"]
    assert set(h["flags"]) <= names and (h["reasons"] != "") == (len(h["flags"]) > 0), h
    d = dist[(h["layer"], h["head"])]
    # stories260K's distances are inside Stage 1's clamp [ln2/5, ln2/1e-3]
    assert abs(h["teacher_distance"] - d["mean_distance"]) <= 1e-9 * d["mean_distance"]
    assert abs(h["teacher_distance_no_sink"] - d["mean_distance_no_sink"]) <= 1e-9 * d["mean_distance_no_sink"]
    # taylor-only: the decay set the idle half-life to the distance (float32 A_log / dt_bias: 1e-5)
    assert abs(h["idle"] - h["teacher_distance"]) <= 1e-5 * h["teacher_distance"], (h["idle"], h["teacher_distance"])
PY

# text form: the table and the flagged list
$G halflife "$TMP/stu" --text "$DATA" --ctx 64 --seqs 2 --threads 1 >"$TMP/hl.txt" 2>/dev/null || fail "halflife (text) failed"
grep -q "heads flagged" "$TMP/hl.txt" || fail "no flagged summary: $(cat "$TMP/hl.txt")"

# training checkpoints of the student: their numbers and the drift of every head's median
# (10 steps of 128 tokens, a checkpoint every 5 kept as ck.bin.step-5, ck.bin.step-10)
$G train "$TMP/stu" --teacher "$STORIES" --data "$DATA" --ctx 64 --batch 2 --tokens 1280 --lr-mixer 1e-2 \
    --threads 1 --log-every 0 --eval-seqs 0 --ckpt "$TMP/ck.bin" --ckpt-every 5 --ckpt-keep >/dev/null 2>"$TMP/train.err" ||
    fail "train failed: $(cat "$TMP/train.err")"
[ -f "$TMP/ck.bin.step-5" ] && [ -f "$TMP/ck.bin.step-10" ] || fail "train --ckpt-keep kept $(ls "$TMP")"
cmp -s "$TMP/ck.bin" "$TMP/ck.bin.step-10" || fail "the last kept checkpoint is not the checkpoint"
$G halflife "$TMP/stu" --ctx 64 --seqs 2 --threads 1 --ckpt "$TMP/ck.bin.step-5" --ckpt "$TMP/ck.bin" --json \
    >"$TMP/ck.json" 2>"$TMP/ck.err" || fail "halflife --ckpt failed: $(cat "$TMP/ck.err")"
python3 - "$TMP/ck.json" "$TMP/hl.json" <<'PY' || fail "halflife --ckpt JSON check failed"
import json, sys
j = json.load(open(sys.argv[1])); before = json.load(open(sys.argv[2]))
d = j["drift"]
assert [x["tokens"] for x in d] == [0, 640, 1280] and [x["step"] for x in d] == [0, 5, 10], d
assert j["source"].endswith("ck.bin")
n = len(j["heads"])
assert all(len(x["p50"]) == n for x in d)
assert [h["p50"] for h in j["heads"]] == d[2]["p50"]
# a learning rate of 1e-2 on the gates for 5 steps moves the idle half-lives
moved = sum(abs(a - b) > 1e-4 * abs(b) for a, b in zip(d[1]["idle"], d[0]["idle"]))
assert moved > n // 2, moved
assert all(abs(a - h["idle"]) <= 1e-9 * h["idle"] for a, h in zip(d[0]["idle"], before["heads"]))
PY

# a per-head fix: layer 2 head 0 set to 16 tokens, then 20 Stage 2 steps of layer 2 alone
L2=$(python3 -c "import json; print(json.load(open('$TMP/stu/report.json'))['layers'][0]['layer'])")
$G halflife "$TMP/stu" --ctx 64 --seqs 2 --threads 1 --fix "$L2:0=16" --steps 20 --eval-windows 2 --out "$TMP/fixed" \
    --json >"$TMP/fix.json" 2>"$TMP/fix.err" || fail "halflife --fix failed: $(cat "$TMP/fix.err")"
$G eval "$TMP/fixed" --text "$DATA" --ctx 64 --json >/dev/null 2>&1 || fail "the fixed student folder does not load"
python3 - "$TMP/fix.json" "$L2" <<'PY' || fail "halflife --fix JSON check failed"
import json, math, sys
j = json.load(open(sys.argv[1])); L2 = int(sys.argv[2])
f = j["fix"]
assert f["changes"] == [{"layer": L2, "head": 0, "half_life": 16}] and f["stage2_steps"] == 20
assert f["eval_tokens"] > 0 and all(math.isfinite(f[k]) and f[k] > 1 for k in ("ppl_before", "ppl_after"))
before = {(h["layer"], h["head"]): h for h in f["before"]}
after = {(h["layer"], h["head"]): h for h in j["heads"]}
# 20 steps at lr 1e-3 move dt_bias little: the fixed head sits near 16 tokens, far from where it was
assert abs(math.log(after[(L2, 0)]["idle"] / 16)) < 0.2, after[(L2, 0)]["idle"]
assert abs(math.log(before[(L2, 0)]["idle"] / 16)) > 0.2, before[(L2, 0)]["idle"]
# the other GDN layers' parameters are not touched (their per-token values move: their input comes through layer L2)
for k, h in after.items():
    if k[0] != L2:
        assert h["idle"] == before[k]["idle"], k
PY

# median: the head's decay rate scaled so that its median meets the target; no Stage 2 (--steps 0):
# every per-token half-life of that head divides by one factor (float32 A_log: 1e-4)
$G halflife "$TMP/stu" --ctx 64 --seqs 2 --threads 1 --fix "$L2:3=median" --steps 0 --eval-windows 2 --out "$TMP/fixed0" \
    --json >"$TMP/fix0.json" 2>"$TMP/fix0.err" || fail "halflife --fix median failed: $(cat "$TMP/fix0.err")"
python3 - "$TMP/fix0.json" "$L2" <<'PY' || fail "halflife --fix median JSON check failed"
import json, sys
j = json.load(open(sys.argv[1])); L2 = int(sys.argv[2])
f = j["fix"]
b = {(h["layer"], h["head"]): h for h in f["before"]}[(L2, 3)]
a = {(h["layer"], h["head"]): h for h in j["heads"]}[(L2, 3)]
assert f["stage2_steps"] == 0 and abs(f["changes"][0]["rate_scale"] - b["p50"] / b["teacher_distance"]) < 1e-12
assert abs(a["p50"] - a["teacher_distance"]) <= 1e-4 * a["teacher_distance"], (a["p50"], a["teacher_distance"])
for k in ("p10", "p90"):
    assert abs(a[k] / b[k] - a["p50"] / b["p50"]) <= 1e-4 * a["p50"] / b["p50"], k
PY

# bad inputs
expect_error "not a student folder" "$G" halflife "$STORIES"
[ "$rc" -eq 2 ] || fail "a teacher instead of a student: exit $rc, want 2"
expect_error "--ctx must be in [2, " "$G" halflife "$TMP/stu" --ctx 1
[ "$rc" -eq 2 ] || fail "--ctx 1: exit $rc, want 2"
expect_error "No such file" "$G" halflife "$TMP/stu" --text "$TMP/missing.txt"
expect_error "were asked for" "$G" halflife "$TMP/stu" --text "$DATA" --ctx 64 --seqs 100000
head -c 1000 "$TMP/ck.bin" >"$TMP/cut.bin"
expect_error "truncated" "$G" halflife "$TMP/stu" --ctx 64 --seqs 1 --ckpt "$TMP/cut.bin"
expect_error "--fix needs --out" "$G" halflife "$TMP/stu" --fix 2:0=16
expect_error "expected LAYER:HEAD" "$G" halflife "$TMP/stu" --ctx 64 --seqs 1 --fix 2:99=16 --out "$TMP/nope"
expect_error "not a GDN head" "$G" halflife "$TMP/stu" --ctx 64 --seqs 1 --fix 0:0=16 --out "$TMP/nope"
[ -e "$TMP/nope" ] && fail "a refused --fix wrote its folder"
printf '{"teacher_attention_stats": [' >"$TMP/bad.json"
expect_error "bad.json" "$G" halflife "$TMP/stu" --ctx 64 --seqs 1 --stats "$TMP/bad.json"
exit 0
