#!/bin/sh
# docs/recall.md's tables and heat maps are printed from the committed runs
# (docs/runs/recall/), never typed: every `printed by: python3 scripts/recall-*.py`
# block must equal what its command prints now and its PNG hold the same
# pixels (scripts/recall-docs.py); a typed digit or another PNG must fail the
# check; the numbers the prose quotes are the runs' own; and
# scripts/recall-samples.py reduces a dump as docs/runs/recall/ keeps it;
# scripts/recall-race.py refuses a race log whose recall lines or probe settings
# do not match its JSON.
# (run alone: defaults as tests/run.sh sets them)
: "${GRAFT_ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}" "${GRAFT_BIN:=$GRAFT_ROOT/build/graft}"
export GRAFT_ROOT GRAFT_BIN
. "$(dirname "$0")/../lib.sh"
cd "$GRAFT_ROOT" || fail "no $GRAFT_ROOT"
D=docs/recall.md
python3 scripts/recall-docs.py $D 2>"$TMP/err" || fail "$(cat "$TMP/err")"
# a model's output in a table cell keeps to its line (a CR or tab would break the Markdown table)
! grep -q "$(printf '[\r\t]')" $D || fail "$D holds a CR or tab (an output not escaped by scripts/recall-answers.py)"
# a typed digit in a table (the 1.5B teacher's 32k row) fails
sed 's/^| 32768 | 97 | 83 | 100 |$/| 32768 | 97 | 84 | 100 |/' $D >"$TMP/typed.md"
cmp -s $D "$TMP/typed.md" && fail "the negative check changed nothing in $D"
python3 scripts/recall-docs.py "$TMP/typed.md" 2>"$TMP/err" && fail "a typed number in $D passed the check"
grep -q "differs from what it prints now" "$TMP/err" || fail "check message: $(cat "$TMP/err")"
# a heat map that is not what the runs draw fails (the 1.5B block pointed at the SmolLM2 picture)
sed 's|recall-heatmap.py docs/img/recall-qwen2.5-coder-1.5b.png|recall-heatmap.py docs/img/recall-smollm2-135m-h200.png|' $D >"$TMP/png.md"
cmp -s $D "$TMP/png.md" && fail "the PNG negative check changed nothing in $D"
python3 scripts/recall-docs.py "$TMP/png.md" 2>"$TMP/err" && fail "another PNG passed the check"
grep -q "recall-smollm2-135m-h200.png differs from what" "$TMP/err" || fail "PNG check message: $(cat "$TMP/err")"
# a race's recall curve: the log's recall lines must be the JSON's, and a point a whole number of the probe's prompts
R=docs/runs/recall/smollm2-135m-race
sed 's/^recall at step 108 (884736 tokens): 25.0 %$/recall at step 108 (884736 tokens): 29.2 %/' $R/race.log >"$TMP/race.log"
cmp -s $R/race.log "$TMP/race.log" && fail "the race log negative check changed nothing"
python3 scripts/recall-race.py $R/race.json "$TMP/race.log" >/dev/null 2>"$TMP/err" && fail "a log disagreeing with the race JSON passed"
grep -q "are not the JSON's recall_curve" "$TMP/err" || fail "race check message: $(cat "$TMP/err")"
sed 's/--recall-lengths 1024,2048/--recall-lengths 1024,2048,4096/' $R/race.log >"$TMP/race.log"
python3 scripts/recall-race.py $R/race.json "$TMP/race.log" >/dev/null 2>"$TMP/err" && fail "36 prompts a point passed for a 24-prompt probe"
grep -q "is not a score of 36 prompts" "$TMP/err" || fail "race prompts check message: $(cat "$TMP/err")"
# the reduction: ids and text dropped, needle values read from the text, bytes that are not UTF-8 made U+FFFD
printf '%s\n' '{"task":"multikey","length":1024,"depth":0,"index":0,"max_new":32,"ids":[1,2],"text":"One of the special magic numbers for calm-lantern is: 5097175. One of the special magic numbers for eager-otter is: 1234567.","answers":["5097175"],"pred":" 50" ,"score":0}' >"$TMP/dump.jsonl"
printf '{"task":"vt","length":1024,"depth":0,"index":0,"max_new":48,"ids":[3],"text":"VAR A = 1","answers":["A"],"pred":"x\276y","score":0}\n{"task":"vt","len' >>"$TMP/dump.jsonl"
python3 scripts/recall-samples.py "$TMP/dump.jsonl" >"$TMP/samples.jsonl" || fail "recall-samples.py failed"
python3 - "$TMP/samples.jsonl" <<'PY' || fail "recall-samples.py: $(cat "$TMP/samples.jsonl")"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert len(rows) == 2, rows  # the half-written line is left out
assert "ids" not in rows[0] and "text" not in rows[0], rows[0]
assert rows[0]["needle_values"] == ["5097175", "1234567"], rows[0]
assert "needle_values" not in rows[1] and rows[1]["pred"] == "x\ufffdy", rows[1]
PY
# the prose says what the runs say
python3 - $D <<'PY' || fail "$D quotes other numbers than docs/runs/recall/"
import json, re, sys
doc = open(sys.argv[1]).read()
Q, S = "docs/runs/recall/qwen2.5-coder-1.5b", "docs/runs/recall/smollm2-135m-h200"
def load(d, n):
    return json.load(open(f"{d}/{n}.json")), [json.loads(l) for l in open(f"{d}/{n}.samples.jsonl")]
