#!/bin/sh
# One command for the GPU machine: the GDN check, then the benchmark with its
# peers, logs and JSON lines under $OUT (or build/gpu/out).
#   here:   make gdn-gpu-portable          (static OpenBLAS / cudart; carry build/gpu-portable)
#   there:  GRAFT_FLA_PATH=<flash-linear-attention checkout> sh tests/gpu/gpu_gdn.sh build/gpu-portable
# With a full toolchain there, `make test-gpu-gdn bench-gpu-gdn` does the same.
set -u
cd "$(dirname "$0")/../.."
BIN=${1:-build/gpu-portable}
out=${OUT:-build/gpu/out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv >"$out/gpu.txt" 2>&1
"$BIN/test_cuda_gdn" >"$out/test_cuda_gdn.log" 2>&1
rc=$?
grep -E '^FAIL' "$out/test_cuda_gdn.log" | head -n 40
echo "test_cuda_gdn: exit $rc; $(tail -n 1 "$out/test_cuda_gdn.log")"
GDN_BENCH_BIN="$BIN/bench_gdn" GDN_BENCH_OUT="$out" sh tests/gpu/bench/run_gdn.sh
brc=$?
[ $rc -eq 0 ] && [ $brc -eq 0 ]
