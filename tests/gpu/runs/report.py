#!/usr/bin/env python3
"""Markdown tables (and an SVG of the curves) from graft's --json outputs, so
that the numbers in docs/ are never typed by hand.

  report.py ablate FILE.json [...]          one table per file (graft ablate --json)
  report.py race FILE.json [...] [--svg OUT.svg]
                                            races (graft race --json): summary, the loss
                                            curves at fixed fractions of the budget, the
                                            held-out perplexities; --svg draws every curve
  report.py race ... --png OUT.png         also a PNG of the curves (matplotlib; never compared
                                            by `docs`: its bytes vary with the version)
  report.py teacher FILE.json               the teacher's perplexity by path (tests/gpu/paper/run.sh teacher)
  report.py paper-ablate FILE.json          the six inits x sigma fits x strategies/ratios as one table,
                                            the half-lives at 50 % uniform beside the paper's X-ray numbers
  report.py components FILE.json           the Stage 1 component table (ablate --stage1-subsets)
  report.py verdict ABLATE.json RACE.json [...]
                                            METHOD.md section 11's claims against the runs
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
    if row.get("sigma_fit") == "scaled":  # absent in runs before the choice (they fitted scaled)
        label += " (sigma scaled)"
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
    teach = [f"- lr {j['lr_mixer']:g}: teacher {num(j['teacher_eval_ppl'], 2)} on the same {j['eval_seqs']} held-out "
             f"sequences" for j in races if "teacher_eval_ppl" in j]
    if teach:
        ev += ["", "Teacher perplexity on the held-out sequences the students are scored on:", "", *teach]
    return "\n".join([head, "", *summ, "", "Loss (trailing mean) at fractions of the budget:", "", *curves, "",
                      "Lead (trailing means):", "", *lead, "", *ev])


def png(races, path):
    """The curves of svg() as a PNG (matplotlib; the GPU machine's image has it)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    for j in races:
        for r in j["runs"]:
            sm = smooth(r["curve"], max(1, len(r["curve"]) // 60))
            ax.plot([p[0] / 1e6 for p in r["curve"]], sm, "--" if r is not j["runs"][0] else "-", lw=1.2,
                    label=f"lr {j['lr_mixer']:g} {r['init']}")
    ax.set_yscale("log")
    ax.set_xlabel("training tokens (M)")
    ax.set_ylabel("loss (trailing mean over 1/60 of the steps)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)


def teacher(path):
    j = json.load(open(path))
    rows = j["rows"]
    ref = {r["text"]: r for r in rows if r["path"] == "graft cpu f32"}
    ref.update({r["text"]: r for r in rows if r["path"] == "graft cuda f32" and r["text"] not in ref})
    out = [f"{j['teacher']}; {j['text']}: small {j['text_bytes']['small']:,} bytes, big {j['text_bytes']['big']:,} bytes", "",
           "| text | ctx | path | tokens | ppl | rel. to " + "graft f32 | seconds |", "|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["text"] != "small", r["path"])):
        b = ref.get(r["text"])
        rel = "" if b is None or b is r else f"{(r['ppl'] - b['ppl']) / b['ppl']:+.2e}"
        out.append(f"| {r['text']} | {r['ctx']} | {r['path']} | {r['tokens']:,} | {r['ppl']:.6f} | {rel} | "
                   + (f"{r['seconds']:.1f}" if r.get("seconds") is not None else "") + " |")
    return "\n".join(out)


# the paper's idle half-lives across heads (METHOD.md section 11)
PAPER_HL = {"random": (131.9, 10.3, 3.06e4), "taylor-only": (69.3, 71.0, 128.4), "taylor-calibrate": (70.0, 72.0, 127.5)}
INITS = ["random", "zero-gate", "small-gate", "taylor-only", "align-only", "taylor-calibrate"]


def fit_of(r):
    """The value-scale fit of a row; rows written before graft recorded it fitted `scaled`."""
    if "sigma_fit" not in r:
        return "scaled" if "sigma" in (r.get("stage1") or []) else "-"
    return r["sigma_fit"] or "-"


def paper_ablate(path):
    j = json.load(open(path))
    rows = [r for r in j["rows"] if r["half_life_override"] is None]
    cols = []
    for r in rows:
        c = (r["strategy"], r["keep"])
        if c not in cols:
            cols.append(c)
    keys = []
    for r in rows:
        k = (r["init"], fit_of(r))
        if k not in keys:
            keys.append(k)
    keys.sort(key=lambda k: (INITS.index(k[0]) if k[0] in INITS else 99, k[1]))
    m = j["meta"]
    out = [f"teacher perplexity {j['teacher_ppl']:.4f}; Stage 2 {m['stage2_steps']} steps, keep-best {m['keep_best']}; "
           f"{m['students']} students, {m['seconds_total']:.1f} s on {j['memory']['device']}", "",
           "| init | sigma fit | " + " | ".join(f"{s} {k * 100:.0f} %" for s, k in cols) + " |", "|---" * (2 + len(cols)) + "|"]
    for k in keys:
        cells = []
        for c in cols:
            v = [r["ppl"] for r in rows if (r["init"], fit_of(r)) == k and (r["strategy"], r["keep"]) == c]
            cells.append(num(v[0], 2) if v else "")
        out.append(f"| {k[0]} | {k[1]} | " + " | ".join(cells) + " |")
    hl_rows = [r for r in rows if r["strategy"] == "uniform" and abs(r["keep"] - 0.5) < 1e-9]
    if hl_rows:
        out += ["", "Idle half-life across converted heads, uniform 50 % (tokens; the paper's in brackets):", "",
                "| init | sigma fit | mean | median | max | paper mean / median / max |", "|---|---|---|---|---|---|"]
        for k in keys:
            v = [r for r in hl_rows if (r["init"], fit_of(r)) == k]
            if not v:
                continue
            hl = v[0]["half_life"]
            p = PAPER_HL.get(k[0])
            out.append(f"| {k[0]} | {k[1]} | {num(hl['mean'], 1)} | {num(hl['median'], 1)} | {num(hl['max'], 1)} | "
                       + ("" if p is None else f"{p[0]:g} / {p[1]:g} / {p[2]:g}") + " |")
    return "\n".join(out)


def components(path):
    j = json.load(open(path))
    rows = [r for r in j["rows"] if r["init"] == "taylor-calibrate" and r["half_life_override"] is None]
    align = {r["keep"]: r["ppl"] for r in j["rows"] if r["init"] == "align-only"}
    keeps = sorted({r["keep"] for r in rows})
    fits = [f for f in ("reference", "scaled") if any(r.get("sigma_fit") == f for r in rows)] or ["-"]
    sets = []
    for r in rows:
        s = tuple(r["stage1"])
        if s not in sets:
            sets.append(s)
    full = ("decay", "beta", "sigma", "gate")
    def name(s):
        if s == full:
            return "full"
        if not s:
            return "none (= align-only)"
        if len(s) == 1:
            return f"{s[0]} alone"
        if len(s) == 3:
            return f"without {[c for c in full if c not in s][0]}"
        return ",".join(s)
    head = [f"{k * 100:.0f} % {f}" for k in keeps for f in fits]
    out = [f"taylor-calibrate with Stage 1 parts, uniform; perplexity (Stage 2 {j['meta']['stage2_steps']} steps); "
           f"a set without sigma is the same under both fits", "",
           "| Stage 1 | " + " | ".join(head) + " |", "|---" * (1 + len(head)) + "|"]
    for s in sets:
        cells = []
        for k in keeps:
            for f in fits:
                v = [r["ppl"] for r in rows if tuple(r["stage1"]) == s and r["keep"] == k and
                     (fit_of(r) in (f, "-") or "sigma" not in s)]
                cells.append(num(v[0], 2) if v else "")
        out.append(f"| {name(s)} | " + " | ".join(cells) + " |")
    if align:
        out.append(f"| align-only | " + " | ".join(num(align.get(k), 2) for k in keeps for f in fits) + " |")
    return "\n".join(out)


def verdict(ablate_path, race_paths):
    a = json.load(open(ablate_path))
    rows = [r for r in a["rows"] if r["half_life_override"] is None]
    if any(fit_of(r) == "reference" for r in rows):  # the default fit; a run without the choice has one fit
        rows = [r for r in rows if fit_of(r) in ("reference", "-")]
    def ppl(init, strat, keep):
        v = [r["ppl"] for r in rows if r["init"] == init and r["strategy"] == strat and abs(r["keep"] - keep) < 1e-9]
        return v[0] if v else None
    def hl(init):
        v = [r["half_life"] for r in rows if r["init"] == init and r["strategy"] == "uniform" and abs(r["keep"] - 0.5) < 1e-9]
        return v[0] if v else None
    out = ["| claim (METHOD.md section 11) | criterion | graft measured | verdict |", "|---|---|---|---|"]
    for keep, paper in ((0.5, "random 2892.9, Taylor-Calibrate 75.2"), (0.25, "random 951,064, Taylor-Calibrate 210.9")):
        r, t = ppl("random", "uniform", keep), ppl("taylor-calibrate", "uniform", keep)
        ok = None if r is None or t is None else t < r
        out.append(f"| Qwen2.5-1.5B uniform {keep * 100:.0f} % zero-shot ppl: {paper} | taylor-calibrate below random | "
                   f"random {num(r, 1)}, taylor-calibrate {num(t, 1)} | "
                   f"{'not measured' if ok is None else 'holds' if ok else 'does not hold'} |")
    order = [(i, ppl(i, "uniform", 0.25)) for i in ("random", "zero-gate", "taylor-only", "align-only", "taylor-calibrate")]
    ok = None if any(v is None for _, v in order) else (
        order[4][1] < order[3][1] < min(order[1][1], order[2][1]) and max(order[1][1], order[2][1]) < order[0][1])
    out.append("| uniform 25 % ablation (paper on Qwen2.5-3B): random > zero-gate ~ taylor-only > align-only > "
               "taylor-calibrate | the same order at 1.5B | " + ", ".join(f"{i} {num(v, 1)}" for i, v in order) +
               f" | {'not measured' if ok is None else 'holds' if ok else 'does not hold'} |")
    hr, ht = hl("random"), hl("taylor-calibrate")
    ok = None if hr is None or ht is None else (ht["max"] < hr["max"] and abs(ht["mean"] - ht["median"]) < 0.5 * ht["median"])
    out.append("| idle half-life: random heavy-tailed (mean 131.9, median 10.3, max 3.06e4), taylor-calibrate "
               "concentrated (70.0 / 72.0 / 127.5) | taylor-calibrate's max below random's, its mean within 50 % "
               "of its median | " + ("" if hr is None or ht is None else
                                      f"random {num(hr['mean'], 1)} / {num(hr['median'], 1)} / {num(hr['max'], 1)}; "
                                      f"taylor-calibrate {num(ht['mean'], 1)} / {num(ht['median'], 1)} / {num(ht['max'], 1)}")
               + f" | {'not measured' if ok is None else 'holds' if ok else 'does not hold'} |")
    for p in race_paths:
        j = json.load(open(p))
        base, tc = j["runs"][0]["init"], j["runs"][1]["init"]
        ratio = j["ratio"]
        out.append(f"| tokens to the same target, random vs Taylor-Calibrate, uniform 50 %: 9.0x (lr {j['lr_mixer']:g}, "
                   f"{j['tokens_budget']:,} tokens per run) | ratio above 1 ({tc} reaches {base}'s final loss sooner) | "
                   f"{'never reached' if ratio is None else f'{ratio:.2f}x'} | "
                   f"{'does not hold' if ratio is None or ratio <= 1 else 'holds'} |")
    out.append("| tokens-to-target at ar / ga-s2 (9.2x, 8.9x) and on 3B / 8B teachers | - | - | not measured (one "
               "race shape in the device budget; no 3B / 8B teacher) |")
    out.append("| Qwen3-8B short benchmarks, RULER | - | - | not measured (graft runs no benchmark suites) |")
    return "\n".join(out)


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


COMMANDS = ("ablate", "race", "teacher", "paper-ablate", "components", "verdict")
BLOCK = re.compile(r"(<!-- report: (.*?) -->\n)(.*?)(<!-- /report -->)", re.S)


def docs(paths, write):
    """0 when every report block is what its arguments print now; else 1."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    bad = 0
    for path in paths:
        text = open(path).read()

        def regen(m):
            nonlocal bad
            args = [a if a.startswith("-") or a in COMMANDS else os.path.join(root, a) for a in m.group(2).split()]
            if "--png" in args and not write:  # a PNG is drawn on --write only (not byte-reproducible)
                i = args.index("--png")
                del args[i:i + 2]
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
    if len(argv) < 3 or argv[1] not in COMMANDS:
        print(__doc__, file=sys.stderr)
        return 2
    files = [a for a in argv[2:] if not a.startswith("--")]
    one = {"ablate": ablate, "teacher": teacher, "paper-ablate": paper_ablate, "components": components}
    if argv[1] in one:
        print("\n\n".join(one[argv[1]](f) for f in files))
        return 0
    if argv[1] == "verdict":
        print(verdict(files[0], files[1:]))
        return 0
    out_svg = argv[argv.index("--svg") + 1] if "--svg" in argv else None
    out_png = argv[argv.index("--png") + 1] if "--png" in argv else None
    for o in (out_svg, out_png):
        if o:
            files.remove(o)
    races = [json.load(open(f)) for f in files]
    print(race_tables(races))
    if out_svg:
        svg(races, out_svg)
    if out_png:
        try:
            png(races, out_png)
        except ImportError:
            print(f"report.py: --png needs matplotlib (pip install matplotlib; the GPU machine's python has it); "
                  f"{out_png} not drawn", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(run(sys.argv))
