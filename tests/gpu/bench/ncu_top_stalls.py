"""The SASS instructions with the most warp-state samples in Nsight Compute's source page.

    ncu --import R.ncu-rep --page source --csv --print-source sass | python3 ncu_top_stalls.py [N]

Reads the CSV on stdin (one row an instruction: its address, its source text and a column a
metric), prints the N instructions (default 10) with the most samples, each with its share of all
samples and its three largest stall reasons. The column names differ between Nsight Compute
versions, so a column is found by the words in its name; the script stops with a one-line error
where it finds none."""
import csv
import sys


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return 0.0


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    rows = [r for r in csv.reader(sys.stdin) if r]
    head = next((i for i, r in enumerate(rows) if any("Source" == c or "Address" in c for c in r)), None)
    if head is None:
        sys.exit("ncu_top_stalls: no header row with 'Source' or 'Address' in the CSV")
    names, body = rows[head], rows[head + 1:]
    col = {c: i for i, c in enumerate(names)}
    total = next((c for c in names if "Warp Stall Sampling (All" in c), None)
    if total is None:
        sys.exit("ncu_top_stalls: no 'Warp Stall Sampling (All Samples)' column; columns: " + ", ".join(names[:12]))
    source = next((c for c in names if c == "Source"), names[1])
    reasons = [c for c in names if c.startswith("stall_")]
    all_samples = sum(number(r[col[total]]) for r in body if len(r) == len(names))
    if all_samples <= 0:
        sys.exit("ncu_top_stalls: no samples in the CSV")
    ranked = sorted((r for r in body if len(r) == len(names)), key=lambda r: -number(r[col[total]]))
    print(f"{all_samples:.0f} samples in all")
    for r in ranked[:n]:
        s = number(r[col[total]])
        top = sorted(((number(r[col[c]]), c) for c in reasons), reverse=True)[:3]
        why = ", ".join(f"{c} {v:.0f}" for v, c in top if v > 0)
        print(f"{100 * s / all_samples:5.1f}%  {r[col[source]].strip()[:60]:60s}  {why}")


if __name__ == "__main__":
    main()
