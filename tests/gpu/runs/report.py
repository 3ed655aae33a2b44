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
  report.py race ... --kept                 also where each run's trailing mean reaches the target and stays
                                            there (a curve that dips early, rises and comes back reaches it twice)
  report.py race ... --no-speed             without the seconds and tokens/s columns (a race that shared
                                            its GPU with another job: its speed is not a measurement)
  report.py race ... --recall               also each run's recall probes (graft race --recall-every: recall_curve,
                                            and the last probe's cells by length)
  report.py teacher FILE.json [REF.json]    the teacher's perplexity by path (tests/gpu/paper/run.sh teacher); REF.json:
                                            rows of the same schema from another program (transformers),
                                            set against each of graft's paths
  report.py paper-ablate FILE.json [...]    the six inits x sigma fits x strategies/ratios as one table per file,
                                            the half-lives at 50 % uniform beside the paper's X-ray numbers;
                                            --one-table: the files' rows in one table (runs of the same split that
                                            differ in their sigma fits; a student in two files is shown once)
  report.py stats FILE.json [--png OUT.png] per layer, the range over heads of graft stats --json's statistics;
                                            --png: heat maps of mean distance, concentration, sink share
  report.py components FILE.json [...]     the Stage 1 component table (ablate --stage1-subsets); several
                                            files (one per sigma fit) make one table
  report.py verdict ABLATE.json [COMPONENTS.json ...] [RACE.json ...]
                                            METHOD.md section 11's claims against the runs (a file with
                                            "runs" is a race, one with "rows" a Stage 1 component run)
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
    if row.get("sigma_fit") in ("scaled", "gated") and "sigma" in parts:  # absent in runs before the choice (scaled)
        label += f" (sigma {row['sigma_fit']})"
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


def trailing(c, i, w):
    """graft's trailing mean of a loss curve at step i over w steps (engine/train/race.c: the same sum order)."""
    lo = max(0, i - w + 1)
    return sum(p[1] for p in c[lo:i + 1]) / (i - lo + 1)


def tokens_to_target(j, r):
    """Run r's tokens to the race's target by graft's rule (engine/train/race.c): the first step, from the first
    full window of the race's smoothing window on, whose trailing mean is at or below the target; None if never.
    Computed from the curve, not read from the JSON: a race written before that rule counted shorter windows
    at the first steps too. The curve's losses went through JSON, so the comparison allows 1e-12 relative (the
    baseline's own last mean is the target and must count as reached)."""
    w, c, t = j["smoothing_window"], r["curve"], j["target_loss"] * (1 + 1e-12)
    for i in range(w - 1, len(c)):
        if trailing(c, i, w) <= t:  # NaN is never at or below
            return c[i][0]
    return None


def run_ratio(j, r):
    """Tokens-to-target of the race's baseline (its first run) over run r's: how many times fewer tokens r
    needs to reach the baseline's final smoothed loss (graft's own `ratio` is the second run's). None when r
    never reaches the target."""
    base, t = tokens_to_target(j, j["runs"][0]), tokens_to_target(j, r)
    return None if base is None or t is None or t <= 0 else base / t


def kept_tokens(j, r):
    """Tokens from which run r's trailing mean (graft's window and sum, engine/train/race.c) stays at or below the
    target to the end; None when its last one is above it. graft's tokens_to_target is the first step at or below
    it. The curve's losses went through JSON, so the comparison allows 1e-12 relative (the baseline's own last
    mean is the target and must count as reached)."""
    w, c, t = j["smoothing_window"], r["curve"], j["target_loss"] * (1 + 1e-12)
    kept = None
    for i in range(len(c) - 1, -1, -1):
        if not trailing(c, i, w) <= t:  # NaN counts as above
            break
        kept = c[i][0]
    return kept


def kept_ratio(j, r):
    """The baseline's kept tokens over run r's (as run_ratio, with kept_tokens); None when either is None."""
    base, t = kept_tokens(j, j["runs"][0]), kept_tokens(j, r)
    return None if base is None or t is None or t <= 0 else base / t


