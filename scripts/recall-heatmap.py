#!/usr/bin/env python3
"""Heat maps (PNG) and Markdown tables of `graft recall --json` outputs, so that
docs/recall.md carries no number typed by hand.

  recall-heatmap.py OUT.png LABEL=FILE.json [LABEL=FILE.json ...] > tables.md

FILE may also be a --dump (JSON lines, one a sample): cells are then made
from the samples it holds, so that a run cut short still shows what it
measured.

The PNG has one panel per file, side by side: rows are lengths (shortest at
the top), columns depths (0 % at the left), each cell coloured by accuracy
over the file's tasks (red 0 -> yellow 0.5 -> green 1) with its accuracy in
percent written in it; grey: no samples. Written with zlib alone (no
matplotlib). stdout: per file, a length x depth table over its tasks, and
with several tasks a length x depth table per task and a task x length table,
in Markdown.
"""
import json
import struct
import sys
import zlib

FONT = {  # 3 x 5 digits
    "0": ["111", "101", "101", "101", "111"], "1": ["010", "110", "010", "010", "111"],
    "2": ["111", "001", "111", "100", "111"], "3": ["111", "001", "111", "001", "111"],
    "4": ["101", "101", "111", "001", "001"], "5": ["111", "100", "111", "001", "111"],
    "6": ["111", "100", "111", "101", "111"], "7": ["111", "001", "010", "010", "010"],
    "8": ["111", "101", "111", "101", "111"], "9": ["111", "101", "111", "001", "111"],
}
CELL, PAD, SCALE = 44, 16, 3


def colour(a):
    if a is None:
        return (200, 200, 200)
    a = min(max(a, 0.0), 1.0)
    if a < 0.5:
        return (215, int(48 + 2 * a * (190 - 48)), 39)
    return (int(215 - 2 * (a - 0.5) * (215 - 26)), int(190 - 2 * (a - 0.5) * (190 - 150)), int(39 + 2 * (a - 0.5) * (60 - 39)))


def grid(j):
    lengths = sorted({c["length"] for c in j["cells"]})
    depths = sorted({c["depth"] for c in j["cells"]})
    acc = {}
    for L in lengths:
        for d in depths:
            cs = [c for c in j["cells"] if c["length"] == L and c["depth"] == d]
            n = sum(c["n"] for c in cs)
            acc[L, d] = sum(c["correct"] for c in cs) / n if n else None
    return lengths, depths, acc


def png(path, panels):
    h = max(len(p[0]) for p in panels) * CELL + 2 * PAD
    w = sum(len(p[1]) * CELL + PAD for p in panels) + PAD
    img = [[(255, 255, 255)] * w for _ in range(h)]
    x0 = PAD
    for lengths, depths, acc in panels:
        for r, L in enumerate(lengths):
            for c, d in enumerate(depths):
                a = acc[L, d]
                col = colour(a)
                for y in range(PAD + r * CELL + 1, PAD + (r + 1) * CELL - 1):
                    for x in range(x0 + c * CELL + 1, x0 + (c + 1) * CELL - 1):
                        img[y][x] = col
                if a is not None:
                    text = str(int(round(100 * a)))
                    tw = len(text) * 4 * SCALE - SCALE
                    tx = x0 + c * CELL + (CELL - tw) // 2
                    ty = PAD + r * CELL + (CELL - 5 * SCALE) // 2
                    for k, ch in enumerate(text):
                        for gy, row in enumerate(FONT[ch]):
                            for gx, bit in enumerate(row):
                                if bit == "1":
                                    for yy in range(SCALE):
                                        for xx in range(SCALE):
                                            img[ty + gy * SCALE + yy][tx + k * 4 * SCALE + gx * SCALE + xx] = (0, 0, 0)
        x0 += len(depths) * CELL + PAD
    write_png(path, img)


def write_png(path, img):
    """img: rows of (r, g, b) tuples, all rows as wide; an 8-bit RGB PNG."""
    h, w = len(img), len(img[0])
    raw = b"".join(b"\x00" + bytes(v for px in row for v in px) for row in img)
    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def pct(a):
    return "-" if a is None else "%.0f" % (100 * a)


def load(path):
    if not path.endswith(".jsonl"):
        return json.load(open(path))
    rows = []
    for l in open(path):
        try:
            rows.append(json.loads(l))
        except ValueError:  # the line a running (or killed) graft was writing
            pass
    cells, tasks = {}, []
    for r in rows:
        if r["task"] not in tasks:
            tasks.append(r["task"])
        c = cells.setdefault((r["task"], r["length"], r["depth"]),
                             {"task": r["task"], "length": r["length"], "depth": r["depth"], "n": 0, "correct": 0.0})
        c["n"] += 1
        c["correct"] += r["score"]
    for c in cells.values():
        c["accuracy"] = c["correct"] / c["n"]
    return {"tasks": tasks, "cells": list(cells.values()), "samples": None, "n_rows": len(rows), "seconds": float("nan")}


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    panels = []
    for arg in sys.argv[2:]:
        label, path = arg.split("=", 1)
        j = load(path)
        lengths, depths, acc = grid(j)
        panels.append((lengths, depths, acc))
        secs = j["seconds"]
        if j.get("samples") is None:
            print("**%s** (%s; a run cut short: the %d samples it finished)\n" % (label, ", ".join(j["tasks"]), j["n_rows"]))
        else:
            print("**%s** (%s; %s sample%s a cell, %.0f s)\n" % (label, ", ".join(j["tasks"]), j["samples"], "" if j["samples"] == 1 else "s", secs))
        print("| length \\ depth | " + " | ".join("%g %%" % d for d in depths) + " |")
        print("|---" * (len(depths) + 1) + "|")
        for L in lengths:
            print("| %d | " % L + " | ".join(pct(acc[L, d]) for d in depths) + " |")
        print()
        if len(j["tasks"]) > 1:
            for t in j["tasks"]:
                tl, td, ta = grid({"cells": [c for c in j["cells"] if c["task"] == t]})
                print("| %s: length \\ depth | " % t + " | ".join("%g %%" % d for d in td) + " |")
                print("|---" * (len(td) + 1) + "|")
                for L in tl:
                    print("| %d | " % L + " | ".join(pct(ta[L, d]) for d in td) + " |")
                print()
            print("| task \\ length | " + " | ".join(str(L) for L in lengths) + " |")
            print("|---" * (len(lengths) + 1) + "|")
            for t in j["tasks"]:
                row = []
                for L in lengths:
                    cs = [c for c in j["cells"] if c["task"] == t and c["length"] == L]
                    n = sum(c["n"] for c in cs)
                    row.append(pct(sum(c["correct"] for c in cs) / n if n else None))
                print("| %s | " % t + " | ".join(row) + " |")
            print()
    png(sys.argv[1], panels)
    return 0


if __name__ == "__main__":
    sys.exit(main())
