#!/usr/bin/env python3
"""Prints the GPU benchmark figures (JSON lines from tests/gpu/bench/run.sh) as
one table: each figure with its floor (max of FLOPs over the measured bf16 GEMM
rate and bytes over the measured copy bandwidth) and, where a peer measured
the same thing, the ratio to it. Several files (the bench.jsonl of several
device calls on one machine) make one table; lines without a figure (notes,
sanity checks) are printed first.
  python3 tests/gpu/bench/table.py A.jsonl [B.jsonl ...]"""
import json
import sys


def main(paths):
    rows = []
    for path in paths:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    try:
                        rows.append(json.loads(line))
                    except json.JSONDecodeError:
                        print("unreadable line:", line[:120])
    for r in rows:
        if "what" not in r:
            print("note:", json.dumps(r))
    rows = [r for r in rows if "what" in r]
    if not rows:
        print("no figures")
        return
    ceil = {r["what"]: r for r in rows if r.get("bench") == "ceiling"}
    roof = next((r["tflops"] for r in ceil.values() if "tflops" in r), None)
    # /flow: the floor of the kernels' own data flow, where a figure gives one (bench_gdn's core)
    print(f"{'figure':<78} {'ms':>9} {'TFLOP/s':>8} {'MFU':>6} {'tok/s':>9} {'floor ms':>9} {'/floor':>7} {'/flow':>6}")
    for r in rows:
        what = f"[{r.get('bench', '?')}] {r.get('what', '')}"
        if r.get("skipped"):
            print(f"{what:<78} skipped: {r['skipped']}")
            continue
        ms = r.get("ms")
        tf = r.get("tflops")
        mfu = r.get("of_roofline")
        if mfu is None and tf is not None and roof and r.get("bench") not in ("ceiling",):
            mfu = tf / roof
        tok = r.get("tok_s")

        def f(x, fmt):
            return format(x, fmt) if isinstance(x, (int, float)) else "-"

        print(f"{what[:78]:<78} {f(ms, '9.3f')} {f(tf, '8.1f')} {f(mfu, '6.1%')} {f(tok, '9.0f')} "
              f"{f(r.get('floor_ms'), '9.3f')} {f(r.get('of_floor'), '7.1%')} {f(r.get('of_flow'), '6.1%')}")
    # ratios where a figure names its peer ("peer": "<what of the other line>")
    by_what = {r.get("what"): r for r in rows}
    ratios = [(r, r[k]) for r in rows for k in ("peer", "peer2") if r.get(k)]
    if ratios:
        print("\nratios (ours / peer, tok/s):")
        for r, name in ratios:
            p = by_what.get(name)
            if p and r.get("tok_s") and p.get("tok_s"):
                print(f"  {r['what'][:60]:<60} / {p['what'][:60]:<60} {r['tok_s'] / p['tok_s']:6.2f}x")
            else:
                print(f"  {r['what'][:60]:<60} / {name[:60]}: not measured in this run")


if __name__ == "__main__":
    main(sys.argv[1:] or ["build/gpu/logs/bench.jsonl"])