def recall_tables(races):
    """Each run's recall probes (graft race --recall-every): the mean accuracy over the probe's cells at each
    probe (recall_curve) and the last probe's cells by length; the head names the tasks, lengths, depths and
    prompts a point from the cells."""
    cells = [c for j in races for r in j["runs"] for _, cs in r.get("recall_cells") or [] for c in cs]
    if not cells:
        return []
    first = [cs for j in races for r in j["runs"] for _, cs in (r.get("recall_cells") or [])[:1]][0]
    uniq = lambda k: sorted({c[k] for c in cells}, key=lambda v: (isinstance(v, str), v))
    out = ["Recall probes (graft's RULER-style probe, not RULER: tasks " + ", ".join(uniq("task")) + " at " +
           ", ".join(f"{v:,}" for v in uniq("length")) + " tokens, depths " + "/".join(f"{v:g}" for v in uniq("depth")) +
           f" %, {sum(c['n'] for c in first)} prompts a point; the mean of the cells' accuracies):", "",
           "| lr mixer | init | recall at tokens (M) | last probe by length |", "|---|---|---|---|"]
    for j in races:
        for r in j["runs"]:
            rc = r.get("recall_curve") or []
            last = (r.get("recall_cells") or [[None, []]])[-1][1]
            by = {}
            for c in last:
                by.setdefault(c["length"], []).append(c["accuracy"])
            out.append(f"| {j['lr_mixer']:g} | {r['init']} | " +
                       ", ".join(f"{t / 1e6:.1f}: {100 * a:.1f} %" for t, a in rc) + " | " +
                       ", ".join(f"{n:,}: {100 * sum(v) / len(v):.1f} %" for n, v in sorted(by.items())) + " |")
    return ["", *out]


