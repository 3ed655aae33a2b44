#!/bin/sh
# make bench-gpu: every BUILD/gpu/bench_* program, then the PyTorch peers
# (tests/gpu/peers/peer_*.py, where python3 has torch), then one table.
# Each prints one JSON line per figure; all lines go to LOGDIR/bench.jsonl,
# everything else to LOGDIR/NAME.log (LOGDIR: GRAFT_GPU_LOGS, default
# BUILD/gpu/logs). GRAFT_BENCH_PEERS=0 skips the peers; GRAFT_BENCH_ONLY="a b"
# runs the programs and peers whose name contains one of the words;
# GRAFT_BENCH_MODEL_ARGS (forward, train or stage2) is bench_cuda_model's argument.
# GRAFT_BENCH_SMOKE=1 or GRAFT_GPU_TEST_DEVICE=cpu: every program at toy shapes
# (bench_gpu.h) and the peers with GRAFT_PEER_SMOKE=1 (the CPU): a check of the
# benchmarks where there is no GPU, the figures mean nothing.
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/../../.."
export GRAFT_SHARED="${GRAFT_SHARED:-$(cd .. && pwd)/shared}"
export GRAFT_ROOT="$PWD"
logs=${GRAFT_GPU_LOGS:-$BUILD/gpu/logs}
mkdir -p "$logs"
jsonl="$logs/bench.jsonl"
: >"$jsonl"
only=${GRAFT_BENCH_ONLY:-}
status=0
want() {
    [ -z "$only" ] && return 0
    for w in $only; do case $1 in *"$w"*) return 0 ;; esac; done
    return 1
}
case ${GRAFT_GPU_TEST_DEVICE:-}${GRAFT_BENCH_SMOKE:-} in cpu*|*1) export GRAFT_PEER_SMOKE=1 ;; esac

for b in "$BUILD"/gpu/bench_*; do
    [ -x "$b" ] || continue
    name=$(basename "$b")
    want "$name" || continue
    printf '== %s\n' "$name"
    args=
    [ "$name" = bench_cuda_model ] && args=${GRAFT_BENCH_MODEL_ARGS:-}
    "$b" $args >"$logs/$name.out" 2>"$logs/$name.log"
    rc=$?
    grep '^{' "$logs/$name.out" >>"$jsonl"
    [ $rc -eq 77 ] && { printf '   skipped: %s\n' "$(tail -n 1 "$logs/$name.out")"; continue; }
    [ $rc -ne 0 ] && { status=1; printf '   FAILED (exit %d):\n' $rc; tail -n 5 "$logs/$name.log" | sed 's/^/   | /'; }
done

if [ "${GRAFT_BENCH_PEERS:-1}" != 0 ] && python3 -c 'import torch' 2>/dev/null; then
    for p in tests/gpu/peers/peer_*.py; do
        name=$(basename "$p" .py)
        [ "$name" = peer_common ] && continue
        want "$name" || continue
        printf '== %s\n' "$name"
        (cd tests/gpu/peers && python3 "$(basename "$p")") >"$logs/$name.out" 2>"$logs/$name.log"
        rc=$?
        grep '^{' "$logs/$name.out" >>"$jsonl"
        [ $rc -ne 0 ] && { status=1; printf '   FAILED (exit %d):\n' $rc; tail -n 5 "$logs/$name.log" | sed 's/^/   | /'; }
    done
else
    echo "== peers skipped (GRAFT_BENCH_PEERS=0 or no torch in python3)"
fi

echo
if command -v python3 >/dev/null 2>&1; then
    python3 tests/gpu/bench/table.py "$jsonl" | tee "$logs/table.txt"
else
    cat "$jsonl"
fi
exit $status
