#!/usr/bin/env python3
"""graft recall beside transformers generate on the same prompts, so that
docs/recall.md's comparison carries no number typed by hand.

  recall-reference.py HF.json

HF.json is tests/gpu/recall/hf_generate.py's output (run by
tests/gpu/recall/run.sh with graft's --json): per cell, transformers' seconds
of generate() and graft's seconds for the same cell, both scores, and how many
outputs equal graft's. stdout, in Markdown: one line on the reference (task,
versions, dtype, load), then per length the cells' samples, outputs equal to
graft's, right answers of each, and the summed seconds of both with their
ratio; the first cell of a length is also shown alone, since both sides pay
for a new prompt shape there.
"""
import json
import sys


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    j = json.load(open(sys.argv[1]))
    if "error" in j or not j.get("cells"):
        print("recall-reference.py: %s holds no reference cells (%s)" % (sys.argv[1], j.get("error", "empty")),
              file=sys.stderr)
        return 1
    v = j["versions"]
    print("%s, task %s, %s, torch %s, transformers %s; graft's batch %s; transformers' load of the GGUF %.1f s "
          "(not in the seconds below)\n" % (j["reference"], j["task"], j["dtype"], v["torch"], v["transformers"],
                                           j.get("graft_batch"), j["load_seconds"]))
    print("| length | prompt tokens a sample | samples | outputs equal to graft's | right: transformers / graft "
          "| transformers s | graft s | transformers / graft | first depth alone: transformers / graft s |")
    print("|---:|---:|---:|---:|---|---:|---:|---:|---|")
    lengths = sorted({c["length"] for c in j["cells"]})
    tot = {"n": 0, "same": 0, "hf": 0.0, "g": 0.0, "hs": 0.0, "gs": 0.0}
    for L in lengths:
        cs = [c for c in j["cells"] if c["length"] == L]
        n = sum(c["n"] for c in cs)
        same = sum(c["same_as_graft"] for c in cs)
        hf = sum(c["correct"] for c in cs)
        g = sum(c["graft_accuracy"] * c["n"] for c in cs)
        hs = sum(c["seconds"] for c in cs)
        gs = sum(c["graft_seconds"] for c in cs)
        first = min(cs, key=lambda c: c["depth"])
        print("| %d | %d | %d | %d | %g / %g | %.2f | %.2f | %.1f | %.2f / %.2f |" % (
            L, first["prompt_tokens"] // first["n"], n, same, hf, g, hs, gs, hs / gs, first["seconds"],
            first["graft_seconds"]))
        for k, x in (("n", n), ("same", same), ("hf", hf), ("g", g), ("hs", hs), ("gs", gs)):
            tot[k] += x
    print("| all | | %d | %d | %g / %g | %.2f | %.2f | %.1f | |" % (
        tot["n"], tot["same"], tot["hf"], tot["g"], tot["hs"], tot["gs"], tot["hs"] / tot["gs"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
