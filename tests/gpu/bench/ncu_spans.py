#!/usr/bin/env python3
"""Where a barrier-separated kernel spends its time, span by span.

Reads the source page that tests/gpu/bench/gdn_ncu_source.sh saves (ncu --page source
--print-source cuda,sass --csv, gzipped), splits the kernel's SASS at each block barrier
(BAR.SYNC, in address order) and prints each span's share of the warp-stall samples and of the
instructions executed, with the lines of the kernel's own file (FILE, within LO-HI) that most of
the span's instructions come from: they name the phase. Inlined helpers keep their own file's
lines, so a span is named by the kernel lines around them, not by a line-by-line walk.

    python3 tests/gpu/bench/ncu_spans.py ncu_bwd_local_src.csv.gz cuda_gdn_core_bwd.cu 323-500
"""
import csv
import gzip
import sys


def read(path):
    """address -> (file, line, stall samples, instructions executed, SASS text)"""
    rows = csv.reader(gzip.open(path, "rt", errors="replace"))
    cur_file = cur_line = None
    addr = {}
    for r in rows:
        if not r:
            continue
        if r[0] == "File Path":
            cur_file = r[1].rsplit("/", 1)[-1]
            continue
        if r[0] in ("Line No", "Function Name") or len(r) < 8:
            continue
        if r[0]:
            cur_line = int(r[0])
            continue
        if r[2].startswith("0x"):
            addr[int(r[2], 16)] = (cur_file, cur_line, int(r[4] or 0), int(r[7] or 0), r[3].strip())
    return addr


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: " + __doc__.strip().splitlines()[-1].strip())
    path, kfile = sys.argv[1], sys.argv[2]
    lo, hi = (int(x) for x in sys.argv[3].split("-"))
    addr = read(path)
    if not addr:
        sys.exit(f"{path}: no SASS rows with addresses")
    samples = sum(v[2] for v in addr.values())
    instr = sum(v[3] for v in addr.values())
    spans, cur = [], []
    for a in sorted(addr):
        cur.append(addr[a])
        if "BAR.SYNC" in addr[a][4]:
            spans.append(cur)
            cur = []
    spans.append(cur)
    print(f"{len(spans)} spans, {samples} stall samples, {instr / 1e6:.1f} M warp instructions")
    for i, sp in enumerate(spans):
        s, x = sum(v[2] for v in sp), sum(v[3] for v in sp)
        lines = {}
        for f, l, _, ex, _ in sp:
            if f == kfile and lo <= l <= hi:
                lines[l] = lines.get(l, 0) + ex
        top = sorted(lines.items(), key=lambda kv: -kv[1])[:5]
        print(f"span {i:2d}: {100 * s / max(samples, 1):5.1f} % samples, {100 * x / max(instr, 1):5.1f} % instructions;"
              f" kernel lines {' '.join(str(l) for l, _ in top)}")


if __name__ == "__main__":
    main()
