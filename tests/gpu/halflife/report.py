#!/usr/bin/env python3
"""Tables of docs/half-life.md from `graft halflife --json` and `graft eval --json`
outputs: one row per student (halflife-NAME.json, eval-NAME.json in DIR, or in
DIR/halflife-json.tar.gz as tests/gpu/halflife/run.sh leaves them), then the
worst flagged heads of each, the fix beside its control, and with
--pictures=N each student's first N heads on a log axis (p10..p90, p50, idle,
target), --pictures=flagged every flagged head; --worst=N lists N flagged heads a student instead of 3; --layers adds,
per student, the idle / data-dependent / target half-lives over every head
(mean, median, max: the paper's X-ray statistics), every flagged head with its
numbers, and a table per GDN layer.
--drift instead reads the `graft halflife --ckpt ... --json` outputs in DIR (drift-NAME.json,
or any halflife-NAME.json that carries a `drift`): per student and per point of its drift
(the folder at 0 tokens, then each checkpoint) the median over heads of the idle and the
data-dependent half-life, the median |log2(p50 / target)|, how many heads are too short /
too long by the p50 rule of the flags (p50 < target / short_ratio, p50 > target x
long_ratio, an infinite p50 counted long; heads without a target are not counted: the
share rules need per-token data the drift does not keep), then the trajectory of the
--drift-heads=N heads (default 4) whose median moved most between the first and the last
point.
Usage: report.py [--pictures=N|flagged] [--worst=N] [--layers] DIR [NAME ...] (default:
every halflife-*.json, in the order of run.sh)
       report.py --drift [--drift-heads=N] DIR [NAME ...] (default: every drift-*.json)."""
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


def strip(h, width=60, lo=-1.0, hi=5.0):
    """One head on a log10 axis from 10^lo to 10^hi tokens: '-' p10..p90, '|' p50,
    'i' idle, 'T' the teacher distance Stage 1 aimed at (later marks win)."""
    row = [" "] * width
    pos = lambda x: None if not x or not math.isfinite(x) or x <= 0 else \
        min(width - 1, max(0, int((math.log10(x) - lo) / (hi - lo) * (width - 1) + 0.5)))
    a, b = pos(h["p10"]), pos(h["p90"])
    if a is not None:
        for i in range(a, (b if b is not None else width - 1) + 1):
            row[i] = "-"
    for key, ch in (("p50", "|"), ("teacher_distance", "T"), ("idle", "i")):
        p = pos(h[key])
        if p is not None:
            row[p] = ch
    return "".join(row)


def pictures(files, names, max_heads):
    print("```")
    print(f"{'':24}{'0.1':<10}{'1':<10}{'10':<10}{'100':<10}{'1e3':<10}{'1e4':<9}1e5 tokens")
    for n in names:
        h = files.get(f"halflife-{n}.json")
        if not h:
            continue
        print(n)
        for x in (h["heads"][:max_heads] if max_heads > 0 else [x for x in h["heads"] if x["flags"]]):
            fl = ",".join(f.replace("write_gate_", "beta_") for f in x["flags"])
            print(f"  layer {x['layer']:2} head {x['head']:2}  {strip(x)} {fl}")
    print("```")


