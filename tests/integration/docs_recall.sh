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
# the lr 3e-4 race at 1.5B: the answers file must be the JSON's recall_cells, and the log's recall lines the JSON's
H=docs/runs/qwen2.5-coder-1.5b-h200
A=$H/race_lr3e-4_5000000.answers.jsonl
T=docs/runs/recall/qwen2.5-coder-1.5b/teacher.json
python3 scripts/recall-race-cells.py "$TMP/c.png" $H/race_lr3e-4_5000000.json $A $T >/dev/null 2>"$TMP/err" || fail "recall-race-cells.py: $(cat "$TMP/err")"
# one score changed (the first right answer made wrong) fails
awk 'BEGIN{d=0} !d && /"score": 1}$/ {sub(/"score": 1}$/, "\"score\": 0}"); d=1} {print}' $A >"$TMP/a.jsonl"
cmp -s $A "$TMP/a.jsonl" && fail "the answers negative check changed nothing"
python3 scripts/recall-race-cells.py "$TMP/c.png" $H/race_lr3e-4_5000000.json "$TMP/a.jsonl" $T >/dev/null 2>"$TMP/err" && fail "an answers file disagreeing with recall_cells passed"
grep -q "recall_cells has n 2 correct" "$TMP/err" || fail "answers check message: $(cat "$TMP/err")"
python3 scripts/recall-race-answers.py $H/race_lr3e-4_5000000.json "$TMP/a.jsonl" $T >/dev/null 2>"$TMP/err" && fail "recall-race-answers.py took an answers file disagreeing with recall_cells"
# one answer line missing fails
sed '$d' $A >"$TMP/a.jsonl"
python3 scripts/recall-race-cells.py "$TMP/c.png" $H/race_lr3e-4_5000000.json "$TMP/a.jsonl" $T >/dev/null 2>"$TMP/err" && fail "an answers file missing a line passed"
grep -q "1 answers scoring" "$TMP/err" || fail "missing-line message: $(cat "$TMP/err")"
sed 's/^recall at step 610 (4997120 tokens): 60.8 %$/recall at step 610 (4997120 tokens): 61.1 %/' $H/race_lr3e-4_5000000.log >"$TMP/race.log"
cmp -s $H/race_lr3e-4_5000000.log "$TMP/race.log" && fail "the lr 3e-4 log negative check changed nothing"
python3 scripts/recall-race.py $H/race_lr3e-4_5000000.json "$TMP/race.log" >/dev/null 2>"$TMP/err" && fail "a lr 3e-4 log disagreeing with its JSON passed"
grep -q "are not the JSON's recall_curve" "$TMP/err" || fail "lr 3e-4 race check message: $(cat "$TMP/err")"
# the prose of the lr 3e-4 section says what its files say
python3 - $D <<'PY' || fail "$D's lr 3e-4 section quotes other numbers than its runs"
import json, math, re, sys
doc = open(sys.argv[1]).read()
H = "docs/runs/qwen2.5-coder-1.5b-h200"
sec = doc[doc.index("### At 1.5B with lr-mixer 3e-4"):doc.index("### Not measured")]
def para(start):
    return re.sub(r"\s+", " ", sec[sec.index(start):].split("\n- ")[0].split("\n\n")[0])
def g(x):
    return "%g" % round(x, 2)
j = json.load(open(f"{H}/race_lr3e-4_5000000.json"))
old = json.load(open(f"{H}/race_lr1e-3_5000000.json"))
rows = [json.loads(l) for l in open(f"{H}/race_lr3e-4_5000000.answers.jsonl")]
T = {(s["task"], s["length"], s["depth"], s["index"]): s for s in map(json.loads, open("docs/runs/recall/qwen2.5-coder-1.5b/teacher.samples.jsonl"))}
runs = [r["init"] for r in j["runs"]]
end, first = j["runs"][0]["recall_curve"][-1][0], j["runs"][0]["recall_curve"][0][0]
def sc(run, t, **kw):
    return sum(a["score"] for a in rows if a["run"] == run and a["tokens"] == t and all(
        (a[k] in v) if isinstance(v, tuple) else a[k] == v for k, v in kw.items()))
