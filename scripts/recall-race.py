#!/usr/bin/env python3
"""The recall curve of a race (`graft race --recall-every N --json`) as a
Markdown table, so that docs/recall.md's race tables carry no number typed by
hand.

  recall-race.py RACE.json RACE.log

RACE.json is the race's --json output (its per-step loss curves may be
dropped); RACE.log holds the race's command line ("== NAME: ./build/graft race
...") and its "recall at step S (T tokens): A %" lines. The probe's settings
come from the command line (--recall-tasks, default niah-number,multikey;
--recall-lengths; --recall-samples, default 2; depths 10, 50, 90 as
engine/eval/recall_probe.c fixes them), so each point is printed as right
answers of its prompts. Exit 1 when the log's recall lines and the JSON's
recall_curve disagree, or a point's accuracy is not a whole number of the
prompts' scores (the settings read do not match the run).
"""
import json
import re
import shlex
import sys

DEPTHS = 3  # 10, 50, 90 (recall_probe_default)


def option(args, name, default):
    return args[args.index(name) + 1] if name in args else default


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    j = json.load(open(sys.argv[1]))
    log = open(sys.argv[2]).read().splitlines()
    cmd = next((l.split(": ", 1)[1] for l in log if l.startswith("== ") and " race " in l), None)
    if cmd is None:
        print("recall-race.py: %s has no `== NAME: graft race ...` line" % sys.argv[2], file=sys.stderr)
        return 1
    args = shlex.split(cmd)
    every = int(option(args, "--recall-every", "0"))
    tasks = option(args, "--recall-tasks", "niah-number,multikey").split(",")
    lengths = option(args, "--recall-lengths", "1024").split(",")
    samples = int(option(args, "--recall-samples", "2"))
    if every <= 0:
        print("recall-race.py: the race ran without --recall-every", file=sys.stderr)
        return 1
    prompts = len(tasks) * len(lengths) * DEPTHS * samples
    # a sample scores 1 or 0, quarters on multivalue/multiquery, fifths on vt: the point's smallest step
    parts = (4 if {"multivalue", "multiquery"} & set(tasks) else 1) * (5 if "vt" in tasks else 1)
    logged, init = {}, None
    for l in log:
        m = re.match(r"graft race: training init (.+)$", l)
        if m:
            init = m.group(1)
        m = re.match(r"recall at step (\d+) \((\d+) tokens\): ([\d.]+) %$", l)
        if m:
            logged.setdefault(init, []).append((int(m.group(2)), float(m.group(3))))
    tokens = [t for t, _ in j["runs"][0]["recall_curve"]]
    for r in j["runs"]:
        curve = r["recall_curve"]
        if [t for t, _ in curve] != tokens:
            print("recall-race.py: %s's recall points are at other tokens than %s's" % (r["init"], j["runs"][0]["init"]),
                  file=sys.stderr)
            return 1
        lg = logged.get(r["init"], [])
        if len(lg) != len(curve) or any(t != lt or abs(100 * a - la) > 0.05 for (t, a), (lt, la) in zip(curve, lg)):
            print("recall-race.py: %s: the log's recall lines %s are not the JSON's recall_curve %s" % (r["init"], lg, curve),
                  file=sys.stderr)
            return 1
        for t, a in curve:
            if abs(a * prompts * parts - round(a * prompts * parts)) > 1e-6:
                print("recall-race.py: %s at %d tokens: %r is not a score of %d prompts" % (r["init"], t, a, prompts),
                      file=sys.stderr)
                return 1
    print("%s: %d students, %d tokens each (ctx %d, batch %d, lr-mixer %g); recall every %d steps on %s at %s tokens, "
          "depths 10, 50, 90, %d samples: %d prompts a point; the teacher's held-out perplexity %.2f (%d windows)\n" % (
              j["model"].rsplit("/", 1)[-1], len(j["runs"]), j["tokens_budget"], j["ctx"], j["batch"], j["lr_mixer"],
              every, ", ".join(tasks), ", ".join(lengths), samples, prompts, j["teacher_eval_ppl"], j["eval_seqs"]))
    print("| student | " + " | ".join("recall at %.2fM tokens" % (t / 1e6) for t in tokens) +
          " | held-out perplexity at the end |")
    print("|---|" + "---:|" * (len(tokens) + 1))
    for r in j["runs"]:
        print("| %s | %s | %.2f |" % (r["init"], " | ".join("%g of %d (%.1f %%)" % (round(a * prompts, 2), prompts, 100 * a)
                                                        for _, a in r["recall_curve"]), r["final_eval_ppl"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
