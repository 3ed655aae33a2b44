#!/usr/bin/env python3
"""Markdown tables (and an SVG of the curves) from graft's --json outputs, so
that the numbers in docs/ are never typed by hand.

  report.py ablate FILE.json [...]          one table per file (graft ablate --json)
  report.py race FILE.json [...] [--svg OUT.svg]
                                            races (graft race --json): summary, the loss
                                            curves at fixed fractions of the budget, the
                                            held-out perplexities; --svg draws every curve
  report.py docs DOC.md [...] [--write]     every block between `<!-- report: ARGS -->` and
                                            `<!-- /report -->` must equal what `report.py ARGS`
                                            prints (paths from the repository root); --write
                                            regenerates them (and their SVGs) instead
"""
import io
import os
import re
import json
import math
import sys


def num(x, digits=3):
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    if abs(x) >= 1000:
        return f"{x:,.1f}"
    return f"{x:.{digits}f}"


def stage1_label(row):
    parts = row.get("stage1") or []
    label = ",".join(parts) if parts else "none"
    if row.get("half_life_override") is not None:
        label = f"half-life {row['half_life_override']:g} (A_log 0)" + ("" if not parts else f" + {label}")
    return label


def ablate(path):
    j = json.load(open(path))
    m = j["meta"]
    out = [f"teacher perplexity {j['teacher_ppl']:.4f}; Stage 2 {m['stage2_steps']} steps, keep-best "
           f"{m['keep_best']}, decay distance {m['decay_distance']}, {m['students']} students, "
           f"{m['evaluations']} evaluations; {m['seconds_total']:.1f} s (students {m['seconds_build']:.1f} s, "
           f"rows {m['seconds_rows']:.1f} s) on {j['memory']['device']}", "",
           "| strategy | keep | kept layers | init | stage1 | ppl | half-life mean | median | max |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in j["rows"]:
        hl = r["half_life"]
        out.append(f"| {r['strategy']} | {r['keep']:.2f} | {','.join(map(str, r['kept_layers']))} | {r['init']} | "
                   f"{stage1_label(r)} | {num(r['ppl'])} | {num(hl['mean'], 2)} | {num(hl['median'], 2)} | "
                   f"{num(hl['max'], 2)} |")
    return "\n".join(out)


def smooth(curve, w):
    ys = [p[1] for p in curve]
    out, s = [], 0.0
    for i, y in enumerate(ys):
        s += y
        if i >= w:
            s -= ys[i - w]
        out.append(s / min(i + 1, w))
    return out


def race_tables(races):
    fr = [0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0]
    summ = ["| lr mixer | lr rest | init | tokens | first-step loss | final loss | target | tokens to target | ratio | "
            "held-out ppl | build s | train s | train tok/s |", "|---" * 13 + "|"]
    curves = ["| lr mixer | init | " + " | ".join(f"{int(f * 100)} %" for f in fr) + " |", "|---" * (2 + len(fr)) + "|"]
    evals = []
    for j in races:
        w = j["smoothing_window"]
        for r in j["runs"]:
            c = r["curve"]
            n = c[-1][0]
            ttt = j["tokens_to_target"].get(r["init"])
            ratio = "" if r is j["runs"][0] else ("undefined" if j["ratio"] is None else num(j["ratio"], 2))
            start = c[0][1]  # the loss of the first step's batch, before its update
            sm = smooth(c, w)
            summ.append(f"| {j['lr_mixer']:g} | {j['lr_rest']:g} | {r['init']} | {n:,} | {num(start, 4)} | "
                        f"{num(sm[-1], 4)} | {num(j['target_loss'], 4)} | {'never' if ttt is None else f'{int(ttt):,}'} | "
                        f"{ratio} | {num(r['final_eval_ppl'], 2)} | {r['build_seconds']:.1f} | "
                        f"{r['train_seconds']:.1f} | {n / r['train_seconds']:,.0f} |")
            cells = []
            for f in fr:
                i = min(len(c) - 1, max(0, int(round(f * len(c))) - 1))
                cells.append(num(sm[i], 4))
            curves.append(f"| {j['lr_mixer']:g} | {r['init']} | " + " | ".join(cells) + " |")
            evals.append((j["lr_mixer"], r["init"], r.get("eval_curve", [])))
    lead = []
    for j in races:  # where the second run's smoothed loss stops being below the baseline's
        w = j["smoothing_window"]
        a, b = (smooth(r["curve"], w) for r in j["runs"][:2])
        xs = [p[0] for p in j["runs"][0]["curve"]]
        below = [y2 < y1 for y1, y2 in zip(a, b)]
        name = j["runs"][1]["init"]
        if all(below):
            lead.append(f"- lr {j['lr_mixer']:g}: {name} stays below {j['runs'][0]['init']} over the whole budget")
        else:
            last = max(i for i, v in enumerate(below) if not v)
            first_cross = below.index(False) if False in below else None
            lead.append(f"- lr {j['lr_mixer']:g}: {name} below {j['runs'][0]['init']} until {xs[first_cross]:,} tokens "
                        f"({100 * xs[first_cross] / xs[-1]:.0f} % of the budget)"
                        + ("" if all(not v for v in below[first_cross:]) else
                           f"; the curves cross again, the last time at {xs[last]:,}"))
    ev = ["| lr mixer | init | held-out perplexity at tokens (M) |", "|---|---|---|"]
    for lr, init, e in evals:
        ev.append(f"| {lr:g} | {init} | " + ", ".join(f"{t / 1e6:.1f}: {p:.2f}" for t, p in e) + " |")
    head = (f"budget {races[0]['tokens_budget']:,} tokens per init, ctx {races[0]['ctx']}, batch {races[0]['batch']} x "
            f"accum {races[0]['accum']}, layers {races[0]['converted_layers']} converted ({races[0].get('strategy', 'folders')}"
            f" {races[0].get('keep', '')}), on {races[0]['memory']['device']}; curves are trailing means over "
            f"{races[0]['smoothing_window']} steps")
    return "\n".join([head, "", *summ, "", "Loss (trailing mean) at fractions of the budget:", "", *curves, "",
                      "Lead (trailing means):", "", *lead, "", *ev])


def svg(races, path):
    W, H, L, B = 720, 420, 60, 40
    series = []
    for j in races:
        for r in j["runs"]:
            # a window of 1/60 of the steps: the race's (1/10) averages the first tenth into a slope
            sm = smooth(r["curve"], max(1, len(r["curve"]) // 60))
            series.append((f"lr {j['lr_mixer']:g} {r['init']}", [p[0] for p in r["curve"]], sm,
                           r["init"] != j["runs"][0]["init"]))
    xmax = max(max(xs) for _, xs, _, _ in series)
    ys = [y for _, _, s, _ in series for y in s if math.isfinite(y) and y > 0]
    ylo, yhi = math.log(min(ys)), math.log(max(ys))  # log scale: losses span more than a decade
    colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
    px = lambda x: L + (W - L - 10) * x / xmax
    py = lambda y: 10 + (H - B - 10) * (1 - (math.log(max(y, 1e-12)) - ylo) / (yhi - ylo or 1))
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="11">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<line x1="{L}" y1="{H - B}" x2="{W - 10}" y2="{H - B}" stroke="black"/>',
           f'<line x1="{L}" y1="10" x2="{L}" y2="{H - B}" stroke="black"/>']
    for k in range(6):
        x = xmax * k / 5
        out.append(f'<text x="{px(x):.0f}" y="{H - B + 15}" text-anchor="middle">{x / 1e6:.1f}M</text>')
        y = math.exp(ylo + (yhi - ylo) * k / 5)
        out.append(f'<text x="{L - 5}" y="{py(y) + 4:.0f}" text-anchor="end">{y:.3g}</text>')
    out.append(f'<text x="{(L + W) / 2:.0f}" y="{H - 5}" text-anchor="middle">training tokens</text>')
    out.append(f'<text x="12" y="{(H - B) / 2:.0f}" transform="rotate(-90 12 {(H - B) / 2:.0f})" '
               f'text-anchor="middle">loss (trailing mean over 1/60 of the steps, log scale)</text>')
    for i, (name, xs, sm, dashed) in enumerate(series):
        col = colors[i % len(colors)]
        pts = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in zip(xs, sm))
        dash = ' stroke-dasharray="5,3"' if dashed else ""
        out.append(f'<polyline fill="none" stroke="{col}" stroke-width="1.3"{dash} points="{pts}"/>')
        out.append(f'<text x="{W - 220}" y="{24 + 14 * i}" fill="{col}">{"- - " if dashed else "—— "}{name}</text>')
    out.append("</svg>")
    open(path, "w").write("\n".join(out) + "\n")


BLOCK = re.compile(r"(<!-- report: (.*?) -->\n)(.*?)(<!-- /report -->)", re.S)


def docs(paths, write):
    """0 when every report block is what its arguments print now; else 1."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    bad = 0
    for path in paths:
        text = open(path).read()

        def regen(m):
            nonlocal bad
            args = [a if a.startswith("-") or a in ("ablate", "race") else os.path.join(root, a) for a in m.group(2).split()]
            if not write and "--svg" in args:  # compare the SVG too, without touching it
                i = args.index("--svg") + 1
                want, args[i] = args[i], args[i] + ".check"
            out = io.StringIO()
            stdout, sys.stdout = sys.stdout, out
            try:
                run(["report.py", *args])
            finally:
                sys.stdout = stdout
            if not write and "--svg" in m.group(2).split():
                same = open(args[i]).read() == open(want).read() if os.path.exists(want) else False
                os.remove(args[i])
                if not same:
                    print(f"{path}: {want} differs from what `report.py {m.group(2)}` draws", file=sys.stderr)
                    bad = 1
            block = out.getvalue()
            if block != m.group(3):
                bad = 1
                if not write:
                    print(f"{path}: the block of `report.py {m.group(2)}` differs from what it prints now", file=sys.stderr)
            return m.group(1) + block + m.group(4)

        new = BLOCK.sub(regen, text)
        if write and new != text:
            open(path, "w").write(new)
    return 0 if write else bad


def run(argv):
    if len(argv) >= 3 and argv[1] == "docs":
        return docs([a for a in argv[2:] if a != "--write"], "--write" in argv)
    if len(argv) < 3 or argv[1] not in ("ablate", "race"):
        print(__doc__, file=sys.stderr)
        return 2
    files = [a for a in argv[2:] if not a.startswith("--")]
    if argv[1] == "ablate":
        print("\n\n".join(ablate(f) for f in files))
        return 0
    out_svg = argv[argv.index("--svg") + 1] if "--svg" in argv else None
    if out_svg:
        files.remove(out_svg)
    races = [json.load(open(f)) for f in files]
    print(race_tables(races))
    if out_svg:
        svg(races, out_svg)
    return 0


if __name__ == "__main__":
    sys.exit(run(sys.argv))