assert len(rows) == 864 and all(len(r["recall_curve"]) == 3 for r in j["runs"])
p = para("- **Recall comes back at lr-mixer 3e-4**")
fin = [sc(r, end) for r in runs]
assert f"score {g(min(fin))} to {g(max(fin))} of the 72 prompts ({100 * min(fin) / 72:.1f} to {100 * max(fin) / 72:.1f} %)" in p, p
like = dict(task=("niah-number", "multikey"), length=(1024, 4096, 16384))
e, f = [sc(r, end, **like) for r in runs], [sc(r, first, **like) for r in runs]
assert f"answer {g(min(e))} to {g(max(e))} of 36 at the end and {g(min(f))} to {g(max(f))} already at 2M" in p, p
assert all(a == 0 for r in old["runs"] for _, a in r["recall_curve"]) and old["lr_mixer"] == 1e-3 and j["lr_mixer"] == 3e-4
ppl = sorted(r["final_eval_ppl"] for r in j["runs"])
rt = lambda x: [r["final_eval_ppl"] / x["teacher_eval_ppl"] for r in x["runs"]]
assert f"{ppl[0]:.2f} to {ppl[-1]:.2f} at the end, {min(rt(j)):.2f} to {max(rt(j)):.2f} times the teacher's {j['teacher_eval_ppl']:.2f}" in p, p
assert f"against {min(rt(old)):.1f} to {max(rt(old)):.1f} times at 1e-3" in p, p
p = para("- **Length**")
L32, L1 = [sc(r, end, length=32000) for r in runs], [sc(r, end, length=1024) for r in runs]
assert f"score {g(min(L32))} to {g(max(L32))} of the 18 prompts at 32000 tokens against {g(min(L1))} to {g(max(L1))} at 1024" in p, p
assert f"random answers {g(sc('random', end, task='niah-number', length=32000))} of its 6 at 32000" in p, p
p = para("- **Task**")
def lead(pred, ans):
    m = re.search(r"\d+", pred); n = m.group(0) if m else ""; k = 0
    while k < min(len(n), len(ans)) and n[k] == ans[k]: k += 1
    return k
nn = [sc(r, end, task="niah-number") for r in runs]
assert f"({g(min(nn))} to {g(max(nn))} of 24 after the race)" in p, p
wrong = [a for a in rows if a["tokens"] == end and a["task"] == "niah-number" and a["score"] < 1]
assert all(lead(a["pred"], a["answers"][0]) >= 1 for a in wrong)
means = [sum(lead(a["pred"], a["answers"][0]) for a in wrong if a["run"] == r) / sum(a["run"] == r for a in wrong) for r in runs]
assert f"with {min(means):.1f} to {max(means):.1f} of its 7 leading digits" in p, p
odd = sum(len(re.search(r"\d+", a["pred"]).group(0)) != 7 for a in wrong)
assert f"and {odd} of the {len(wrong)} wrong ones with a digit dropped or repeated" in p, p
assert any(a["pred"].strip() == "58114." and a["answers"] == ["5811419"] for a in wrong)
mk = [sc(r, end, task="multikey") for r in runs]
assert f"half lost ({g(min(mk))} to {g(max(mk))} of 24)" in p, p
mw = [sum(1 for a in rows if a["run"] == r and a["tokens"] == end and a["task"] == "multikey" and a["score"] < 1
          and lead(a["pred"], a["answers"][0]) == 0) for r in runs]
assert f"{min(mw)} to {max(mw)} of each student's answers start with another digit" in p, p
sh = [a for a in rows if a["tokens"] == end and a["task"] == "multikey" and (a["task"], a["length"], a["depth"], a["index"]) in T]
shw = [a for a in sh if a["score"] < 1]
oth = [a for a in shw if re.search(r"\d+", a["pred"]) and re.search(r"\d+", a["pred"]).group(0) in
       [v for v in T[a["task"], a["length"], a["depth"], a["index"]]["needle_values"] if v != a["answers"][0]]]
