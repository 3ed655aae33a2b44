#!/usr/bin/env python3
"""Recall curves of races (`graft race --recall-every N --json`) as one PNG,
a panel per race, so that docs/recall.md's curves are drawn from the
committed JSON.

  recall-curve.py OUT.png RACE.json [...]

Each panel: recall accuracy (0 to 100 %, grey lines at every 25, labelled at
the left) against tokens trained (0 at the left, the race's token budget at
the right), one line per student with a square at each measured point, the
students' colours in the order of the race's runs. stdout: one Markdown line
per panel naming the race, its lr-mixer, its points and each student's colour.
"""
import importlib.util
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("recall_heatmap", os.path.join(here, "recall-heatmap.py"))
heatmap = importlib.util.module_from_spec(spec)
spec.loader.exec_module(heatmap)

COLOURS = [((228, 26, 28), "red"), ((55, 126, 184), "blue"), ((77, 175, 74), "green"), ((152, 78, 163), "purple"),
           ((255, 127, 0), "orange"), ((120, 120, 120), "grey")]
W, H, LEFT, PAD, SCALE = 360, 240, 36, 16, 2


def put(img, x, y, col, r):
    for yy in range(y - r, y + r + 1):
        for xx in range(x - r, x + r + 1):
            if 0 <= yy < len(img) and 0 <= xx < len(img[0]):
                img[yy][xx] = col


def line(img, a, b, col):
    n = max(abs(b[0] - a[0]), abs(b[1] - a[1]), 1)
    for k in range(n + 1):
        put(img, round(a[0] + (b[0] - a[0]) * k / n), round(a[1] + (b[1] - a[1]) * k / n), col, 1)


def text(img, x, y, s):
    for k, ch in enumerate(s):
        for gy, row in enumerate(heatmap.FONT[ch]):
            for gx, bit in enumerate(row):
                if bit == "1":
                    for yy in range(SCALE):
                        for xx in range(SCALE):
                            img[y + gy * SCALE + yy][x + k * 4 * SCALE + gx * SCALE + xx] = (0, 0, 0)


def main():
    if len(sys.argv) < 3 or not sys.argv[1].endswith(".png"):
        print(__doc__, file=sys.stderr)
        return 2
    races = [(p, json.load(open(p))) for p in sys.argv[2:]]
    for p, j in races:
        if not all(r.get("recall_curve") for r in j["runs"]):
            print("recall-curve.py: %s: a run without recall_curve (a race without --recall-every)" % p, file=sys.stderr)
            return 1
        if len(j["runs"]) > len(COLOURS):
            print("recall-curve.py: %s: more than %d students" % (p, len(COLOURS)), file=sys.stderr)
            return 1
    pw = LEFT + W + PAD
    img = [[(255, 255, 255)] * (len(races) * pw + PAD) for _ in range(H + 2 * PAD)]
    for i, (p, j) in enumerate(races):
        x0, y0 = i * pw + PAD + LEFT, PAD
        budget = j["tokens_budget"]
        def at(t, a):
            return x0 + round(W * t / budget), y0 + round(H * (1 - a))
        for q in range(5):
            y = y0 + H * q // 4
            for x in range(x0, x0 + W + 1):
                img[y][x] = (0, 0, 0) if q == 4 else (215, 215, 215)
            label = str(100 - 25 * q)
            text(img, x0 - 6 - len(label) * 4 * SCALE, y - 5 * SCALE // 2, label)
        for y in range(y0, y0 + H + 1):
            img[y][x0] = (0, 0, 0)
        for k, r in enumerate(j["runs"]):
            col = COLOURS[k][0]
            pts = [at(t, a) for t, a in r["recall_curve"]]
            for a, b in zip(pts, pts[1:]):
                line(img, a, b, col)
            for x, y in pts:
                put(img, x, y, col, 3)
        print("%s, lr-mixer %g: recall at %s tokens of %d; %s\n" % (
            j["model"].rsplit("/", 1)[-1], j["lr_mixer"], ", ".join("%.2fM" % (t / 1e6) for t, _ in j["runs"][0]["recall_curve"]),
            budget, ", ".join("%s %s" % (r["init"], COLOURS[k][1]) for k, r in enumerate(j["runs"]))))
    heatmap.write_png(sys.argv[1], img)
    return 0


if __name__ == "__main__":
    sys.exit(main())
