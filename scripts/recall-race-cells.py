#!/usr/bin/env python3
"""What a race's recall points are made of (`graft race --recall-every N
--recall-dump ANSWERS.jsonl --json`): per student, task x length and depth
tables at every point, a binomial interval a point, each student against the
first run on the same prompts, and the length x depth heat maps after the race
beside the teacher's where its prompts are the probe's, so that docs/recall.md
carries no number typed by hand.

  recall-race-cells.py OUT.png RACE.json ANSWERS.jsonl TEACHER.json [--subset=TASKS:LENGTHS]

ANSWERS.jsonl: the race's --recall-dump lines (the prompt ids and text may be
dropped). Exit 1 unless the answers file's prompts and scores, summed per
(run, tokens, task, length, depth), are the JSON's recall_cells and each
recall_curve point is its cells' sum of correct over sum of n.
TEACHER.json: `graft recall --json` of the teacher, its samples in
TEACHER.samples.jsonl; a probe prompt is the teacher's when (task, length,
depth, index) is one of the teacher's and its answers are the same (both are
drawn from the seed, task, length, depth and index), and only those are
compared. --subset prints each point over those tasks and lengths alone (the
cells another race's probe measured).
PNG: one panel per student after the race, then the teacher's on the probe's
grid (grey where the teacher did not see the probe's prompts); rows lengths,
columns depths, accuracy over the tasks, drawn by recall-heatmap.py.
"""
import importlib.util
import json
import math
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("recall_heatmap", os.path.join(here, "recall-heatmap.py"))
heatmap = importlib.util.module_from_spec(spec)
spec.loader.exec_module(heatmap)

TOL = 1e-6  # scores are sums of fifths (vt) and whole numbers: exact up to float rounding


def load(race_path, answers_path):
    """(race JSON, answer rows); exits 1 when the rows are not the JSON's recall_cells."""
    j = json.load(open(race_path))
    rows = [json.loads(l) for l in open(answers_path)]
    for r in j["runs"]:
        if not r.get("recall_cells"):
            sys.exit("recall-race-cells.py: %s: run %s has no recall_cells" % (race_path, r["init"]))
        if [t for t, _ in r["recall_cells"]] != [t for t, _ in r["recall_curve"]]:
            sys.exit("recall-race-cells.py: %s: %s's recall_cells are at other tokens than its recall_curve" % (race_path, r["init"]))
        for (t, cells), (_, acc) in zip(r["recall_cells"], r["recall_curve"]):
            n = sum(c["n"] for c in cells)
            if abs(sum(c["correct"] for c in cells) / n - acc) > TOL:
                sys.exit("recall-race-cells.py: %s at %d tokens: the cells' accuracy is not the curve's %r" % (r["init"], t, acc))
            for c in cells:
                got = [a for a in rows if a["run"] == r["init"] and a["tokens"] == t and a["task"] == c["task"]
                       and a["length"] == c["length"] and a["depth"] == c["depth"]]
                s = sum(a["score"] for a in got)
                if len(got) != c["n"] or abs(s - c["correct"]) > TOL or not all(math.isfinite(a["score"]) for a in got):
                    sys.exit("recall-race-cells.py: %s: %s at %d tokens, %s %d depth %d: %d answers scoring %g, "
                             "recall_cells has n %d correct %g" % (answers_path, r["init"], t, c["task"], c["length"],
                                                                   c["depth"], len(got), s, c["n"], c["correct"]))
    total = sum(c["n"] for r in j["runs"] for _, cells in r["recall_cells"] for c in cells)
    if total != len(rows):
        sys.exit("recall-race-cells.py: %s has %d answers, recall_cells count %d" % (answers_path, len(rows), total))
    return j, rows


def wilson(s, n, z=1.96):
    """95 % Wilson interval of a share s / n (a vt score of fifths is taken as s successes)."""
    p = s / n
    mid = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return mid - half, mid + half


def sign_test(up, down):
    """Two-sided exact sign test of up against down prompts (ties left out)."""
    n = up + down
    if n == 0:
        return 1.0
    k = min(up, down)
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n)


