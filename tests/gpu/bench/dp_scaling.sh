#!/bin/sh
# Data-parallel scaling on a machine with several GPUs (issue 14): runs
# build/gpu/bench_dp (tests/gpu/model/bench_dp.c) as 1, 2, 4 and 8 ranks
# (as many as there are GPUs; GRAFT_DP_GPUS="1 2" picks) under mpirun, one
# process per GPU, NVLink multicast off (NCCL_NVLS_ENABLE=0, as graft sets it),
# then prints one table:
#   - recovery training of the qwen2.5-1.5b-shaped hybrid, B x T tokens per GPU
#     (global batch grows with the GPUs): tokens/s, per GPU, and the scaling
#     efficiency = (tokens/s per GPU at N) / (tokens/s at 1). Targets: >= 90 % at
#     2 GPUs, >= 85 % at 8;
#   - the qwen3-8b-shaped teacher's statistics over one fixed corpus split
#     between the GPUs: tokens/s and speed-up over 1 GPU. Target: >= 7x at 8;
#   - all-reduce (f32 sum) bus bandwidth, nccl-tests' busbw = bytes / time x
#     2 (n - 1) / n. On H200 NVLink (NVSwitch) nccl-tests' all_reduce_perf
#     reaches roughly 350-450 GB/s busbw at 1 GiB (HGX H100/H200, NVLS off); far
#     below (tens of GB/s) means the ranks talk over PCIe or sockets.
# Usage (repository root, on the GPU machine, after make gpu-tests):
#   sh tests/gpu/bench/dp_scaling.sh [build]        writes build/gpu/logs/dp.jsonl
# Needs Open MPI's mpirun (GRAFT_MPIRUN overrides) and NCCL in the build.
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/../../.."
export GRAFT_SHARED="${GRAFT_SHARED:-$(cd .. && pwd)/shared}"
export NCCL_NVLS_ENABLE="${NCCL_NVLS_ENABLE:-0}"
logs=${GRAFT_GPU_LOGS:-$BUILD/gpu/logs}
mkdir -p "$logs"
out="$logs/dp.jsonl"
: >"$out"
bin="$BUILD/gpu/bench_dp"
[ -x "$bin" ] || { echo "dp_scaling: $bin is not built (make gpu-tests)"; exit 1; }
MPIRUN=${GRAFT_MPIRUN:-mpirun}
command -v "$MPIRUN" >/dev/null 2>&1 || { echo "dp_scaling: no mpirun (Open MPI) on this machine"; exit 77; }
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
[ "$ngpu" -ge 1 ] || { echo "dp_scaling: no GPU"; exit 77; }
counts=${GRAFT_DP_GPUS:-}
if [ -z "$counts" ]; then
    for n in 1 2 4 8; do [ "$n" -le "$ngpu" ] && counts="$counts $n"; done
fi
root=""
[ "$(id -u)" -eq 0 ] && root="--allow-run-as-root"
status=0
for n in $counts; do
    printf '== %d GPU(s)\n' "$n"
    # shellcheck disable=SC2086
    GRAFT_BENCH_DP=1 $MPIRUN -q $root --bind-to none -np "$n" -x GRAFT_SHARED -x NCCL_NVLS_ENABLE -x GRAFT_BENCH_DP \
        -x GRAFT_BENCH_B -x GRAFT_BENCH_T -x GRAFT_BENCH_STEPS -x GRAFT_BENCH_STATS_SEQS -x GRAFT_BENCH_DP_ONLY \
        "$bin" >"$logs/dp_$n.out" 2>"$logs/dp_$n.log"
    rc=$?
    grep '^{' "$logs/dp_$n.out" | tee -a "$out"
    [ $rc -eq 0 ] || { status=1; echo "   FAILED (exit $rc):"; tail -n 5 "$logs/dp_$n.log" | sed 's/^/   | /'; }
done
python3 - "$out" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
train = {r["ranks"]: r for r in rows if r["bench"] == "dp_train"}
stats = {r["ranks"]: r for r in rows if r["bench"] == "dp_stats"}
print()
if train:
    base = train.get(1)
    print("recovery training, %s" % next(iter(train.values()))["what"])
    print("  GPUs   step ms     tok/s   tok/s/GPU   efficiency")
    for n in sorted(train):
        r = train[n]
        eff = "%9.1f %%" % (100 * r["tok_s_per_gpu"] / base["tok_s_per_gpu"]) if base else "        -"
        print("  %4d  %8.1f  %8.0f  %10.0f  %s" % (n, r["step_ms"], r["tok_s"], r["tok_s_per_gpu"], eff))
if stats:
    base = stats.get(1)
    print("statistics, %s" % next(iter(stats.values()))["what"])
    print("  GPUs        ms     tok/s   speed-up")
    for n in sorted(stats):
        r = stats[n]
        up = "%8.2fx" % (r["tok_s"] / base["tok_s"]) if base else "        -"
        print("  %4d  %8.1f  %8.0f  %s" % (n, r["ms"], r["tok_s"], up))
ar = [r for r in rows if r["bench"] == "dp_allreduce"]
if ar:
    print("all-reduce f32 sum (busbw = bytes / time x 2 (n-1) / n)")
    print("  GPUs          bytes        ms   algbw GB/s   busbw GB/s")
    for r in ar:
        print("  %4d  %13.0f  %8.3f  %11.1f  %11.1f" % (r["ranks"], r["bytes"], r["ms"], r["algbw_gbs"], r["busbw_gbs"]))
PY
exit $status