def para(start):
    return re.sub(r"\s+", " ", doc[doc.index(start):].split("\n- ")[0].split("\n\n")[0])
def first_digit(r):
    m = re.search(r"\d+", r["pred"])
    return bool(m) and m.group(0)[0] == r["answers"][0][0]
runs = {n: load(Q, n) for n in ("teacher", "random", "align-only", "taylor-calibrate")}
# random and align-only never stop: their generated tokens are their prompts' answer budgets
p = para("- The random and align-only students answer nothing right")
for n in ("random", "align-only"):
    j, rows = runs[n]
    assert sum(r["score"] for r in rows) == 0 and j["throughput"]["generated_tokens"] == sum(r["max_new"] for r in rows)
    assert f"generated {j['throughput']['generated_tokens']} tokens" in p, p
for n in ("taylor-calibrate", "teacher"):
    assert f"{n} generated {runs[n][0]['throughput']['generated_tokens']}" in p or \
        f"the {n} {runs[n][0]['throughput']['generated_tokens']}" in p, (n, p)
niah = {n: [r for r in rows if r["task"] == "niah-number"] for n, (_, rows) in runs.items()}
p = para("- random's outputs are not text")
assert f"in {sum(map(first_digit, niah['random']))} of {len(niah['random'])} niah-number" in p, p
p = para("- align-only (Stage 2 without Stage 1)")
assert f"in {sum(map(first_digit, niah['align-only']))} of 36 samples" in p, p
assert f"against taylor-calibrate's {sum(map(first_digit, niah['taylor-calibrate']))}," in p, p
num = {n: [r for r in rows if r["task"] in ("niah-number", "multikey")] for n, (_, rows) in runs.items()}
for n, d, k in (("align-only", 0, 0), ("align-only", 100, 1), ("taylor-calibrate", 100, 2)):
    rs = [r for r in num[n] if r["depth"] == d]
    want = f"{sum(map(first_digit, rs))} of {len(rs)}"
    assert re.findall(r"\d+ of 24", p)[k] == want, (n, d, want, p)
# throughput: prefill k tok/s, decode tok/s, run seconds in the order teacher, random, align-only, taylor-calibrate
p = para("From the same JSON (`throughput`")
order = ("teacher", "random", "align-only", "taylor-calibrate")
t = [runs[n][0]["throughput"] for n in order]
want = [f"{x['prefill_tokens'] / x['prefill_seconds'] / 1e3:.0f}k" for x in t]
got = re.findall(r"(\d+)k(?: tokens/s|,| and)", p)
assert [g + "k" for g in got] == want, (got, want)
assert re.search(r"decoded at " + ", ".join(f"{x['generated_tokens'] / x['decode_seconds']:.0f}" for x in t[:3])
                 + f" and {t[3]['generated_tokens'] / t[3]['decode_seconds']:.0f}", p), p
