#!/bin/sh
# The tables of measured runs in docs/ are printed from the runs' --json
# outputs (docs/runs/), never typed: every `<!-- report: ... -->` block and its
# SVG must equal what tests/gpu/runs/report.py makes of the JSON now; and the
# check must catch a typed number (one digit of a table changed in a copy).
# (run alone: defaults as tests/run.sh sets them)
: "${GRAFT_ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}" "${GRAFT_BIN:=$GRAFT_ROOT/build/graft}"
export GRAFT_ROOT GRAFT_BIN
. "$(dirname "$0")/../lib.sh"
cd "$GRAFT_ROOT" || fail "no $GRAFT_ROOT"
docs=$(grep -l '<!-- report: ' docs/*.md)
[ -n "$docs" ] || fail "no report blocks in docs/*.md"
python3 tests/gpu/runs/report.py docs $docs 2>"$TMP/err" || fail "$(cat "$TMP/err")"
# a copy with one table cell changed (the teacher's perplexity line's first digit) must fail the check
first=$(echo "$docs" | head -n 1)
sed '0,/^teacher perplexity 3/s//teacher perplexity 4/' "$first" >"$TMP/typed.md"
cmp -s "$first" "$TMP/typed.md" && fail "the negative check changed nothing in $first"
python3 tests/gpu/runs/report.py docs "$TMP/typed.md" 2>"$TMP/err2" && fail "a typed number in a report block passed the check"
grep -q "differs from what it prints now" "$TMP/err2" || fail "check message: $(cat "$TMP/err2")"
# the paper report's tables (docs/paper-1.5b.md; tests/gpu/runs/report.py teacher / paper-ablate /
# components / verdict) on the SmolLM2 JSON: --write fills a block, the check passes, a typed number fails
R=docs/runs/smollm2-135m-h200
cat >"$TMP/paper.md" <<DOC
<!-- report: paper-ablate $R/ablate_train.json -->
<!-- /report -->
<!-- report: components $R/ablate_stage1.json -->
<!-- /report -->
<!-- report: verdict $R/ablate_train.json $R/race_lr3e-4_3M.json -->
<!-- /report -->
DOC
python3 tests/gpu/runs/report.py docs "$TMP/paper.md" --write 2>"$TMP/err3" || fail "paper blocks --write: $(cat "$TMP/err3")"
python3 tests/gpu/runs/report.py docs "$TMP/paper.md" 2>"$TMP/err3" || fail "paper blocks check: $(cat "$TMP/err3")"
python3 - "$TMP/paper.md" "$R" <<'PY' || fail "paper tables do not say what the JSON says"
import json, sys
doc, r = open(sys.argv[1]).read(), sys.argv[2]
a = json.load(open(f"{r}/ablate_train.json"))
tc = [x for x in a["rows"] if x["init"] == "taylor-calibrate" and x["keep"] == 0.5][0]
rnd = [x for x in a["rows"] if x["init"] == "random" and x["keep"] == 0.5][0]
# the six-init table: taylor-calibrate (fitted scaled before the choice existed) at 50 %
line = [l for l in doc.splitlines() if l.startswith("| taylor-calibrate | scaled |")][0]
assert f"{tc['ppl']:.2f}" in line, line
# the verdict of the 50 % claim follows its criterion
v = [l for l in doc.splitlines() if "uniform 50 % zero-shot ppl" in l][0]
assert v.endswith("| holds |") == (tc["ppl"] < rnd["ppl"]), v
s = json.load(open(f"{r}/ablate_stage1.json"))
none = [x for x in s["rows"] if x["init"] == "taylor-calibrate" and x["stage1"] == [] and x["keep"] == 0.25][0]
assert [l for l in doc.splitlines() if l.startswith("| none (= align-only) |")][0].split(" | ")[1] == f"{none['ppl']:.2f}"
PY
sed 's/| taylor-calibrate | scaled | \([0-9]\)/| taylor-calibrate | scaled | 9\1/' "$TMP/paper.md" >"$TMP/paper2.md"
cmp -s "$TMP/paper.md" "$TMP/paper2.md" && fail "the negative paper check changed nothing"
python3 tests/gpu/runs/report.py docs "$TMP/paper2.md" 2>/dev/null && fail "a typed number in a paper block passed the check"
# docs/paper-1.5b.md (the 1.5B runs of issue 29): filled, every block a command report.py knows, its pictures
# present, and the numbers its summary and README's line quote are the JSON's
P=docs/paper-1.5b.md Q=docs/runs/qwen2.5-coder-1.5b-h200
grep -q 'pending report:' $P && fail "$P: a table is still pending"
grep -o '<!-- report: [a-z-]*' $P | awk '{print $3}' | while read -r c; do
    case $c in ablate|race|teacher|paper-ablate|components|verdict|stats) ;; *) fail "$P: unknown report command $c" ;; esac
done || exit 1
for c in teacher stats paper-ablate components race verdict; do
    grep -q "<!-- report: $c " $P || fail "$P: no $c table"
done
for img in $(grep -o 'img/[a-z0-9.-]*\.png' $P | sort -u); do
    [ -s "docs/$img" ] || fail "$P: docs/$img missing"
done
python3 - $P $Q README.md <<'PY' || fail "$P or README.md says other numbers than $Q's JSON"
import json, re, sys
doc, q, readme = open(sys.argv[1]).read(), sys.argv[2], open(sys.argv[3]).read()
lines = doc.splitlines()
a = json.load(open(f"{q}/ablate_train.json"))
def ppl(rows, init, keep, fit, stage1=None, strategy="uniform"):
    v = [r["ppl"] for r in rows if r["init"] == init and r["keep"] == keep and r["strategy"] == strategy
         and (stage1 is None or r["stage1"] == stage1) and (r.get("sigma_fit") or "-") in (fit, "-")]
    assert len(v) >= 1, (init, keep, fit, stage1)
    return f"{v[0]:.2f}"
tc = {(k, f): ppl(a["rows"], "taylor-calibrate", k, f) for k in (0.25, 0.5) for f in ("reference", "scaled")}
al = {k: ppl(a["rows"], "align-only", k, "-") for k in (0.25, 0.5)}
# the six-init table's taylor-calibrate rows (uniform 25 %, 50 % are its first two columns)
for f in ("reference", "scaled"):
    row = [l for l in lines if l.startswith(f"| taylor-calibrate | {f} |")][0].split(" | ")
    assert row[2:4] == [tc[(0.25, f)], tc[(0.5, f)]], row
# the Stage 1 table: full, without sigma, gate alone, without decay (columns 25 % ref, scaled, gated, 50 % the same)
rows = [r for f in ("", "_scaled", "_gated") for r in json.load(open(f"{q}/stage1_components{f}.json"))["rows"]]
full = ["decay", "beta", "sigma", "gate"]
for name, st in (("full", full), ("without sigma", ["decay", "beta", "gate"]), ("gate alone", ["gate"]),
                 ("without decay", ["beta", "sigma", "gate"])):
    row = [l for l in lines if l.startswith(f"| {name} |")][0].strip("| ").split(" | ")
    want = [ppl(rows, "taylor-calibrate", k, f, st) for k in (0.25, 0.5) for f in ("reference", "scaled", "gated")]
    assert row[1:] == want, (name, row, want)
comp_v = [l for l in lines if "all four Stage 1 parts belong" in l][0]
beaten = any(float(ppl(rows, "taylor-calibrate", k, "reference", s)) < float(ppl(rows, "taylor-calibrate", k, "reference", full))
             for k in (0.25, 0.5) for s in (["gate"], ["decay", "beta", "gate"]))
assert comp_v.endswith("| does not hold |") == beaten, comp_v
# the race: each run's ratio is the baseline's tokens-to-target over its own
r = json.load(open(f"{q}/race_lr3e-4_1000000.json"))
t = r["tokens_to_target"]
ratios = {x["init"]: t["random"] / t[x["init"]] for x in r["runs"][1:]}
for init, v in ratios.items():
    row = [l for l in lines if l.startswith(f"| 0.0003 | 7e-06 | {init} |")][0].split(" | ")
    assert row[8] == f"{v:.2f}", (init, row[8], v)
assert abs(ratios["taylor-calibrate"] - r["ratio"]) < 1e-12
# the summary at the top and README's line quote the same numbers
want = [tc[(0.25, "reference")], al[0.25], tc[(0.5, "reference")], al[0.5], tc[(0.25, "scaled")], tc[(0.5, "scaled")],
        ppl(rows, "taylor-calibrate", 0.25, "-", ["decay", "beta", "gate"]), ppl(rows, "taylor-calibrate", 0.5, "-", ["decay", "beta", "gate"]),
        ppl(rows, "taylor-calibrate", 0.25, "-", ["gate"]), ppl(rows, "taylor-calibrate", 0.5, "-", ["gate"]),
        f"{ratios['taylor-calibrate']:.2f}x", f"{ratios['taylor-calibrate[decay,beta,gate]']:.2f}x"]
summary = doc[doc.index("**In short.**"):].split("\n\n")[0]
got = re.findall(r"\d+\.\d\dx?", summary)
assert got[:len(want)] == want, (got, want)
# README's line goes on with the 5M race: the four students' and the teacher's held-out perplexities and
# the gated fit's tokens-to-target ratio by graft's rule (tests/gpu/runs/report.py recomputes it from the curves)
sys.path.insert(0, "tests/gpu/runs")
import report
r5 = json.load(open(f"{q}/race_lr1e-3_5000000.json"))
fin = {x["init"]: f"{x['final_eval_ppl']:.2f}" for x in r5["runs"]}
gated = "taylor-calibrate[decay,beta,sigma,gate,sigma gated]"
gated_run = [x for x in r5["runs"] if x["init"] == gated][0]
want += [fin[gated], fin["taylor-calibrate[gate]"], fin["random"], fin["taylor-calibrate"], f"{r5['teacher_eval_ppl']:.2f}",
         f"{report.run_ratio(r5, gated_run):.2f}x"]
# then the 5M race at lr 3e-4 (held-out perplexities; gate alone's, the gated fit's, taylor-calibrate's ratios) and
# the best Stage 1 variant of the three component runs at 25 % / 50 % against align-only and the paper's method
r3 = json.load(open(f"{q}/race_lr3e-4_5000000.json"))
by3 = {x["init"]: x for x in r3["runs"]}
want += [f"{by3[i]['final_eval_ppl']:.2f}" for i in (gated, "taylor-calibrate[gate]", "random", "taylor-calibrate")]
want += [f"{report.run_ratio(r3, by3[i]):.2f}x" for i in ("taylor-calibrate[gate]", gated, "taylor-calibrate")]
tcrows = [r for r in rows if r["init"] == "taylor-calibrate"]
best = {k: min((r for r in tcrows if r["keep"] == k), key=lambda r: r["ppl"]) for k in (0.25, 0.5)}
assert all(b["stage1"] == ["beta", "sigma", "gate"] and b["sigma_fit"] == "gated" for b in best.values()), best
want += [f"{best[k]['ppl']:.2f}" for k in (0.25, 0.5)] + [al[0.25], al[0.5], tc[(0.25, "reference")], tc[(0.5, "reference")]]
line = [l for l in readme.splitlines() if "docs/paper-1.5b.md" in l][0]
got = re.findall(r"\d+\.\d\dx?", line)
assert got == want, (got, want)
PY
# section 1's transformers reference: its rows are in the teacher table, and the prose quotes the JSON's differences
grep -q "<!-- report: teacher $Q/teacher_ppl.json $Q/teacher_ppl_hf.json -->" $P || fail "$P: the teacher table lacks the transformers rows"
grep -q "Not measured: transformers" $P && fail "$P: still says transformers was not measured"
python3 - $P $Q <<'PY' || fail "$P: the transformers paragraph says other numbers than $Q/teacher_ppl_hf.json"
import json, sys
doc, q = open(sys.argv[1]).read(), sys.argv[2]
rows = json.load(open(f"{q}/teacher_ppl.json"))["rows"]
hf = {r["text"]: r for r in json.load(open(f"{q}/teacher_ppl_hf.json"))["rows"]}
g = {(r["text"], r["path"]): r for r in rows}
rel = lambda t, p: f"{(hf[t]['ppl'] - g[t, p]['ppl']) / g[t, p]['ppl']:+.2e}"
para = doc[doc.index("**transformers agrees"):].split("\n\n")[0]
want = [rel("small", "graft cpu f32"), rel("small", "graft cuda f32"), rel("big", "graft cuda f32")]
got = [w.strip("(),") for w in para.split() if w.startswith("+") and "e-" in w]
assert got == want, (got, want)
for t in ("small", "big"):
    assert all(r["tokens"] == hf[t]["tokens"] for r in rows if r["text"] == t), t
    assert f"{hf[t]['tokens']:,}" in para, t
# docs/gguf.md's line on the GPU comparison: every f32 path within 2e-7 of transformers
gguf = " ".join(open("docs/gguf.md").read().split())
assert "to within 2e-7 relative, the token counts equal" in gguf
assert all(abs(float(rel(r["text"], r["path"]))) < 2e-7 for r in rows if r["path"].endswith("f32")), rows
PY
# docs/cuda.md's last `make test-gpu` run: its result lines are the committed summary's, and so is its time
python3 - docs/cuda.md docs/runs/perf-gpu-2026-12-07-s38/test-summary-head.txt <<'PY' || fail "docs/cuda.md's last test-gpu run differs from its summary"
import re, sys
doc, summ = open(sys.argv[1]).read(), open(sys.argv[2]).read().splitlines()
sec = doc[doc.index("### Last run"):doc.index("### Earlier runs")]
shown = [l[4:] for l in sec.splitlines() if l.startswith("    ")]
want = [l for l in summ if l.startswith(("PASS ", "FAIL ", "SKIP ")) or l.endswith(" skipped")]
assert shown == want, (shown, want)
done = [l for l in summ if l.startswith("== done in ")][0]
assert done.endswith("status 0") and f"{done.split()[3]} s in all" in re.sub(r"\s+", " ", sec), done
PY
# the 5M race (section 4): the summary's numbers after the 1M race's are the JSON's held-out perplexities and the
# gated student's ratio by graft's rule (recomputed from the curves: the JSON's field predates the full-window rule)
python3 - $P $Q <<'PY' || fail "$P: the 5M race's numbers differ from $Q/race_lr1e-3_5000000.json"
import json, re, sys
sys.path.insert(0, "tests/gpu/runs")
from report import kept_ratio, run_ratio, tokens_to_target
doc, q = open(sys.argv[1]).read(), sys.argv[2]
r = json.load(open(f"{q}/race_lr1e-3_5000000.json"))
by = {x["init"]: x for x in r["runs"]}
gated = by["taylor-calibrate[decay,beta,sigma,gate,sigma gated]"]
want = [f"{by[i]['final_eval_ppl']:.2f}" for i in (gated["init"], "taylor-calibrate[gate]", "random", "taylor-calibrate")]
want += [f"{r['teacher_eval_ppl']:.2f}", f"{run_ratio(r, gated):.2f}x"]
summary = doc[doc.index("**In short.**"):].split("\n\n")[0]
got = re.findall(r"\d+\.\d\dx?", summary)
assert got[12:12 + len(want)] == want, (got[12:], want)
sec = doc[doc.index("### 5M tokens at lr 1e-3"):doc.index("## 5. Verdict")]
sec = " ".join(sec.split())
assert f"after {tokens_to_target(r, gated):,} tokens ({run_ratio(r, gated):.2f}x fewer" in sec, "graft's rule"
assert f"{kept_ratio(r, gated):.2f}x, " in sec, "reached and kept"
# the JSON's own field (an older graft's rule) is named as such, with its ratio
old = r["tokens_to_target"][gated["init"]]
assert f"says {old:,} tokens for the gated fit ({r['tokens_to_target']['random'] / old:.2f}x)" in sec, "the JSON's field"
PY
# the 5M race at lr 3e-4, the gated fit's ablation and Stage 1 table (session 5): the summary, the race's prose, its
# recall table, the six-init tables' gated rows, the best Stage 1 variant and the verdict rows say what the JSON says
python3 - $P $Q <<'PY' || fail "$P: the lr 3e-4 race or the gated fit's numbers differ from $Q's JSON"
import json, re, sys
sys.path.insert(0, "tests/gpu/runs")
from report import kept_ratio, run_ratio, tokens_to_target
doc, q = open(sys.argv[1]).read(), sys.argv[2]
lines, flat = doc.splitlines(), " ".join(doc.split())
r = json.load(open(f"{q}/race_lr3e-4_5000000.json"))
by = {x["init"]: x for x in r["runs"]}
gate, gated, tc = "taylor-calibrate[gate]", "taylor-calibrate[decay,beta,sigma,gate,sigma gated]", "taylor-calibrate"
# graft's own count (a graft with the full-window rule wrote this JSON) is report.py's
assert {i: tokens_to_target(r, x) for i, x in by.items()} == r["tokens_to_target"], r["tokens_to_target"]
fin = lambda i: f"{by[i]['final_eval_ppl']:.2f}"
ratio = lambda i: f"{run_ratio(r, by[i]):.2f}x"
summary = doc[doc.index("**In short.**"):].split("\n\n")[0]
got = re.findall(r"\d+\.\d\dx?", summary)
c = json.load(open(f"{q}/stage1_components_gated.json"))["rows"]
cp = lambda st, k: [x["ppl"] for x in c if x["init"] == "taylor-calibrate" and x["stage1"] == st and x["keep"] == k][0]
full, wd = ["decay", "beta", "sigma", "gate"], ["beta", "sigma", "gate"]
want = [fin(gated), fin(gate), fin("random"), fin(tc), ratio(gate), ratio(gated), ratio(tc)]
want += [f"{cp(full, k):.2f}" for k in (0.25, 0.5)] + [f"{cp(wd, k):.2f}" for k in (0.25, 0.5)]
assert got[18:18 + len(want)] == want, (got[18:], want)
# the race's section: tokens to target and ratios by graft's rule, reached and kept, the teacher, the seconds
sec = " ".join(doc[doc.index("### 5M tokens at lr 3e-4"):doc.index("## 5. Verdict")].split())
for i, w in ((gate, "Gate alone reaches it after"), (gated, "the gated fit after"), (tc, "taylor-calibrate with the reference fit after")):
    assert f"{w} {tokens_to_target(r, by[i]):,}" in sec, i
    assert f"{tokens_to_target(r, by[i]):,} tokens ({ratio(i)} fewer" in sec or \
        f"{tokens_to_target(r, by[i]):,} ({ratio(i)})" in sec, i
assert f"{tokens_to_target(r, by['random']):,} tokens" in sec
kr = [f"{kept_ratio(r, by[i]):.2f}x" for i in (gate, gated, tc)]
assert f"{kr[0]}, {kr[1]} and {kr[2]}" in sec, kr
assert f"the teacher's {r['teacher_eval_ppl']:.2f}" in sec
assert ", ".join(f"{x['train_seconds']:.1f}" for x in r["runs"][:3]) + f", {r['runs'][3]['train_seconds']:.1f}" in sec
log = open(f"{q}/race_lr3e-4_5000000.log").read()
assert f"race step took {re.search(r'race_lr3e-4_5000000: exit 0, ([0-9.]+) s', log).group(1)} s" in sec
conv = re.findall(r"convert_student-[^:]*: exit 0, ([0-9.]+) s", log)
assert len(conv) == 4 and f"{', '.join(conv[:3])} and {conv[3]} s" in sec, conv
# the gated runs' seconds (gated.log: the commands' own exit lines) are the ones sections 2 and 3 quote
glog = open(f"{q}/gated.log").read()
sec_of = lambda name: re.search(rf"^{name}: exit 0, ([0-9.]+) s", glog, re.M).group(1)
assert f"{sec_of('ablate_train_gated')} s and {sec_of('ablate_heldout_gated')} s" in flat
assert f"({sec_of('stage1_components')} s, beside the" in flat
# the recall table: each row is the run's recall_curve, itself the mean of its cells' accuracies
for x in r["runs"]:
    for t, a in x["recall_curve"]:
        cells = [cc for tt, cs in x["recall_cells"] if tt == t for cc in cs]
        assert abs(a - sum(cc["accuracy"] for cc in cells) / len(cells)) < 1e-9 and len(cells) == 36, (x["init"], t)
    row = [l for l in lines if l.startswith(f"| 0.0003 | {x['init']} | 2.0: ")][0]
    assert row.split(" | ")[2] == ", ".join(f"{t / 1e6:.1f}: {100 * a:.1f} %" for t, a in x["recall_curve"]), row
    assert sum(cc["n"] for cc in x["recall_cells"][0][1]) == 72
# the six-init tables: the gated rows (train: six columns; heldout: uniform 25 %, 50 %) are the gated runs'
for f, n in (("ablate_train_gated", 6), ("ablate_heldout_gated", 2)):
    a = json.load(open(f"{q}/{f}.json"))
    want = [f"{x['ppl']:.2f}" for s_ in ("uniform", "ar", "ga-s2") for k in (0.25, 0.5) for x in a["rows"]
            if x["init"] == "taylor-calibrate" and x["strategy"] == s_ and x["keep"] == k]
    rows = [l.rstrip(" |").split(" | ") for l in lines if l.startswith("| taylor-calibrate | gated |")]
    row = rows[0] if n == 6 else rows[2]  # train's six-init table, its half-lives, then heldout's table
    assert row[2:2 + n] == want[:n], (f, row, want)
    assert a["meta"]["sigma_fits"] == ["gated"], f
# the best Stage 1 variant over the three fits' tables, against align-only and the paper's method
comp = [x for f in ("", "_scaled", "_gated") for x in json.load(open(f"{q}/stage1_components{f}.json"))["rows"]]
para = " ".join(doc[doc.index("**Which Stage 1 variant measured best at 1.5B.**"):].split("\n\n")[0].split())
for k in (0.25, 0.5):
    best = min((x for x in comp if x["init"] == "taylor-calibrate"), key=lambda x: x["ppl"] if x["keep"] == k else 1e300)
    assert best["stage1"] == wd and best["sigma_fit"] == "gated", best
    al = [x["ppl"] for x in comp if x["init"] == "align-only" and x["keep"] == k][0]
    paper = [x["ppl"] for x in comp if x["init"] == "taylor-calibrate" and x["stage1"] == full and x["sigma_fit"] == "reference" and x["keep"] == k][0]
    for v in (best["ppl"], al, paper):
        assert f"{v:.2f}" in para, (k, v)
    assert f"{al / best['ppl']:.2f}x" in para and f"{paper / best['ppl']:.2f}x" in para, k
# the verdict: the two-rate row is measured and follows its criterion; the recall rows follow recall_curve
v = [l for l in lines if l.startswith("| the same race at the paper's scale")][0]
big = [json.load(open(f"{q}/race_lr{x}_5000000.json")) for x in ("1e-3", "3e-4")]
rs = [run_ratio(j, [x for x in j["runs"] if x["init"] == tc][0]) for j in big]
assert v.endswith("| holds in direction only |") == all(1 < x < 4.5 for x in rs) and "not measured" not in v, v
for x in rs:
    assert f"{x:.2f}x" in v, (x, v)
for i in (gate, gated, tc):
    row = [l for l in lines if l.startswith("| ") and "recall" in l and f"random vs {i} (" in l or
           (i == tc and l.startswith("| RULER through recovery"))][0]
    above = all(b > a for (_, a), (_, b) in zip(by["random"]["recall_curve"], by[i]["recall_curve"]))
    assert ("| holds" in row) == above and ("does not hold" in row) == (not above), row
PY
# session 5's JSON opens in the workbench as the doc says: every row or run imported, none refused
for f in race_lr3e-4_5000000 stage1_components_gated ablate_train_gated ablate_heldout_gated; do
    n=$(python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); print(len(j.get("rows") or j["runs"]))' "$Q/$f.json")
    "$GRAFT_BIN" tui --import "$Q/$f.json" --snapshot results --size 110x34 >"$TMP/import.txt" 2>"$TMP/import.err" ||
        fail "graft tui --import $Q/$f.json: $(cat "$TMP/import.err")"
    grep -q "^ $n rows in run order" "$TMP/import.txt" || fail "graft tui --import $Q/$f.json: not $n rows on Results"
    [ "$(grep -c "$f.json" "$TMP/import.txt")" -ge 1 ] || fail "graft tui --import $Q/$f.json: rows not marked with their file"
done
# race --kept and --no-speed, paper-ablate --one-table, on small made-up runs: a curve that dips below the target
# early and comes back is first at its dip and kept only from its last crossing
python3 - <<'PY' || fail "report.py race --kept / --no-speed / paper-ablate --one-table"
import json, os, sys, tempfile
sys.path.insert(0, "tests/gpu/runs")
import report
d = tempfile.mkdtemp()
curve = lambda ys: [[8 * (i + 1), y] for i, y in enumerate(ys)]
race = {"runs": [{"init": "random", "curve": curve([5, 4, 3, 2, 1, 1, 1, 1, 1, 1]), "eval_curve": [], "final_eval_ppl": 9.0,
                  "build_seconds": 1.0, "train_seconds": 2.0},
                 {"init": "dip", "curve": curve([0.5, 0.5, 3, 3, 3, 3, 3, 0.5, 0.5, 0.5]), "eval_curve": [],
                  "final_eval_ppl": 8.0, "build_seconds": 1.0, "train_seconds": 2.0}],
        "smoothing_window": 1, "target_loss": 1.0, "tokens_to_target": {"random": 40, "dip": 8}, "ratio": 5.0,
        "lr_mixer": 1e-3, "lr_rest": 7e-6, "tokens_budget": 80, "ctx": 4, "batch": 2, "accum": 1,
        "converted_layers": "1", "memory": {"device": "cpu"}}
assert report.kept_tokens(race, race["runs"][1]) == 64 and report.kept_tokens(race, race["runs"][0]) == 40
assert abs(report.kept_ratio(race, race["runs"][1]) - 40 / 64) < 1e-12
text = report.race_tables([race], kept=True, speed=False)
assert "- lr 0.001: dip first at 8, kept from 64 (ratio 0.62)" in text, text
assert "train tok/s" not in text and "| 0.001 | 7e-06 | dip | 80 | 0.5000 |" in text, text
assert "train tok/s" in report.race_tables([race])
# graft's rule: a run counts from its first full window; an early dip in a shorter window is not a crossing
race3 = dict(race, smoothing_window=3, runs=[dict(race["runs"][0], curve=curve([1, 1, 1, 1])),
                                              dict(race["runs"][1], curve=curve([0.5, 0.5, 3, 3, 3, 0.5, 0.5, 0.5]))])
assert report.tokens_to_target(race3, race3["runs"][1]) == 64 and report.tokens_to_target(race3, race3["runs"][0]) == 24
# every committed race whose JSON a graft with that rule wrote: report.py's count is graft's
import glob
for f in glob.glob("docs/runs/**/*.json", recursive=True):
    j = json.load(open(f))
    if not isinstance(j, dict) or "tokens_to_target" not in j or "curve" not in j["runs"][0] or f.endswith("race_lr1e-3_5000000.json"):
        continue
    assert {r["init"]: report.tokens_to_target(j, r) for r in j["runs"]} == j["tokens_to_target"], f
row = lambda init, fit, ppl: {"init": init, "sigma_fit": fit, "stage1": ["sigma"] if fit else [], "strategy": "uniform",
                              "keep": 0.5, "ppl": ppl, "half_life_override": None,
                              "half_life": {"mean": 1.0, "median": 1.0, "max": 1.0}}
run = lambda rows: {"teacher_ppl": 3.0, "rows": rows, "memory": {"device": "cpu"},
                    "meta": {"stage2_steps": 300, "keep_best": "train", "students": len(rows), "seconds_total": 1.0}}
for n, rows in (("a", [row("align-only", None, 10.0), row("taylor-calibrate", "reference", 12.0)]),
                ("b", [row("align-only", None, 10.0), row("taylor-calibrate", "gated", 11.0)])):
    json.dump(run(rows), open(f"{d}/{n}.json", "w"))
one = report.paper_ablate(f"{d}/a.json", [f"{d}/b.json"])
lines = [l for l in one.splitlines() if l.startswith("| ")]
assert lines.count("| align-only | - | 10.00 |") == 1, one  # the same student in both runs: one row
assert lines.index("| taylor-calibrate | reference | 12.00 |") < lines.index("| taylor-calibrate | gated | 11.00 |"), one
PY
# a typed digit in the lr 3e-4 race's table, in its recall table or in the gated fit's row fails the check
for e in 's/^\(| 0.0003 | 7e-06 | taylor-calibrate\[gate\] | 4,997,120 | \)1/\19/' \
         's/^\(| 0.0003 | random | 2.0: \)1/\19/' 's/^\(| taylor-calibrate | gated | \)5/\16/'; do
    sed "$e" $P >"$TMP/paper3e4.md"
    cmp -s $P "$TMP/paper3e4.md" && fail "the negative check $e changed nothing"
    python3 tests/gpu/runs/report.py docs "$TMP/paper3e4.md" 2>/dev/null && fail "a typed number ($e) in $P passed the check"
done
# a typed digit in the 1.5B Stage 1 table fails the check
sed 's/^| full | \([0-9]\)/| full | 9\1/' $P >"$TMP/paper15.md"
cmp -s $P "$TMP/paper15.md" && fail "the negative 1.5B check changed nothing"
python3 tests/gpu/runs/report.py docs "$TMP/paper15.md" 2>/dev/null && fail "a typed number in $P passed the check"
exit 0
