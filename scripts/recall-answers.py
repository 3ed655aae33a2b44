#!/usr/bin/env python3
"""What a model answered in a `graft recall` run, and how fast it ran, so that
docs/recall.md's look at the answers carries no number typed by hand.

  recall-answers.py LABEL=RUN.json [LABEL=RUN.json ...]

RUN.json is a `graft recall --json` output; its samples are read from
RUN.samples.jsonl beside it (the --dump lines without the prompt ids and
text). stdout, in Markdown:
- throughput per run from the JSON: prefill and decode tokens, seconds and
  tokens a second, the memory estimate; and how long the outputs ran;
- for the tasks with one numeric answer (niah-number, multikey), per length:
  samples right, samples whose first number starts with the answer's first
  digit, and the mean number of leading digits that match (a wrong answer that
  still starts like the needle's value says the value reached the output
  partly), and those whose first digit is not the answer's but another
  needle's (multikey's distractors; needle_values in the samples, the values
  the prompt held). A random 7-digit value's first digit is one of 1..9, so a
  model that read nothing would match it about 1 time in 9;
- per task, the first sample at depth 50 of every length: answer and output.
"""
import json
import re
import sys

NUMERIC = ("niah-number", "multikey", "passkey")


def prefix(pred, answer):
    """Leading digits shared by the first number in pred and answer."""
    m = re.search(r"\d+", pred)
    n = m.group(0) if m else ""
    k = 0
    while k < min(len(n), len(answer)) and n[k] == answer[k]:
        k += 1
    return k


def cell(text):
    """text for one Markdown table cell: a character a renderer would not show as itself (line breaks, tabs, other
    controls and separators but the space) becomes its Python escape, | is escaped, ` becomes '."""
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return text.replace("|", "\\|").replace("`", "'")


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    runs = []
    for arg in sys.argv[1:]:
        label, path = arg.split("=", 1)
        j = json.load(open(path))
        rows = [json.loads(l) for l in open(path[:-len(".json")] + ".samples.jsonl")]
        runs.append((label, j, rows))
    print("| model | prefill tokens | prefill s | prefill tok/s | generated tokens | decode s | decode tok/s | "
          "run s | batch | memory estimate GiB | longest output (characters) | outputs over 80 characters |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, j, rows in runs:
        t = j["throughput"]
        print("| %s | %d | %.2f | %.0f | %d | %.2f | %.0f | %.1f | %d | %.2f | %d | %d of %d |" % (
            label, t["prefill_tokens"], t["prefill_seconds"], t["prefill_tokens"] / t["prefill_seconds"],
            t["generated_tokens"], t["decode_seconds"], t["generated_tokens"] / t["decode_seconds"],
            j["seconds"], j["batch"], j["memory"]["estimate_bytes"] / 2**30,
            max(len(r["pred"]) for r in rows), sum(len(r["pred"]) > 80 for r in rows), len(rows)))
    print()
    for label, j, rows in runs:
        num = [r for r in rows if r["task"] in NUMERIC and len(r["answers"]) == 1]
        if not num:
            continue
        print("**%s**: right / first digit right / first digit of another needle's value instead / "
              "mean leading digits right (of %d), per task and length\n"
              % (label, len(num[0]["answers"][0])))
        lengths = sorted({r["length"] for r in num})
        tasks = [t for t in j["tasks"] if t in NUMERIC]
        print("| task \\ length | " + " | ".join(str(L) for L in lengths) + " | all |")
        print("|---" * (len(lengths) + 2) + "|")
        for t in tasks:
            cells = []
            for L in lengths + [None]:
                rs = [r for r in num if r["task"] == t and (L is None or r["length"] == L)]
                ks = [prefix(r["pred"], r["answers"][0]) for r in rs]
                other = sum(1 for r, k in zip(rs, ks) if k == 0 and any(
                    prefix(r["pred"], v) >= 1 for v in r.get("needle_values", []) if v != r["answers"][0]))
                cells.append("%d / %d / %d / %.1f of %d" % (sum(r["score"] == 1 for r in rs), sum(k >= 1 for k in ks),
                                                           other, sum(ks) / len(ks), len(rs)))
            print("| %s | " % t + " | ".join(cells) + " |")
        depths = sorted({r["depth"] for r in num})
        print("\n| depth | " + " | ".join("%g %%" % d for d in depths) + " |")
        print("|---" * (len(depths) + 1) + "|")
        cells = []
        for d in depths:
            ks = [prefix(r["pred"], r["answers"][0]) for r in num if r["depth"] == d]
            cells.append("%d / %.1f of %d" % (sum(k >= 1 for k in ks), sum(ks) / len(ks), len(ks)))
        print("| first digit right / mean leading digits | " + " | ".join(cells) + " |")
        print()
    for label, j, rows in runs:
        print("**%s**, sample 0 at depth 50:\n" % label)
        print("| task | length | answer | output (first 60 characters) |")
        print("|---|---:|---|---|")
        for r in rows:
            if r["depth"] == 50 and r["index"] == 0:
                out = cell(r["pred"][:60])
                print("| %s | %d | %s | `%s` |" % (r["task"], r["length"], " ".join(r["answers"]), out))
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
