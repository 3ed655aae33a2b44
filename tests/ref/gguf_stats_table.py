#!/usr/bin/env python3
"""Per-layer ranges of `graft stats --json` output, as a Markdown table.

    python3 tests/ref/gguf_stats_table.py STATS.json > table.md
"""
import json
import sys

j = json.load(open(sys.argv[1]))
print("| layer | mean distance min | median | max | entropy (nats) min | median | max | output RMS min | max |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for L in j["layers"]:
    d = sorted(h["mean_distance"] for h in L["heads"])
    e = sorted(h["entropy"] for h in L["heads"])
    r = sorted(h["output_rms"] for h in L["heads"])
    med = lambda v: (v[(len(v) - 1) // 2] + v[len(v) // 2]) / 2
    print(f"| {L['layer']} | {d[0]:.1f} | {med(d):.1f} | {d[-1]:.1f} | {e[0]:.2f} | {med(e):.2f} | {e[-1]:.2f} "
          f"| {r[0]:.3g} | {r[-1]:.3g} |")