assert f"{len(oth)} of the {len(shw)} wrong answers are another key's value exactly" in p, p
vt = {r: [a for a in rows if a["run"] == r and a["tokens"] == end and a["task"] == "vt"] for r in runs}
named = {r: sum(a["score"] > 0 for a in v) for r, v in vt.items()}
g8 = runs[1]
assert f"in {named[g8]} of its 24 prompts (a score of {g(sum(a['score'] for a in vt[g8]))})" in p, p
others = [named[r] for r in runs if r != g8]
assert max(others) < named[g8] and f"the others in {min(others)} to {max(others)}," in p, p
p = para("- **Depth** matters less")
d90, d10 = [sc(r, end, depth=90) for r in runs], [sc(r, end, depth=10) for r in runs]
assert all(sc(r, end, depth=90) >= max(sc(r, end, depth=d) for d in (10, 50)) for r in runs)
assert ", ".join(map(g, d90[:3])) + f" and {g(d90[3])} of 24 against " + ", ".join(map(g, d10[:3])) + f" and {g(d10[3])}" in p, p
dd = [a - b for a, b in zip(d90, d10)]
assert f"a difference of {g(min(dd))} to {g(max(dd))} prompts" in p, p
p = para("- **Against the teacher**")
keys = [k for k in T if any((a["task"], a["length"], a["depth"], a["index"]) == k for a in rows)]
assert len(keys) == 18 and all(T[k]["score"] == 1 for k in keys), keys
st = [sum(a["score"] for a in rows if a["run"] == r and a["tokens"] == end and (a["task"], a["length"], a["depth"], a["index"]) in keys) for r in runs]
assert f"the teacher answered 18; the students {g(min(st))} to {g(max(st))} after the race" in p, p
tj = json.load(open("docs/runs/recall/qwen2.5-coder-1.5b/teacher.json"))
t32 = {t: sum(c["correct"] for c in tj["cells"] if c["task"] == t and c["length"] == 32768) for t in ("niah-number", "multikey", "vt")}
assert f"answered {g(t32['niah-number'])} of 6 niah-number, {g(t32['multikey'])} of 6 multikey and {g(t32['vt'])} of 6" in p, p
p = para("- **Which init keeps more.**")
def wilson(s, n, z=1.96):
    q = s / n; m = (q + z * z / (2 * n)) / (1 + z * z / n); h = z * math.sqrt(q * (1 - q) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return m - h, m + h
lo, hi = wilson(sc("random", end), 72)
assert sc("random", end) == 36 and f"(random after the race: {100 * lo:.0f} to {100 * hi:.0f} %)" in p, p
def pair(r, t):
    m = {(a["task"], a["length"], a["depth"], a["index"]): a["score"] for a in rows if a["run"] == r and a["tokens"] == t}
    b = {(a["task"], a["length"], a["depth"], a["index"]): a["score"] for a in rows if a["run"] == "random" and a["tokens"] == t}
    up, down = sum(m[k] > b[k] + 1e-6 for k in m), sum(m[k] < b[k] - 1e-6 for k in m)
    n = up + down
    return up, down, min(1.0, 2 * sum(math.comb(n, i) for i in range(min(up, down) + 1)) / 2 ** n)
pts = [t for t, _ in j["runs"][0]["recall_curve"]]
for r in runs[1:]:
    pr = [pair(r, t) for t in pts]
    if r == runs[1]:
        assert all(u > d and q < 0.05 for u, d, q in pr)
        assert f"({pr[0][0]} / {pr[0][1]}, {pr[1][0]} / {pr[1][1]} and {pr[2][0]} / {pr[2][1]} prompts; p {pr[0][2]:.2g}, {pr[1][2]:.2g}, {pr[2][2]:.2g})" in p, (pr, p)
    elif r == runs[2]:
        assert pr[0][0] > pr[0][1] and pr[1][0] > pr[1][1] and pr[2][0] < pr[2][1] and pr[2][2] > 0.05
        assert f"({pr[0][0]} / {pr[0][1]}, {pr[1][0]} / {pr[1][1]})" in p and f"({pr[2][0]} / {pr[2][1]}, p {pr[2][2]:.2g})" in p, (pr, p)
    else:
        assert all(u < d for u, d, _ in pr)
        assert f"({pr[0][0]} / {pr[0][1]}, {pr[1][0]} / {pr[1][1]}, {pr[2][0]} / {pr[2][1]}; p {pr[0][2]:.2g}, {pr[1][2]:.2g}, {pr[2][2]:.2g})" in p, (pr, p)
tie = [sc(r, end, **like) for r in runs[:2]]
assert tie[0] == tie[1] and f"it ties random after the race, {g(tie[0])} and {g(tie[1])}" in p, p
nm = re.sub(r"\s+", " ", doc[doc.index("- A race as long as the paper's"):].split("\n- ")[0].split("\n\n")[0])
acc = [r["recall_curve"][-1][1] for r in j["runs"]]
assert f"{min(rt(j)):.2f} to {max(rt(j)):.2f} times the teacher's perplexity and {100 * min(acc):.0f} to {100 * max(acc):.0f} % recall" in nm, nm
rising = sum(all(b[1] > a[1] for a, b in zip(r["recall_curve"], r["recall_curve"][1:])) for r in j["runs"])
assert f"still rising for {['no', 'one', 'two', 'three', 'four'][rising]} of the four" in nm, nm
PY
exit 0