assert ", ".join(f"{runs[n][0]['seconds']:.1f}" for n in order[:3]) + f" and {runs['taylor-calibrate'][0]['seconds']:.1f} s" in p, p
# the reference: equal outputs, the ratios per length, transformers' first cells
h = json.load(open(f"{Q}/hf-niah-number.json"))
p = para("- Both answered all 36 niah-number prompts right")
assert sum(c["same_as_graft"] for c in h["cells"]) == sum(c["n"] for c in h["cells"]) == 36 and \
    sum(c["correct"] for c in h["cells"]) == 36 and all(c["graft_accuracy"] == 1 for c in h["cells"]), p
L = sorted({c["length"] for c in h["cells"]})
ratio = {l: sum(c["seconds"] for c in h["cells"] if c["length"] == l) /
            sum(c["graft_seconds"] for c in h["cells"] if c["length"] == l) for l in L}
p = para("- graft took less time at every length")
want = f"{min(ratio[l] for l in L[:3]):.1f} to {max(ratio[l] for l in L[:3]):.1f} times less at 1k-4k, " \
       f"{ratio[8192]:.1f} at 8k, {ratio[16384]:.1f} at 16k, {ratio[32768]:.1f} at 32k"
all_r = sum(c["seconds"] for c in h["cells"]) / sum(c["graft_seconds"] for c in h["cells"])
assert want in p and f"({all_r:.1f} over all)" in p, (want, p)
firsts = [min((c for c in h["cells"] if c["length"] == l), key=lambda c: c["depth"]) for l in L]
assert all(f["seconds"] == max(c["seconds"] for c in h["cells"] if c["length"] == f["length"]) for f in firsts)
assert f"{min(f['seconds'] for f in firsts):.2f} to {max(f['seconds'] for f in firsts):.2f} s" in p, p
# SmolLM2 on the H200: vt's filler answers, and the six prompts shared with the CPU run answered alike
j, rows = load(S, "teacher")
vt = [r for r in rows if r["task"] == "vt"]
filler = sum(r["pred"].lstrip().startswith("The grass is") for r in vt)
assert f"in {filler} of its {len(vt)} vt samples" in doc and f"the other {len(vt) - filler} write" in doc
gpu = {(r["task"], r["length"], r["depth"], r["index"]): r["pred"] for r in rows}
cpu = [json.loads(l) for l in open("docs/runs/recall/smollm2-135m/teacher.samples.jsonl")]
assert len(cpu) == 6 and all(gpu[r["task"], r["length"], r["depth"], r["index"]] == r["pred"] for r in cpu)
# the races: the prose's counts and ratios are the race JSONs'
def race(name):
    return json.load(open(f"docs/runs/recall/{name}/race.json"))
