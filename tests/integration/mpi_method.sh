#!/bin/sh
# Statistics, selection and Stage 2 on stories260K shared between two ranks of
# the CPU backend (mpirun -np 2), against one process:
# - graft stats over 8 sequences (4 per rank, sums added over ranks): every
#   statistic within 1e-5 relative. Why 1e-5: the same float32 teacher forward
#   in batches of 4 instead of 8 (other GEMM blockings, ~1e-7), then float64
#   sums added in another order (measured: 3e-7);
# - graft select --strategy ar (every perplexity over held-out windows shared
#   between the ranks): the same kept layers, scores within 1e-5 relative (the
#   same reasons);
# - graft convert --init taylor-calibrate (Stage 2's layers spread over the
#   ranks, then gathered): the student's weights identical byte for byte, and
#   report.json identical but for the timings: each layer's Stage 2 is the same
#   single-threaded computation wherever it runs (--threads 1);
# - graft select --strategy ga-s2: Stage 2 on every layer spread, perplexities
#   shared: the same kept layers, scores within 1e-5.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib/mpi.sh"
need_stories
need_mpi
DATA=$SHARED/data/tinystories.txt
[ -f "$DATA" ] || skip "tinystories.txt not found under \$GRAFT_SHARED"

# close A B TOL: every number in the two JSON files within TOL relative (the
# same structure; keys named in SKIP ignored; fails on NaN)
close() { python3 - "$@" <<'PY'
import json, math, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
tol = float(sys.argv[3]); worst = [0.0]
def walk(x, y, path):
    assert type(x) == type(y), path
    if isinstance(x, dict):
        assert x.keys() == y.keys(), path
        for k in x:
            if k not in ("seconds",): walk(x[k], y[k], path + "." + k)
    elif isinstance(x, list):
        assert len(x) == len(y), path
        for i, (u, v) in enumerate(zip(x, y)): walk(u, v, "%s[%d]" % (path, i))
    elif isinstance(x, float) or isinstance(y, float):
        assert math.isfinite(x) and math.isfinite(y), (path, x, y)
        d = abs(x - y) / max(abs(y), 1e-300)
        worst[0] = max(worst[0], d)
        assert d <= tol, (path, x, y, d)
    else:
        assert x == y, (path, x, y)
walk(a, b, "")
print("worst relative difference %.3g (tolerance %g)" % (worst[0], tol))
PY
}

S="$STORIES --threads 1 --json"
$G stats $S --text "$DATA" --seqs 8 --ctx 64 >"$TMP/s1.json" || fail "stats, one process"
$MPIRUN -np 2 $G stats $S --text "$DATA" --seqs 8 --ctx 64 >"$TMP/s2.json" 2>"$TMP/s2.err" ||
    fail "stats, two ranks: $(cat "$TMP/s2.err")"
close "$TMP/s2.json" "$TMP/s1.json" 1e-5 || fail "stats: two ranks differ from one process"
# the check can fail: other sequences give other statistics
$G stats $S --text "$DATA" --seqs 4 --ctx 64 >"$TMP/s4.json" || fail "stats over 4 sequences"
close "$TMP/s4.json" "$TMP/s1.json" 1e-5 >/dev/null 2>&1 && fail "stats over other sequences passed as equal"

SEL="--strategy ar --keep 0.4 --text $DATA --ctx 64 --select-windows 6"
$G select $S $SEL >"$TMP/ar1.json" || fail "select ar, one process"
$MPIRUN -np 2 $G select $S $SEL >"$TMP/ar2.json" 2>"$TMP/ar2.err" || fail "select ar, two ranks: $(cat "$TMP/ar2.err")"
close "$TMP/ar2.json" "$TMP/ar1.json" 1e-5 || fail "select ar: two ranks differ from one process"

CONV="--keep 0.4 --strategy uniform --init taylor-calibrate --calib $DATA --ctx 64 --steps 40"
$G convert $S $CONV --out "$TMP/c1" >/dev/null || fail "convert, one process"
$MPIRUN -np 2 $G convert $S $CONV --out "$TMP/c2" >/dev/null 2>"$TMP/c2.err" ||
    fail "convert, two ranks: $(cat "$TMP/c2.err")"
cmp -s "$TMP/c1/model.safetensors" "$TMP/c2/model.safetensors" || fail "convert: Stage 2 spread over two ranks changed the weights"
close "$TMP/c2/report.json" "$TMP/c1/report.json" 0 || fail "convert: the reports differ"
[ "$(json_get "$TMP/c2/report.json" 'sum(1 for l in j["layers"] if l.get("stage2"))')" -ge 2 ] ||
    fail "convert: fewer than two layers went through Stage 2 (nothing was spread)"

GA="--strategy ga-s2 --keep 0.4 --text $DATA --ctx 64 --select-windows 4 --steps 20"
$G select $S $GA >"$TMP/ga1.json" || fail "select ga-s2, one process"
$MPIRUN -np 2 $G select $S $GA >"$TMP/ga2.json" 2>"$TMP/ga2.err" || fail "select ga-s2, two ranks: $(cat "$TMP/ga2.err")"
close "$TMP/ga2.json" "$TMP/ga1.json" 1e-5 || fail "select ga-s2: two ranks differ from one process"
echo "ok"