def race_tables(races, kept=False, speed=True, recall=False):
    fr = [0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0]
    summ = ["| lr mixer | lr rest | init | tokens | first-step loss | final loss | target | tokens to target | ratio | "
            "held-out ppl |" + (" build s | train s | train tok/s |" if speed else ""), "|---" * (13 if speed else 10) + "|"]
    curves = ["| lr mixer | init | " + " | ".join(f"{int(f * 100)} %" for f in fr) + " |", "|---" * (2 + len(fr)) + "|"]
    evals = []
    for j in races:
        w = j["smoothing_window"]
        for r in j["runs"]:
            c = r["curve"]
            n = c[-1][0]
            ttt = tokens_to_target(j, r)
            ratio = "" if r is j["runs"][0] else num(run_ratio(j, r), 2) if run_ratio(j, r) is not None else "undefined"
            start = c[0][1]  # the loss of the first step's batch, before its update
            sm = smooth(c, w)
            summ.append(f"| {j['lr_mixer']:g} | {j['lr_rest']:g} | {r['init']} | {n:,} | {num(start, 4)} | "
                        f"{num(sm[-1], 4)} | {num(j['target_loss'], 4)} | {'never' if ttt is None else f'{int(ttt):,}'} | "
                        f"{ratio} | {num(r['final_eval_ppl'], 2)} |" +
                        (f" {r['build_seconds']:.1f} | {r['train_seconds']:.1f} | {n / r['train_seconds']:,.0f} |"
                         if speed else ""))
            cells = []
            for f in fr:
                i = min(len(c) - 1, max(0, int(round(f * len(c))) - 1))
                cells.append(num(sm[i], 4))
            curves.append(f"| {j['lr_mixer']:g} | {r['init']} | " + " | ".join(cells) + " |")
            evals.append((j["lr_mixer"], r["init"], r.get("eval_curve", [])))
    old = [f"{r['init']} {'never' if v is None else f'{int(v):,}'}" for j in races for r in j["runs"]
           for v in [j["tokens_to_target"].get(r["init"])] if v != tokens_to_target(j, r)]
    if old:  # a race written before graft scored runs from their first full window only
        summ += ["", "Tokens to target from the curves by graft's rule (from the first full window); the JSON's own "
                 "tokens_to_target, written by an older graft, says: " + ", ".join(old)]
    lead = []
    for j, other in ((j, o) for j in races for o in j["runs"][1:]):  # where a run stops being below the baseline
        w = j["smoothing_window"]
        a, b = smooth(j["runs"][0]["curve"], w), smooth(other["curve"], w)
        xs = [p[0] for p in j["runs"][0]["curve"]]
        below = [y2 < y1 for y1, y2 in zip(a, b)]
        name = other["init"]
        if all(below):
            lead.append(f"- lr {j['lr_mixer']:g}: {name} stays below {j['runs'][0]['init']} over the whole budget")
        else:
            last = max(i for i, v in enumerate(below) if not v)
            first_cross = below.index(False) if False in below else None
            lead.append(f"- lr {j['lr_mixer']:g}: {name} below {j['runs'][0]['init']} until {xs[first_cross]:,} tokens "
                        f"({100 * xs[first_cross] / xs[-1]:.0f} % of the budget)"
                        + ("" if all(not v for v in below[first_cross:]) else
                           f"; the curves cross again, the last time at {xs[last]:,}"))
    if kept:
        lead += ["", "Target reached and kept (the trailing mean at or below the target from then to the end; "
                 "ratio: the baseline's tokens so counted over the run's):", ""]
        for j in races:
            for r in j["runs"]:
                k, first = kept_tokens(j, r), tokens_to_target(j, r)
                kr = None if r is j["runs"][0] else kept_ratio(j, r)
                lead.append(f"- lr {j['lr_mixer']:g}: {r['init']} first at "
                            f"{'never' if first is None else f'{int(first):,}'}, kept from "
                            f"{'never' if k is None else f'{k:,}'}" + ("" if kr is None else f" (ratio {kr:.2f})"))
    ev = ["| lr mixer | init | held-out perplexity at tokens (M) |", "|---|---|---|"]
    for lr, init, e in evals:
        ev.append(f"| {lr:g} | {init} | " + ", ".join(f"{t / 1e6:.1f}: {p:.2f}" for t, p in e) + " |")
    r0 = races[0]
    # a race of student folders (graft convert) records no strategy: its layers are each folder's own
    layers = (f"layers {r0['converted_layers']} converted ({r0['strategy']} {r0.get('keep', '')})" if "strategy" in r0
              else f"students from folders (converted layers {r0['converted_layers']})")
    head = (f"budget {r0['tokens_budget']:,} tokens per init, ctx {r0['ctx']}, batch {r0['batch']} x "
            f"accum {r0['accum']}, {layers}, on {r0['memory']['device']}; curves are trailing means over "
            f"{r0['smoothing_window']} steps")
    teach = [f"- lr {j['lr_mixer']:g}: teacher {num(j['teacher_eval_ppl'], 2)} on the same {j['eval_seqs']} held-out "
             f"sequences" for j in races if "teacher_eval_ppl" in j]
    if teach:
        ev += ["", "Teacher perplexity on the held-out sequences the students are scored on:", "", *teach]
    if recall:
        ev += recall_tables(races)
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
        ax.axhline(j["target_loss"], color="grey", lw=0.8, ls=":",
                   label=f"lr {j['lr_mixer']:g} target: {j['runs'][0]['init']}'s final loss")
    ax.set_yscale("log")
    ax.set_xlabel("training tokens (M)")
    ax.set_ylabel("loss (trailing mean over 1/60 of the steps)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)


def teacher(paths):
    """One table over every file's rows (the first file's header): graft's runs and, from a second file with the
    same row schema, the transformers reference (tests/gpu/runs/hf_gguf_ppl.py), each row relative to graft f32;
    with a reference, a second table sets it against each of graft's paths."""
    js = [json.load(open(p)) for p in paths]
    j, rows = js[0], [r for x in js for r in x["rows"]]
    ref = {r["text"]: r for r in rows if r["path"] == "graft cpu f32"}
    ref.update({r["text"]: r for r in rows if r["path"] == "graft cuda f32" and r["text"] not in ref})
    out = [f"{j['teacher']}; {j['text']}: small {j['text_bytes']['small']:,} bytes, big {j['text_bytes']['big']:,} bytes", "",
           "| text | ctx | path | tokens | ppl | rel. to " + "graft f32 | seconds |", "|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["text"] != "small", r["path"])):
        b = ref.get(r["text"])
        rel = "" if b is None or b is r else f"{(r['ppl'] - b['ppl']) / b['ppl']:+.2e}"
        out.append(f"| {r['text']} | {r['ctx']} | {r['path']} | {r['tokens']:,} | {r['ppl']:.6f} | {rel} | "
                   + (f"{r['seconds']:.1f}" if r.get("seconds") is not None else "") + " |")
    hf = [r for r in rows if not r["path"].startswith("graft ")]
    if hf:
        out += ["", "The reference against each of graft's paths on the same text and windows: (reference - graft) / "
                "graft, and whether the predicted tokens count the same", "",
                "| text | ctx | reference | ppl | graft path | graft ppl | rel. difference | tokens equal |",
                "|---|---|---|---|---|---|---|---|"]
        for h in sorted(hf, key=lambda r: (r["text"] != "small", r["path"])):
            for g in sorted((r for r in rows if r["path"].startswith("graft ") and r["text"] == h["text"]
                             and r["ctx"] == h["ctx"]), key=lambda r: r["path"]):
                out.append(f"| {h['text']} | {h['ctx']} | {h['path']} | {h['ppl']:.6f} | {g['path']} | {g['ppl']:.6f} | "
                           f"{(h['ppl'] - g['ppl']) / g['ppl']:+.2e} | {'yes' if h['tokens'] == g['tokens'] else 'no'} |")
    return "\n".join(out)


# concentration is min-max scaled within each layer (METHOD.md section 3), so its per-layer range is always
# 0 - 1: the heat map shows it, the table does not
STATS_FIELDS = (("mean_distance", "mean distance"), ("sink_share", "sink share"), ("concentration", "concentration"))
STATS_TABLE = (("mean_distance", "mean distance (tokens)"), ("entropy", "entropy (nats)"), ("sink_share", "sink share"),
               ("output_rms", "output RMS"))


def stats(path):
    """Per layer, the range over its heads of `graft stats --json`'s per-head statistics."""
    j = json.load(open(path))
    out = [f"{j['sequences']} sequences x {j['ctx']} tokens, {len(j['layers'])} layers x "
           f"{len(j['layers'][0]['heads'])} query heads, on {j['memory']['device']}; each cell: min - max over the "
           f"layer's heads", "",
           "| layer | " + " | ".join(n for _, n in STATS_TABLE) + " |", "|---" * (1 + len(STATS_TABLE)) + "|"]
    for l in j["layers"]:
        cells = []
        for k, _ in STATS_TABLE:
            v = [h[k] for h in l["heads"]]
            cells.append(f"{num(min(v), 2)} - {num(max(v), 2)}")
        out.append(f"| {l['layer']} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def stats_png(path, out_png):
    """Heat maps (layer x head) of mean distance, concentration and sink share."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    j = json.load(open(path))
    fig, axes = plt.subplots(1, 3, figsize=(11, 5.5), dpi=100)
    for ax, (k, name) in zip(axes, STATS_FIELDS):
        m = [[h[k] for h in l["heads"]] for l in j["layers"]]
        im = ax.imshow(m, aspect="auto", cmap="viridis", interpolation="nearest")
        ax.set_title(name + (" (scaled per layer)" if k == "concentration" else ""), fontsize=10)
        ax.set_xlabel("head")
        ax.set_ylabel("layer")
        fig.colorbar(im, ax=ax, fraction=0.046)
    fig.tight_layout()
    fig.savefig(out_png)


# the paper's idle half-lives across heads (METHOD.md section 11)
PAPER_HL = {"random": (131.9, 10.3, 3.06e4), "taylor-only": (69.3, 71.0, 128.4), "taylor-calibrate": (70.0, 72.0, 127.5)}
INITS = ["random", "zero-gate", "small-gate", "taylor-only", "align-only", "taylor-calibrate"]


def fit_of(r):
    """The value-scale fit of a row; rows written before graft recorded it fitted `scaled`."""
    if "sigma_fit" not in r:
        return "scaled" if "sigma" in (r.get("stage1") or []) else "-"
    return r["sigma_fit"] or "-"


def paper_ablate(path, more=()):
    """One table of the run at path; with more (paths of runs of the same split, e.g. other sigma fits), their
    rows join it, a row whose (init, fit, strategy, keep) is already there left out (the same student)."""
    j = json.load(open(path))
    rows = [r for r in j["rows"] if r["half_life_override"] is None]
    for p in more:
        k = json.load(open(p))
        if k["teacher_ppl"] != j["teacher_ppl"] or k["meta"]["stage2_steps"] != j["meta"]["stage2_steps"]:
            raise SystemExit(f"report.py paper-ablate --one-table: {p} has another split or Stage 2 than {path}")
        have = {(r["init"], fit_of(r), r["strategy"], r["keep"]) for r in rows}
        rows += [r for r in k["rows"] if r["half_life_override"] is None and
                 (r["init"], fit_of(r), r["strategy"], r["keep"]) not in have]
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
    fit_order = ["-", "reference", "scaled", "gated"]
    keys.sort(key=lambda k: (INITS.index(k[0]) if k[0] in INITS else 99,
                             fit_order.index(k[1]) if k[1] in fit_order else 99, k[1]))
    m = j["meta"]
    runs = [j] + [json.load(open(p)) for p in more]
    out = [f"teacher perplexity {j['teacher_ppl']:.4f}; Stage 2 {m['stage2_steps']} steps, keep-best {m['keep_best']}; "
           + (f"{m['students']} students, {m['seconds_total']:.1f} s" if not more else
              f"{len(runs)} runs, " + " + ".join(f"{k['meta']['students']} students {k['meta']['seconds_total']:.1f} s"
                                                  for k in runs))
           + f" on {j['memory']['device']}", "",
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


STAGE1_FULL = ("decay", "beta", "sigma", "gate")


def stage1_name(s):
    if s == STAGE1_FULL:
        return "full"
    if not s:
        return "none (= align-only)"
    if len(s) == 1:
        return f"{s[0]} alone"
    if len(s) == 3:
        return f"without {[c for c in STAGE1_FULL if c not in s][0]}"
    return ",".join(s)


def component_rows(paths):
    """The taylor-calibrate rows of one or more `ablate --stage1-subsets` runs (one per sigma fit, say),
    the align-only perplexity per keep, and the largest relative difference between two runs' rows of
    the same student (a set without sigma is built the same under either fit; None when no student is in two)."""
    rows, align, seen, diff = [], {}, {}, None
    for path in paths:
        j = json.load(open(path))
        for r in j["rows"]:
            if r["half_life_override"] is not None:
                continue
            if r["init"] == "align-only":
                align.setdefault(r["keep"], r["ppl"])
            if r["init"] != "taylor-calibrate":
                continue
            key = (tuple(r["stage1"]), r["keep"], fit_of(r) if "sigma" in r["stage1"] else "-")
            if key in seen:
                diff = max(diff or 0.0, abs(r["ppl"] - seen[key]) / seen[key])
                continue
            seen[key] = r["ppl"]
            rows.append(r)
    return rows, align, diff


def components(paths):
    rows, align, diff = component_rows(paths)
    steps = json.load(open(paths[0]))["meta"]["stage2_steps"]
    keeps = sorted({r["keep"] for r in rows})
    fits = [f for f in ("reference", "scaled", "gated") if any(fit_of(r) == f for r in rows)] or ["-"]
    sets = []
    for r in rows:
        s = tuple(r["stage1"])
        if s not in sets:
            sets.append(s)
    def ppl(s, k, f):
        v = [r["ppl"] for r in rows if tuple(r["stage1"]) == s and r["keep"] == k and
             (fit_of(r) in (f, "-") or "sigma" not in s)]
        return v[0] if v else None
    head = [f"{k * 100:.0f} % {f}" for k in keeps for f in fits]
    same = ("" if diff is None else  # None: no student in two runs
            f" ({len(paths)} runs; such a set's rows differ between them by at most {100 * diff:.2g} %)")
    out = [f"taylor-calibrate with Stage 1 parts, uniform; perplexity (Stage 2 {steps} steps); "
           f"a set without sigma is the same under {'both fits' if len(fits) < 3 else 'every fit'}{same}", "",
           "| Stage 1 | " + " | ".join(head) + " |", "|---" * (1 + len(head)) + "|"]
    for s in sets:
        out.append(f"| {stage1_name(s)} | " + " | ".join(num(ppl(s, k, f), 2) for k in keeps for f in fits) + " |")
    if align:
        out.append(f"| align-only | " + " | ".join(num(align.get(k), 2) for k in keeps for f in fits) + " |")
    out += ["", "Lowest perplexity per column against the full method:", ""]
    for k in keeps:
        for f in fits:
            v = [(ppl(s, k, f), s) for s in sets if ppl(s, k, f) is not None]
            if not v:
                continue
            best, bs = min(v)
            full = ppl(STAGE1_FULL, k, f)
            out.append(f"- {k * 100:.0f} % {f}: {stage1_name(bs)} {num(best, 2)}" +
                       ("" if full is None or bs == STAGE1_FULL else
                        f", {full / best:.2f}x below full ({num(full, 2)})"))
    return "\n".join(out)


def word(ok):
    return "not measured" if ok is None else "holds" if ok else "does not hold"


def verdict(ablate_path, others):
    """METHOD.md section 11's claims against an ablation (the default fit's rows), optional Stage 1 component
    runs (`ablate --stage1-subsets`) and races; each row states its criterion, so the verdict can fail."""
    a = json.load(open(ablate_path))
    docs = [(p, json.load(open(p))) for p in others]
    race_paths = [p for p, j in docs if "runs" in j]
    comp_paths = [p for p, j in docs if "rows" in j]
    allrows = [r for r in a["rows"] if r["half_life_override"] is None]
    rows = allrows
    if any(fit_of(r) == "reference" for r in rows):  # the default fit; a run without the choice has one fit
        rows = [r for r in rows if fit_of(r) in ("reference", "-")]
    def ppl(init, strat, keep, rs=None):
        v = [r["ppl"] for r in (rows if rs is None else rs)
             if r["init"] == init and r["strategy"] == strat and abs(r["keep"] - keep) < 1e-9]
        return v[0] if v else None
    def hl(init):
        v = [r["half_life"] for r in rows if r["init"] == init and r["strategy"] == "uniform" and abs(r["keep"] - 0.5) < 1e-9]
        return v[0] if v else None
    out = ["| claim (METHOD.md section 11) | criterion | graft measured | verdict |", "|---|---|---|---|"]
    for keep, paper in ((0.5, "random 2892.9, Taylor-Calibrate 75.2"), (0.25, "random 951,064, Taylor-Calibrate 210.9")):
        r, t = ppl("random", "uniform", keep), ppl("taylor-calibrate", "uniform", keep)
        ok = None if r is None or t is None else t < r
        out.append(f"| Qwen2.5-1.5B uniform {keep * 100:.0f} % zero-shot ppl: {paper} | taylor-calibrate below random | "
                   f"random {num(r, 2)}, taylor-calibrate {num(t, 2)} | {word(ok)} |")
    ps = [r["ppl"] for r in rows if r["ppl"] is not None and math.isfinite(r["ppl"]) and r["ppl"] > 0]
    if ps:
        spread = max(ps) / min(ps)
        out.append(f"| spread between inits on the same copied Q/K/V/O: about 998,953 down to about 10 (10^5) | "
                   f"highest / lowest perplexity over the table's inits and layouts at least 10^3 | "
                   f"{num(max(ps), 1)} / {num(min(ps), 2)} = {spread:.2g} | {word(spread >= 1e3)} |")
    fits = sorted({fit_of(r) for r in allrows if r["init"] == "taylor-calibrate"})
    for fit in fits:  # the 3B order, once per sigma fit of the run
        rs = [r for r in allrows if fit_of(r) in (fit, "-")]
        order = [(i, ppl(i, "uniform", 0.25, rs)) for i in ("random", "zero-gate", "taylor-only", "align-only", "taylor-calibrate")]
        ok = None if any(v is None for _, v in order) else (
            order[4][1] < order[3][1] < min(order[1][1], order[2][1]) and max(order[1][1], order[2][1]) < order[0][1])
        tag = "" if fit == "-" or len(fits) < 2 else f" (sigma fit {fit})"
        out.append("| uniform 25 % ablation (paper on Qwen2.5-3B): random > zero-gate ~ taylor-only > align-only > "
                   f"taylor-calibrate | the same order at 1.5B{tag} | " + ", ".join(f"{i} {num(v, 2)}" for i, v in order) +
                   f" | {word(ok)} |")
    hr, ht = hl("random"), hl("taylor-calibrate")
    ok = None if hr is None or ht is None else (ht["max"] < hr["max"] and abs(ht["mean"] - ht["median"]) < 0.5 * ht["median"])
    out.append("| idle half-life: random heavy-tailed (mean 131.9, median 10.3, max 3.06e4), taylor-calibrate "
               "concentrated (70.0 / 72.0 / 127.5) | taylor-calibrate's max below random's, its mean within 50 % "
               "of its median | " + ("" if hr is None or ht is None else
                                      f"random {num(hr['mean'], 1)} / {num(hr['median'], 1)} / {num(hr['max'], 1)}; "
                                      f"taylor-calibrate {num(ht['mean'], 1)} / {num(ht['median'], 1)} / {num(ht['max'], 1)}")
               + f" | {word(ok)} |")
    if comp_paths:  # not a number of section 11: the method's premise that all of Stage 1 belongs in it
        crow, _, _ = component_rows(comp_paths)
        cells, ok = [], True
        for keep in sorted({r["keep"] for r in crow}):
            ref = [r for r in crow if r["keep"] == keep and fit_of(r) in ("reference", "-")]
            full = [r["ppl"] for r in ref if tuple(r["stage1"]) == STAGE1_FULL]
            if not full:
                continue
            best = min(ref, key=lambda r: r["ppl"])
            ok = ok and tuple(best["stage1"]) == STAGE1_FULL
            cells.append(f"{keep * 100:.0f} %: full {num(full[0], 2)}, best {stage1_name(tuple(best['stage1']))} "
                         f"{num(best['ppl'], 2)}")
        out.append("| (the method, not a section 11 number) all four Stage 1 parts belong in it | the full set lowest "
                   "among Stage 1 subsets, uniform, reference fit | " + "; ".join(cells) + f" | {word(ok if cells else None)} |")
    for p in race_paths:
        j = json.load(open(p))
        base = j["runs"][0]["init"]
        for r in j["runs"][1:]:
            ratio = run_ratio(j, r)
            paper = r["init"] == "taylor-calibrate"
            claim = ("tokens to the same target, random vs Taylor-Calibrate, uniform 50 %: 9.0x" if paper else
                     f"(graft, not the paper) tokens to the same target, random vs {r['init']}, uniform 50 %")
            crit = ("ratio at least half the paper's (4.5x); above 1 is the direction only" if paper else "ratio above 1")
            got = "never reached" if ratio is None else f"{ratio:.2f}x"
            kr = kept_ratio(j, r)
            if ratio is not None and kr is not None and f"{kr:.2f}" != f"{ratio:.2f}":
                got += f", {kr:.2f}x to reach it and stay"
            if ratio is None or ratio <= 1:
                v = "does not hold"
            elif paper and ratio < 4.5:
                v = "holds in direction only"
            else:
                v = "holds"
            out.append(f"| {claim} (lr {j['lr_mixer']:g}, {j['tokens_budget']:,} tokens per run) | {crit} | "
                       f"{got} ({base}'s final loss {num(j['target_loss'], 4)}) | {v} |")
    races = [json.load(open(p)) for p in race_paths]
    # --tokens 5000000 trains whole steps of ctx x batch x accum tokens (4,997,120 at 2048 x 4): within one step counts
    big = lambda j: j["tokens_budget"] > 5e6 - j["ctx"] * j["batch"] * j["accum"]
    claim = "| the same race at the paper's scale: at least 5M tokens per init, two mixer learning rates | "
    if len({j["lr_mixer"] for j in races if big(j)}) < 2:
        out.append(claim + "- | "
                   + ("; ".join(f"lr {j['lr_mixer']:g}: {j['tokens_budget']:,} tokens per init" for j in races) or "no race")
                   + " | not measured (" + ("no race of at least 5M tokens" if not any(big(j) for j in races)
                                         else "at least 5M tokens at one mixer learning rate only") + ") |")
    else:  # the paper's 9.0x at every rate raced at that budget
        cells, ratios = [], []
        for j in sorted((j for j in races if big(j)), key=lambda j: j["lr_mixer"]):
            tc = [r for r in j["runs"][1:] if r["init"] == "taylor-calibrate"]
            ratio = run_ratio(j, tc[0]) if tc else None
            ratios.append(ratio)
            cells.append(f"lr {j['lr_mixer']:g}: " + ("no taylor-calibrate run" if not tc else
                                                       "never reached" if ratio is None else f"{ratio:.2f}x")
                         + f" ({j['tokens_budget']:,} tokens per init)")
        v = ("does not hold" if any(r is None or r <= 1 for r in ratios) else
             "holds" if all(r >= 4.5 for r in ratios) else "holds in direction only")
        out.append(claim + "random vs Taylor-Calibrate at each rate: ratio at least half the paper's 9.0x (4.5x); "
                   "above 1 is the direction only | " + "; ".join(cells) + f" | {v} |")
    out.append("| tokens-to-target at ar / ga-s2 (9.2x, 8.9x) and on 3B / 8B teachers | - | - | not measured (one "
               "race shape in the device budget; no 3B / 8B teacher) |")
    # RULER: graft's own recall probe through a race (recall_curve), not RULER; the races that kept its cells
    probed = [j for j in races if any(r.get("recall_cells") for r in j["runs"])]
    for j in probed:
        base = j["runs"][0]
        n = sum(c["n"] for c in base["recall_cells"][0][1])
        lengths = sorted({c["length"] for _, cs in base["recall_cells"] for c in cs})
        pct = lambda r: " / ".join(f"{100 * a:.1f}" for _, a in r["recall_curve"]) + " %"
        at = " / ".join(f"{t / 1e6:.1f}" for t, _ in base["recall_curve"])
        for r in j["runs"][1:]:
            paper = r["init"] == "taylor-calibrate"
            pairs = list(zip((a for _, a in base["recall_curve"]), (a for _, a in r["recall_curve"])))
            ok = len(pairs) == len(base["recall_curve"]) and all(b > a for a, b in pairs)
            claim = ("RULER through recovery: Taylor-Calibrate above random (the paper's curves; its Llama-3.2-3B number, "
                     "63.4 vs the teacher's 89.6 after 700M tokens, is not compared)" if paper else
                     f"(graft, not the paper) recall through recovery, random vs {r['init']}")
            out.append(f"| {claim} (lr {j['lr_mixer']:g}, {j['tokens_budget']:,} tokens per run) | graft's RULER-style "
                       f"recall probe (not RULER; {n} prompts a point, {', '.join(f'{x:,}' for x in lengths)} tokens) "
                       f"above {base['init']}'s at every probe | at {at}M tokens: {base['init']} {pct(base)}, "
                       f"{r['init']} {pct(r)} | {word(ok)}{' (a probe, not RULER)' if paper else ''} |")
    if not probed:
        out.append("| RULER: long context recovers more slowly than short benchmarks | - | - | not measured (no race "
                   "kept its recall probes) |")
    out.append("| Qwen3-8B short benchmarks | - | - | not measured (graft runs no benchmark suites) |")
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


COMMANDS = ("ablate", "race", "teacher", "paper-ablate", "components", "verdict", "stats")
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
    if argv[1] == "stats":
        out_png = argv[argv.index("--png") + 1] if "--png" in argv else None
        print("\n\n".join(stats(f) for f in files if f != out_png))
        if out_png:
            try:
                stats_png([f for f in files if f != out_png][0], out_png)
            except ImportError:
                print(f"report.py: --png needs matplotlib; {out_png} not drawn", file=sys.stderr)
                return 1
        return 0
    if argv[1] == "components":  # several runs (one per sigma fit) make one table
        print(components(files))
        return 0
    if argv[1] == "teacher":  # a second file (the transformers reference) joins the first's table
        print(teacher(files))
        return 0
    if argv[1] == "paper-ablate" and "--one-table" in argv:
        print(paper_ablate(files[0], files[1:]))
        return 0
    one = {"ablate": ablate, "paper-ablate": paper_ablate}
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
    print(race_tables(races, kept="--kept" in argv, speed="--no-speed" not in argv, recall="--recall" in argv))
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
    try:
        sys.exit(run(sys.argv))
    except BrokenPipeError:  # a reader that stopped early (`| grep -q`): no traceback, and nothing more written
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
