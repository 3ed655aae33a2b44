#!/bin/sh
# make bench-gpu-gdn: graft's CUDA GDN benchmark and its PyTorch / FLA peers in
# one run, then one table. JSON lines and the logs go to $GDN_BENCH_OUT (default
# build/gpu/bench-gdn), which $OUT on the GPU machine can be.
# Usage: sh tests/gpu/bench/run_gdn.sh [BUILD]
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/../../.."
out=${GDN_BENCH_OUT:-$BUILD/gpu/bench-gdn}
mkdir -p "$out"
: >"$out/gdn.jsonl"
status=0
"${GDN_BENCH_BIN:-$BUILD/gpu/bench_gdn}" >>"$out/gdn.jsonl" 2>"$out/bench_gdn.log"
rc=$?
[ $rc -eq 77 ] && { cat "$out/gdn.jsonl"; echo "SKIP: no GPU"; exit 77; }
[ $rc -ne 0 ] && { echo "bench_gdn failed (exit $rc):"; tail -n 20 "$out/bench_gdn.log"; status=1; }
PYTHONUNBUFFERED=1 python3 tests/gpu/peers/gdn_peers.py >>"$out/gdn.jsonl" 2>"$out/peers.log" ||
    { echo "gdn_peers.py failed:"; tail -n 20 "$out/peers.log"; status=1; }
python3 - "$out/gdn.jsonl" <<'EOF'
import json, sys
rows, notes = [], []
for line in open(sys.argv[1]):
    line = line.strip()
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    if "bench" in r:
        rows.append(r)
    else:
        notes.append(r)
for n in notes:
    print("note:", json.dumps(n))
print()
print(f"{'figure':36} {'B':>3} {'T':>5} {'conv':>5} {'ms':>9} {'tok/s':>11} {'TFLOP/s':>8}")
for r in rows:
    print(f"{r['bench']:36} {r['B']:>3} {r['T']:>5} {str(r.get('conv', '')):>5} {r['ms']:>9.3f} "
          f"{r['tok_s']:>11,} {r.get('tflops', ''):>8}")
print()
best = {}
for r in rows:
    if r["bench"].endswith("layer_fwd_bwd") and not r.get("conv"):
        best[(r["bench"], r["T"])] = r["tok_s"]
for T in (2048, 8192):
    g = best.get(("graft_gdn_layer_fwd_bwd", T))
    for peer in ("fla_gdn_layer_fwd_bwd", "torch_naive_gdn_layer_fwd_bwd"):
        p = best.get((peer, T))
        if g and p:
            print(f"T {T}: graft / {peer.split('_')[0]} layer fwd+bwd = {g / p:.2f}x")
    if g:
        print(f"T {T}: graft layer fwd+bwd {g / 1e6:.2f} M tok/s (target >= 3 M at T 2048)")
EOF
exit $status
