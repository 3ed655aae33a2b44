#!/usr/bin/env python3
"""What the students of a race answered at its last recall point, from the
race's --recall-dump, so that docs/recall.md's look at the answers carries no
number typed by hand.

  recall-race-answers.py RACE.json ANSWERS.jsonl TEACHER.json

The answers file is first checked against the JSON's recall_cells as
recall-race-cells.py checks it (exit 1 when they disagree). stdout, in
Markdown, at the last point:
- niah-number and multikey per student: right, wrong with the value's first
  three digits (a near miss: a digit dropped, repeated or changed later on),
  wrong with another first digit, the mean leading digits of the wrong ones,
  and wrong ones whose number has another count of digits than the value;
  the multikey prompts shared with the teacher (TEACHER.samples.jsonl has
  their needle values) answered with another key's value;
- vt per student: prompts naming at least one of the chain's variables, and
  what the others wrote: placeholder names (A, B, C / x, y, z / 1, 2, 3), one
  number repeated, the filler's words, other;
- sample 0 at depth 50 of every task at the shortest and the longest length:
  answer and output (first 70 characters), for every student.
"""
import importlib.util
import json
import os
import re
import sys

here = os.path.dirname(os.path.abspath(__file__))


def module(name, file):
    spec = importlib.util.spec_from_file_location(name, os.path.join(here, file))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


cells = module("recall_race_cells", "recall-race-cells.py")
answers = module("recall_answers", "recall-answers.py")

PLACEHOLDERS = re.compile(r"^\W*(?:\d\.\s*)?(?:[A-Za-z]\d*|\d)(?:, (?:[A-Za-z]\d*|\d)){2,}")
REPEATED = re.compile(r"^\s*(\d{3,})(?:, \1){2,}")
FILLER = re.compile(r"grass|sky|sun")


def vt_kind(pred, score):
    if score > 0:
        return "names"
    if REPEATED.match(pred):
        return "repeated"
    if PLACEHOLDERS.match(pred):
        return "placeholders"
    if FILLER.search(pred):
        return "filler"
    return "other"


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    j, rows = cells.load(sys.argv[1], sys.argv[2])
    teacher = {(s["task"], s["length"], s["depth"], s["index"]): s
               for s in map(json.loads, open(sys.argv[3][:-len(".json")] + ".samples.jsonl"))}
    end = j["runs"][0]["recall_curve"][-1][0]
    last = [a for a in rows if a["tokens"] == end]
    runs = [r["init"] for r in j["runs"]]
    print("At %.2fM tokens, niah-number and multikey: right / wrong with the value's first 3 digits / wrong with "
          "another first digit / mean leading digits right of the wrong ones / wrong with another count of digits, "
          "of the prompts\n" % (end / 1e6))
    print("| student | task | right | near miss | other first digit | leading digits of the wrong | other digit count | prompts |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for run in runs:
        for task in ("niah-number", "multikey"):
            rs = [a for a in last if a["run"] == run and a["task"] == task]
            wrong = [a for a in rs if a["score"] < 1]
            ks = [answers.prefix(a["pred"], a["answers"][0]) for a in wrong]
            digits = [len(m.group(0)) if m else 0 for m in (re.search(r"\d+", a["pred"]) for a in wrong)]
            print("| %s | %s | %d | %d | %d | %s | %d | %d |" % (
                run, task, len(rs) - len(wrong), sum(k >= 3 for k in ks), sum(k == 0 for k in ks),
                "%.1f" % (sum(ks) / len(ks)) if ks else "-",
                sum(d != len(a["answers"][0]) for d, a in zip(digits, wrong)), len(rs)))
    shared = [a for a in last if a["task"] == "multikey" and (a["task"], a["length"], a["depth"], a["index"]) in teacher]
    other = [a for a in shared if a["score"] < 1 and any(
        re.search(r"\d+", a["pred"]) and re.search(r"\d+", a["pred"]).group(0) == v
        for v in teacher[a["task"], a["length"], a["depth"], a["index"]].get("needle_values", []) if v != a["answers"][0])]
    print("\nOf the %d multikey answers on the prompts the teacher saw (its samples hold their needle values), "
          "%d are wrong, %d of them another key's value exactly\n" % (
              len(shared), sum(a["score"] < 1 for a in shared), len(other)))
    kinds = ("names", "placeholders", "repeated", "filler", "other")
    print("At %.2fM tokens, vt: prompts naming at least one of the chain's 5 variables (mean score of those), and "
          "the others: placeholder names (A, B, C / x, y, z / 1, 2, 3), one number repeated, the filler's words, other\n"
          % (end / 1e6))
    print("| student | names variables | placeholders | a number repeated | filler | other | prompts |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for run in runs:
        rs = [a for a in last if a["run"] == run and a["task"] == "vt"]
        k = [vt_kind(a["pred"], a["score"]) for a in rs]
        named = [a["score"] for a in rs if a["score"] > 0]
        print("| %s | %d (%.2f) | " % (run, k.count("names"), sum(named) / len(named) if named else 0)
              + " | ".join(str(k.count(x)) for x in kinds[1:]) + " | %d |" % len(rs))
    lengths = sorted({a["length"] for a in last})
    print("\nSample 0 at depth 50 at %d and %d tokens, at %.2fM tokens:\n" % (lengths[0], lengths[-1], end / 1e6))
    print("| student | task | length | answer | output (first 70 characters) | score |")
    print("|---|---|---:|---|---|---:|")
    for run in runs:
        for task in dict.fromkeys(c["task"] for c in j["runs"][0]["recall_cells"][-1][1]):
            for L in (lengths[0], lengths[-1]):
                for a in last:
                    if a["run"] == run and a["task"] == task and a["length"] == L and a["depth"] == 50 and a["index"] == 0:
                        print("| %s | %s | %d | %s | `%s` | %g |" % (run, task, L, " ".join(a["answers"]),
                                                                      answers.cell(a["pred"][:70]), a["score"]))
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