def g(x):
    return "%g" % round(x, 2)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--subset")]
    subset = [a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--subset=")]
    if len(args) != 4 or not args[0].endswith(".png"):
        print(__doc__, file=sys.stderr)
        return 2
    out, race_path, answers_path, teacher_path = args
    j, rows = load(race_path, answers_path)
    teacher = {(s["task"], s["length"], s["depth"], s["index"]): s
               for s in map(json.loads, open(teacher_path[:-len(".json")] + ".samples.jsonl"))}
    runs = [r["init"] for r in j["runs"]]
    points = [t for t, _ in j["runs"][0]["recall_curve"]]
    cells0 = j["runs"][0]["recall_cells"][0][1]
    tasks = list(dict.fromkeys(c["task"] for c in cells0))
    lengths = sorted({c["length"] for c in cells0})
    depths = sorted({c["depth"] for c in cells0})
    n_cell = cells0[0]["n"]
    pts = " / ".join("%.2fM" % (t / 1e6) for t in points)

    def score(run, t, **kw):
        rs = [a for a in rows if a["run"] == run and a["tokens"] == t and all(a[k] == v for k, v in kw.items())]
        return sum(a["score"] for a in rs), len(rs)

    print("Score of the %d prompts of each task and length (%d depths x %d samples), at %s tokens; "
          "a vt prompt scores fifths (the chain's variables named)\n" % (n_cell * len(depths), len(depths), n_cell, pts))
    print("| student | task | " + " | ".join(str(L) for L in lengths) + " |")
    print("|---|---|" + "---:|" * len(lengths))
    for run in runs:
        for task in tasks:
            print("| %s | %s | " % (run, task) + " | ".join(
                " / ".join(g(score(run, t, task=task, length=L)[0]) for t in points) for L in lengths) + " |")
    print("\nAfter the race (%.2fM tokens): score per length over the tasks (of %d), per depth over tasks and "
          "lengths (of %d)\n" % (points[-1] / 1e6, len(tasks) * len(depths) * n_cell, len(tasks) * len(lengths) * n_cell))
    print("| student | " + " | ".join(str(L) for L in lengths) + " | " + " | ".join("depth %g %%" % d for d in depths) + " |")
    print("|---|" + "---:|" * (len(lengths) + len(depths)))
    for run in runs:
        print("| %s | " % run + " | ".join(g(score(run, points[-1], length=L)[0]) for L in lengths) + " | "
              + " | ".join(g(score(run, points[-1], depth=d)[0]) for d in depths) + " |")
    first = runs[0]
    print("\nEach point: score of n prompts, its 95 %% Wilson interval, and against %s on the same prompts: "
          "prompts scored higher / lower, two-sided sign test p\n" % first)
    print("| student | " + " | ".join("at %.2fM tokens" % (t / 1e6) for t in points) + " |")
    print("|---|" + "---|" * len(points))
    for run in runs:
        cols = []
        for t in points:
            s, n = score(run, t)
            lo, hi = wilson(s, n)
            col = "%s of %d (%.1f %%, %.0f-%.0f %%)" % (g(s), n, 100 * s / n, 100 * lo, 100 * hi)
            if run != first:
                mine = {(a["task"], a["length"], a["depth"], a["index"]): a["score"] for a in rows if a["run"] == run and a["tokens"] == t}
                base = {(a["task"], a["length"], a["depth"], a["index"]): a["score"] for a in rows if a["run"] == first and a["tokens"] == t}
                up = sum(mine[k] > base[k] + TOL for k in mine)
                down = sum(mine[k] < base[k] - TOL for k in mine)
                col += "; %d / %d, p %.2g" % (up, down, sign_test(up, down))
            cols.append(col)
        print("| %s | " % run + " | ".join(cols) + " |")
    for spec_ in subset:
        st, sl = spec_.split(":")
        st, sl = st.split(","), [int(x) for x in sl.split(",")]
        print("\nOver %s at %s tokens alone (%d prompts a point)\n" % (", ".join(st), ", ".join(map(str, sl)),
                                                                       len(st) * len(sl) * len(depths) * n_cell))
        print("| student | " + " | ".join("at %.2fM tokens" % (t / 1e6) for t in points) + " |")
        print("|---|" + "---:|" * len(points))
        for run in runs:
            cols = []
            for t in points:
                rs = [a for a in rows if a["run"] == run and a["tokens"] == t and a["task"] in st and a["length"] in sl]
                cols.append("%s of %d" % (g(sum(a["score"] for a in rs)), len(rs)))
            print("| %s | " % run + " | ".join(cols) + " |")
    # the teacher, where its prompts are the probe's
    shared = {}
    for a in rows:
        k = (a["task"], a["length"], a["depth"], a["index"])
        if k in teacher and teacher[k]["answers"] == a["answers"]:
            shared[k] = teacher[k]["score"]
        elif k in teacher:
            sys.exit("recall-race-cells.py: %s: the teacher's prompt %r has other answers than the probe's" % (teacher_path, k))
    keys = sorted(shared)
    print("\nThe teacher's prompts among the probe's (same task, length, depth, index and answers): %d, at %s; "
          "the teacher scored %s of them. The students on the same prompts at %s tokens:\n" % (
              len(keys), ", ".join(sorted({"%s %d depth %d" % k[:3] for k in keys})) if len(keys) < 4 else
              "lengths %s, depth %s" % (", ".join(map(str, sorted({k[1] for k in keys}))),
                                         ", ".join(map(str, sorted({k[2] for k in keys})))), g(sum(shared.values())), pts))
    print("| student | " + " | ".join("%s" % task for task in tasks) + " | all |")
    print("|---|" + "---:|" * (len(tasks) + 1))
    for run in runs:
        cols = []
        for task in tasks + [None]:
            ks = [k for k in keys if task is None or k[0] == task]
            cols.append(" / ".join(g(sum(a["score"] for a in rows if a["run"] == run and a["tokens"] == t
                                         and (a["task"], a["length"], a["depth"], a["index"]) in ks)) for t in points)
                        + " of %d" % len(ks))
        print("| %s | " % run + " | ".join(cols) + " |")
    print("| teacher | " + " | ".join("%s of %d" % (g(sum(v for k, v in shared.items() if task is None or k[0] == task)),
                                                   sum(1 for k in keys if task is None or k[0] == task))
                                     for task in tasks + [None]) + " |")
    panels = []
    for run in runs:
        acc = {}
        for L in lengths:
            for d in depths:
                s, n = score(run, points[-1], length=L, depth=d)
                acc[L, d] = s / n
        panels.append((lengths, depths, acc))
    acc = {}
    for L in lengths:
        for d in depths:
            ks = [k for k in keys if k[1] == L and k[2] == d]
            acc[L, d] = sum(shared[k] for k in ks) / len(ks) if ks and len(ks) == len(tasks) * n_cell else None
    panels.append((lengths, depths, acc))
    heatmap.png(out, panels)
    print("\nThe PNG, left to right: %s, then the teacher (grey: not its prompts)\n" % ", ".join(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
