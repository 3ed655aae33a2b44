#!/usr/bin/env python3
"""Tables of docs/half-life.md from `graft halflife --json` and `graft eval --json`
outputs: one row per student (halflife-NAME.json, eval-NAME.json in DIR, or in
DIR/halflife-json.tar.gz as tests/gpu/halflife/run.sh leaves them), then the
worst flagged heads of each. Usage: report.py DIR [NAME ...] (default: every
halflife-*.json, in the order of run.sh)."""
import glob
import io
import json
import math
import os
import statistics
import sys
import tarfile

ORDER = ["random", "align-only", "taylor-only", "taylor-calibrate", "best-subset", "no-sink"]
FLAGS = ["too_short", "too_long", "too_spread", "write_gate_shut", "write_gate_saturated"]


def load(d):
    files = {}
    tgz = os.path.join(d, "halflife-json.tar.gz")
    if os.path.exists(tgz):
        with tarfile.open(tgz) as t:
            for m in t.getmembers():
                if m.isfile() and m.name.endswith(".json"):
                    data = t.extractfile(m).read()
                    if data.strip():
                        files[os.path.basename(m.name)] = json.load(io.BytesIO(data))
    for p in glob.glob(os.path.join(d, "*.json")):
        if os.path.getsize(p):
            files[os.path.basename(p)] = json.load(open(p))
    return files


def fmt(x, nd=3):
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    return f"{x:.{nd}g}"


def main():
    d = sys.argv[1]
    files = load(d)
    names = sys.argv[2:] or sorted((k[len("halflife-"):-5] for k in files if k.startswith("halflife-")),
                                   key=lambda n: (ORDER.index(n) if n in ORDER else 99, n))
    print("| student | ppl | heads | idle median | p50 median | median p90/p10 | median beta | "
          "median \\|log2(p50 / target)\\| | " + " | ".join(f.replace("_", " ") for f in FLAGS) + " |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|" + "---:|" * len(FLAGS))
    worst = {}
    for n in names:
        h = files.get(f"halflife-{n}.json")
        if not h:
            continue
        e = files.get(f"eval-{n}.json", {})
        heads = h["heads"]
        med = lambda k: statistics.median(x[k] for x in heads if x[k] is not None)
        spread = statistics.median(x["p90"] / x["p10"] for x in heads if x["p10"] and x["p90"])
        logr = [abs(math.log2(x["p50"] / x["teacher_distance"])) for x in heads
                if x["p50"] and x["teacher_distance"]]
        counts = [sum(f in x["flags"] for x in heads) for f in FLAGS]
        print(f"| {n} | {fmt(e.get('ppl'), 5)} | {len(heads)} | {fmt(med('idle'))} | {fmt(med('p50'))} | "
              f"{fmt(spread)} | {fmt(med('beta_p50'))} | {fmt(statistics.median(logr) if logr else None)} | "
              + " | ".join(str(c) for c in counts) + " |")
        worst[n] = sorted((x for x in heads if x["flags"]), key=lambda x: -x["severity"])[:3]
    for n in names:
        f, c = files.get(f"fix-{n}.json"), files.get(f"fixctl-{n}.json")
        if not f:
            continue
        fx = f["fix"]
        before = {(h["layer"], h["head"]): h for h in fx["before"]}
        after = {(h["layer"], h["head"]): h for h in f["heads"]}
        ctl = {(h["layer"], h["head"]): h for h in c["heads"]} if c else {}
        print(f"\nfix of {n}: Stage 2 of the fixed layers alone, {fx['stage2_steps']} steps; perplexity of the "
              f"calibration text's evaluation slice ({fx['eval_tokens']} tokens): {fx['ppl_before']:.5g} before, "
              f"{fx['ppl_after']:.5g} after the fix" + (f", {c['fix']['ppl_after']:.5g} after the control (same Stage 2, no change)" if c else ""))
        print("\n| head | target (no-sink) | idle before | p50 before | idle after | p50 after | flags after | "
              "control idle | control p50 | control flags |")
        print("|---|---:|---:|---:|---:|---:|---|---:|---:|---|")
        for ch in fx["changes"]:
            k = (ch["layer"], ch["head"])
            b, a, t = before[k], after[k], ctl.get(k)
            print(f"| {k[0]}:{k[1]} | {fmt(ch['half_life'])} | {fmt(b['idle'])} | {fmt(b['p50'])} | {fmt(a['idle'])} | "
                  f"{fmt(a['p50'])} | {', '.join(a['flags']) or '-'} | {fmt(t['idle']) if t else '-'} | "
                  f"{fmt(t['p50']) if t else '-'} | {(', '.join(t['flags']) or '-') if t else '-'} |")
    print()
    for n, ws in worst.items():
        if not ws:
            print(f"- {n}: no head flagged")
            continue
        print(f"- {n}: " + "; ".join(f"layer {x['layer']} head {x['head']} ({x['reasons']})" for x in ws))


if __name__ == "__main__":
    main()