qr, sr = race("qwen2.5-coder-1.5b-race"), race("smollm2-135m-race")
p = para("- **No student answered any of the 36 prompts right at any point**")
assert all(a == 0 for r in qr["runs"] for _, a in r["recall_curve"])
pts = len(qr["runs"][0]["recall_curve"])
assert f"0 of {36 * pts} answers each, {36 * pts * len(qr['runs'])} in all" in p, p
assert sum(r["score"] for r in runs["random"][1]) == 0 and sum(r["score"] for r in runs["taylor-calibrate"][1]) == 0
assert f"(0 of {len(runs['random'][1])} each" in p, p
p = para("- The teacher answers these tasks at these lengths")
qt = [c for c in runs["teacher"][0]["cells"] if c["task"] in ("niah-number", "multikey") and c["length"] in (1024, 4096, 16384)]
assert f"{sum(c['correct'] for c in qt):g} of {sum(c['n'] for c in qt)} right" in p, p
d50 = [c for c in qt if c["depth"] == 50]
assert f"answered all {sum(c['n'] for c in d50)} of those" in p and sum(c["correct"] for c in d50) == sum(c["n"] for c in d50), p
ratio = lambda j: [r["final_eval_ppl"] / j["teacher_eval_ppl"] for r in j["runs"]]
p = para("- The students' held-out perplexity at the end was")
fin = sorted(r["final_eval_ppl"] for r in qr["runs"])
assert f"{fin[0]:.2f} (gated fit) to {fin[-1]:.2f} (taylor-calibrate) against the teacher's {qr['teacher_eval_ppl']:.2f}" in p, p
assert f"{min(ratio(qr)):.1f} to {max(ratio(qr)):.1f} times the teacher's" in p, p
drop = [r["eval_curve"][-2][1] - r["eval_curve"][-1][1] for r in qr["runs"]]
assert min(drop) > 0 and f"by {min(drop):.1f} to {max(drop):.1f} between the last two" in p, p
right = {r["init"]: [round(a * 24) for _, a in r["recall_curve"]] for r in sr["runs"]}
p = para("- Here recall comes back")
allp = [x for v in right.values() for x in v]
assert f"answers {min(allp)} to {max(allp)} of the 24 prompts" in p, p
st = [c for c in j["cells"] if c["task"] in ("niah-number", "multikey") and c["length"] in (1024, 2048)]
assert f"answers {sum(c['correct'] for c in st):g} of the {sum(c['n'] for c in st)} prompts" in p, p
s50 = [c for c in st if c["depth"] == 50]
assert f"and {sum(c['correct'] for c in s50):g} of the {sum(c['n'] for c in s50)} at depth 50" in p, p
p = para("- The students' held-out perplexities ended at")
fin = sorted(r["final_eval_ppl"] for r in sr["runs"])
assert f"ended at {fin[0]:.2f} to {fin[-1]:.2f}, {min(ratio(sr)):.2f} to {max(ratio(sr)):.2f} times the teacher's {sr['teacher_eval_ppl']:.2f}" in p, p
assert f"ended at {min(ratio(qr)):.1f} to {max(ratio(qr)):.1f}" in p, p
p = para("- The three taylor-calibrate students lead random")
tc = [v for k, v in right.items() if k != "random"]
for i, w in ((0, "first point"), (1, "second")):
    assert f"at the {w} ({min(v[i] for v in tc)} to {max(v[i] for v in tc)}" in p and \
        f"against {right['random'][i]})" in p, (w, p)
assert f"by the end ({right['random'][-1]}, against {min(v[-1] for v in tc)} to {max(v[-1] for v in tc)})" in p, p
# the 135M reference: equal outputs, the same-run ratios, graft's second teacher run scored as its first
h = json.load(open(f"{S}/hf-niah-number.json"))
p = para("- Both answered all 18 niah-number prompts right")
assert sum(c["same_as_graft"] for c in h["cells"]) == sum(c["n"] for c in h["cells"]) == sum(c["correct"] for c in h["cells"]) == 18
j2 = json.load(open(f"{S}/teacher-second.json"))
assert [(c["task"], c["length"], c["depth"], c["correct"]) for c in j2["cells"]] == \
    [(c["task"], c["length"], c["depth"], c["correct"]) for c in j["cells"]]
p = para("- **The times are a same-run ratio at best**")
L = sorted({c["length"] for c in h["cells"]})
rs = [sum(c["seconds"] for c in h["cells"] if c["length"] == l) / sum(c["graft_seconds"] for c in h["cells"] if c["length"] == l) for l in L]
hs, gs = sum(c["seconds"] for c in h["cells"]), sum(c["graft_seconds"] for c in h["cells"])
assert f"{min(rs):.1f} to {max(rs):.1f} times less" in p and f"({hs / gs:.1f} over the 18 prompts)" in p, p
q = [c for c in json.load(open(f"{Q}/hf-niah-number.json"))["cells"] if c["length"] in L]
assert f"({hs:.2f} s against {sum(c['seconds'] for c in q):.2f} s" in p, p
assert f"graft about half ({gs:.2f} s against {sum(c['graft_seconds'] for c in q):.2f} s)" in p, p
t1, t2 = j["throughput"], j2["throughput"]
assert f"took {j2['seconds']:.1f} s against {j['seconds']:.1f} s" in p, p
assert f"(prefill {t2['prefill_seconds']:.2f} against {t1['prefill_seconds']:.2f} s, decode " \
       f"{t2['decode_seconds']:.2f} against {t1['decode_seconds']:.2f} s)" in p, p
PY
exit 0