def layers(files, names):
    """Idle vs data-dependent half-lives over every head, then per GDN layer."""
    for n in names:
        h = files.get(f"halflife-{n}.json")
        if not h:
            continue
        heads = h["heads"]
        print(f"\n{n}: {len(heads)} heads, {h.get('tokens', '?')} tokens ({h.get('seqs', '?')} x {h.get('ctx', '?')})\n")
        print("| half-life (tokens) | mean | median | max | heads |")
        print("|---|---:|---:|---:|---:|")
        for key, label in (("idle", "idle"), ("p50", "data-dependent p50"), ("teacher_distance", "target (teacher distance)")):
            v = [x[key] for x in heads if x[key] is not None]
            print(f"| {label} | {fmt(statistics.mean(v)) if v else '-'} | {fmt(statistics.median(v)) if v else '-'} | "
                  f"{fmt(max(v)) if v else '-'} | {len(v)} |")
        flagged = [x for x in heads if x["flags"]]
        print(f"\nflagged heads: {len(flagged)} of {len(heads)}, worst first\n")
        print("| layer | head | idle | target | p10 | p50 | p90 | under one | over ctx | beta p50 | reasons |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
        for x in sorted(flagged, key=lambda x: -x["severity"]):
            print(f"| {x['layer']} | {x['head']} | {fmt(x['idle'])} | {fmt(x['teacher_distance'])} | {fmt(x['p10'])} | "
                  f"{fmt(x['p50'])} | {fmt(x['p90'])} | {fmt(x['under_one'], 2)} | {fmt(x['over_ctx'], 2)} | "
                  f"{fmt(x['beta_p50'])} | {x['reasons']} |")
        ratio = [x["idle"] / x["teacher_distance"] for x in heads if x["idle"] and x["teacher_distance"]]
        if ratio:
            print(f"\nidle / target per head: {fmt(min(ratio))} to {fmt(max(ratio))} ({len(ratio)} heads); "
                  f"p50 / idle over 1 in {sum(1 for x in heads if x['p50'] and x['idle'] and x['p50'] > x['idle'])} "
                  f"of {len(heads)}; heads never halving within the context on over half the tokens: "
                  f"{sum(1 for x in heads if x['over_ctx'] > 0.5)} (at most {fmt(max(x['over_ctx'] for x in heads))} "
                  f"of the tokens), forgetting at once on over half: {sum(1 for x in heads if x['under_one'] > 0.5)}")
        print("\n| layer | idle median | p50 median | target median | median p90/p10 | median beta | "
              "median under one | median over ctx | " + " | ".join(f.replace("_", " ") for f in FLAGS) + " |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|" + "---:|" * len(FLAGS))
        for L in sorted({x["layer"] for x in heads}):
            hs = [x for x in heads if x["layer"] == L]
            med = lambda k: fmt(statistics.median(x[k] for x in hs if x[k] is not None)) \
                if any(x[k] is not None for x in hs) else "-"
            sp = [x["p90"] / x["p10"] for x in hs if x["p10"] and x["p90"]]
            print(f"| {L} | {med('idle')} | {med('p50')} | {med('teacher_distance')} | "
                  f"{fmt(statistics.median(sp)) if sp else '-'} | {med('beta_p50')} | {med('under_one')} | "
                  f"{med('over_ctx')} | " + " | ".join(str(sum(f in x["flags"] for x in hs)) for f in FLAGS) + " |")


def drift_counts(p50, targets, th):
    """Heads too short / too long by the flags' p50 rule at one point of a drift (None: no target)."""
    short = sum(1 for v, t in zip(p50, targets) if t and v is not None and v < t / th["short_ratio"])
    long_ = sum(1 for v, t in zip(p50, targets) if t and (v is None or v > t * th["long_ratio"]))
    return short, long_


def drift(files, names, n_heads):
    """Each student's half-lives at the folder and at every checkpoint of its training."""
    gap, shown = "", 0
    for n in names:
        j = files.get(f"drift-{n}.json") or files.get(f"halflife-{n}.json")
        if not j or not j.get("drift"):
            continue
        heads, pts, th = j["heads"], j["drift"], j["thresholds"]
        targets = [h["teacher_distance"] for h in heads]
        if any(len(d["p50"]) != len(heads) or len(d["idle"]) != len(heads) for d in pts):
            raise SystemExit(f"report.py: {n}: a drift point does not have one p50 and idle per head")
        print(f"{gap}{n} ({j.get('init', '?')}): {len(heads)} heads, {j.get('tokens', '?')} tokens of "
              f"{os.path.basename(j.get('text', '?'))} ({j.get('seqs', '?')} x {j.get('ctx', '?')}), "
              f"{sum(1 for t in targets if t)} with a target\n")
        gap, shown = "\n", shown + 1
        print("| training tokens | step | idle median | p50 median | median \\|log2(p50 / target)\\| | "
              "too short | too long |")
        print("|---:|---:|---:|---:|---:|---:|---:|")
        for d in pts:
            fin = lambda v: [x for x in v if x is not None]
            logr = [abs(math.log2(v / t)) for v, t in zip(d["p50"], targets) if v and t]
            short, long_ = drift_counts(d["p50"], targets, th)
            print(f"| {d['tokens']} | {d['step']} | {fmt(statistics.median(fin(d['idle'])))} | "
                  f"{fmt(statistics.median(fin(d['p50'])))} | {fmt(statistics.median(logr) if logr else None)} | "
                  f"{short} | {long_} |")
        measured = [sum(f in h["flags"] for h in heads) for f in ("too_short", "too_long")]
        print(f"\nthe last point as measured (its `heads`, every flag rule): too short {measured[0]}, "
              f"too long {measured[1]}")
        move = lambda i: abs(math.log2(pts[-1]["p50"][i] / pts[0]["p50"][i])) \
            if pts[0]["p50"][i] and pts[-1]["p50"][i] else math.inf
        pick = sorted(range(len(heads)), key=lambda i: -move(i))[:n_heads]
        print("\n| layer | head | target | " + " | ".join(f"p50 at {d['tokens']}" for d in pts) + " | idle first / last |")
        print("|---:|---:|---:|" + "---:|" * len(pts) + "---|")
        for i in pick:
            h = heads[i]
            print(f"| {h['layer']} | {h['head']} | {fmt(targets[i])} | " +
                  " | ".join(fmt(d["p50"][i]) for d in pts) +
                  f" | {fmt(pts[0]['idle'][i])} / {fmt(pts[-1]['idle'][i])} |")
    return shown


def main():
    args = sys.argv[1:]
    max_heads, n_worst, per_layer = 0, 3, False
    drift_view, n_drift_heads = False, 4
    while args and args[0].startswith("--"):
        a = args.pop(0)
        if a.startswith("--pictures="):
            v = a.split("=", 1)[1]
            max_heads = -1 if v == "flagged" else int(v)
        elif a.startswith("--worst="):
            n_worst = int(a.split("=", 1)[1])
        elif a == "--layers":
            per_layer = True
        elif a == "--drift":
            drift_view = True
        elif a.startswith("--drift-heads="):
            n_drift_heads = int(a.split("=", 1)[1])
        else:
            print(f"report.py: unknown option {a}", file=sys.stderr)
            return 2
    if not args:
        print(__doc__.split("Usage: ")[-1].strip(), file=sys.stderr)
        return 2
    d = args[0]
    files = load(d)
    if drift_view:
        names = args[1:] or sorted(k[len("drift-"):-5] for k in files if k.startswith("drift-"))
        if not drift(files, names, n_drift_heads):
            print(f"report.py: no drift-NAME.json (graft halflife --ckpt ... --json) in {d}", file=sys.stderr)
            return 1
        return 0
    names = args[1:] or sorted((k[len("halflife-"):-5] for k in files if k.startswith("halflife-")),
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
        worst[n] = sorted((x for x in heads if x["flags"]), key=lambda x: -x["severity"])[:n_worst]
    for n in names:
        runs = [(r, files.get(f"{r}-{n}.json")) for r in ("fix0", "fix", "fixctl")]
        runs = [(r, j) for r, j in runs if j]
        if not runs:
            continue
        label = {"fix0": "fix alone", "fix": "fix + Stage 2", "fixctl": "Stage 2 alone (control)"}
        first = runs[0][1]["fix"]
        before = {(h["layer"], h["head"]): h for h in first["before"]}
        print(f"\nfixes of {n} (perplexity of the calibration text's evaluation slice, {first['eval_tokens']} tokens, "
              f"{first['ppl_before']:.5g} before):\n")
        print("| run | Stage 2 steps | ppl after | " + " | ".join(f"{c['layer']}:{c['head']} idle / p50" for c in first["changes"]) + " |")
        print("|---|---:|---:|" + "---|" * len(first["changes"]))
        print("| before | | | " + " | ".join(f"{fmt(before[(c['layer'], c['head'])]['idle'])} / "
                                           f"{fmt(before[(c['layer'], c['head'])]['p50'])} (target "
                                           f"{fmt(before[(c['layer'], c['head'])]['teacher_distance'])})"
                                           for c in first["changes"]) + " |")
        for r, j in runs:
            after = {(h["layer"], h["head"]): h for h in j["heads"]}
            fx = j["fix"]
            print(f"| {label[r]} | {fx['stage2_steps']} | {fx['ppl_after']:.5g} | " +
                  " | ".join(f"{fmt(after[(c['layer'], c['head'])]['idle'])} / {fmt(after[(c['layer'], c['head'])]['p50'])}"
                             for c in fx["changes"]) + " |")
    print()
    for n, ws in worst.items():
        if not ws:
            print(f"- {n}: no head flagged")
            continue
        print(f"- {n}: " + "; ".join(f"layer {x['layer']} head {x['head']} ({x['reasons']})" for x in ws))
    if per_layer:
        layers(files, names)
    if max_heads:
        print()
        pictures(files, names, max_heads)


if __name__ == "__main__":
    sys.exit(main())
