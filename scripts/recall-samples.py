#!/usr/bin/env python3
"""The samples of a `graft recall --dump` file as docs/runs/recall/ keeps them:
one JSON line a sample without the prompt ids and text (a full dump of a
1k-32k run is ~100 KB gzip a model), with needle_values added for the tasks
whose needles are numbers (niah-number, multikey): every value the prompt
held, in the prompt's order, read from its text, so that
scripts/recall-answers.py can tell a distractor's value from a made-up one.

  recall-samples.py DUMP.jsonl[.gz] > RUN.samples.jsonl

A line the dump holds half-written (a run cut short) is left out. graft
writes an output's bytes as generated, so a model that emits part of a
multi-byte character leaves bytes that are not UTF-8: each becomes U+FFFD.
"""
import gzip
import json
import re
import sys

NEEDLE = re.compile(r"special magic numbers? for [A-Za-z-]+ is: (\d+)")
NUMERIC = ("niah-number", "multikey")


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    path = sys.argv[1]
    f = (gzip.open(path, "rt", encoding="utf-8", errors="replace") if path.endswith(".gz")
         else open(path, encoding="utf-8", errors="replace"))
    for line in f:
        try:
            d = json.loads(line)
        except ValueError:
            continue
        text = d.pop("text")
        d.pop("ids", None)
        if d["task"] in NUMERIC:
            d["needle_values"] = NEEDLE.findall(text)
        print(json.dumps(d, ensure_ascii=False, separators=(",", ":")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
