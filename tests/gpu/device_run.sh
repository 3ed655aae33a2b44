#!/bin/sh
# One call on the GPU machine: build the GPU programs, then run what WHAT names,
# and leave at most three files in $OUT (the device tool brings back 8):
#   $OUT/summary.txt     what ran, pass/fail lines, the benchmark table
#   $OUT/logs.tar.gz     every log and bench.jsonl
#   $OUT/bench.jsonl     the figures (bench runs)
# Usage (repository root, after ../shared/tools/gpu-carry.sh here; carry .carry):
#   . .carry/env.sh && sh tests/gpu/device_run.sh test          checks (make test-gpu), ~3 min
#   . .carry/env.sh && sh tests/gpu/device_run.sh bench         C benchmarks, no peers
#   . .carry/env.sh && sh tests/gpu/device_run.sh peers-forward transformers forward peers
#   . .carry/env.sh && sh tests/gpu/device_run.sh peers-train   PyTorch training peers (torch.compile: minutes)
#   . .carry/env.sh && sh tests/gpu/device_run.sh all           everything (longer than one call allows)
set -u
WHAT=${1:-test}
OUT=${OUT:-$(pwd)/build/gpu/out}
mkdir -p "$OUT"
LOGS=$(mktemp -d)
SUM="$OUT/summary.txt"
: >"$SUM"
say() { printf '%s\n' "$*" | tee -a "$SUM"; }

say "== device_run $WHAT $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi -L 2>&1 | tee -a "$SUM"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv 2>&1 | tee -a "$SUM"
(command -v nvcc >/dev/null && nvcc --version | tail -n 2) 2>&1 | tee -a "$SUM"
python3 -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)' 2>&1 | tail -n 1 | tee -a "$SUM"

jobs=$(nproc 2>/dev/null || echo 8)
start=$(date +%s)
if ! make -j"$jobs" gpu-tests >"$LOGS/build.log" 2>&1; then
    # a warning this machine's compilers raise and the development machine's did not: say so, go on
    say "BUILD FAILED with warnings as errors; the first lines:"
    grep -m 10 -E 'error|warning' "$LOGS/build.log" | tee -a "$SUM"
    say "RETRYING with warnings as warnings (SAN=-Wno-error CUDA_WERROR=0): fix them after this run"
    if ! make -j"$jobs" gpu-tests SAN=-Wno-error CUDA_WERROR=0 >"$LOGS/build2.log" 2>&1; then
        say "BUILD FAILED"
        tail -n 40 "$LOGS/build2.log" | tee -a "$SUM"
        tar -C "$LOGS" -czf "$OUT/logs.tar.gz" .
        exit 1
    fi
fi
say "built in $(( $(date +%s) - start )) s"

status=0
case $WHAT in
test|all)
    GRAFT_GPU_LOGS="$LOGS" sh tests/gpu/run.sh build 2>&1 | tee -a "$SUM" || status=1
    grep -h -E '^(FAIL|FATAL)' "$LOGS"/test_*.log 2>/dev/null | head -n 60 >>"$SUM"
    ;;
esac
case $WHAT in
bench|all|peers-forward|peers-train)
    peers=0 only=
    [ "$WHAT" = all ] && peers=1
    [ "$WHAT" = peers-forward ] && peers=1 only=peer_forward
    [ "$WHAT" = peers-train ] && peers=1 only=peer_train
    GRAFT_GPU_LOGS="$LOGS" GRAFT_BENCH_PEERS=$peers GRAFT_BENCH_ONLY=$only sh tests/gpu/bench/run.sh build \
        >"$LOGS/bench_run.txt" 2>&1 || status=1
    cat "$LOGS/bench_run.txt" >>"$SUM"
    cp "$LOGS/bench.jsonl" "$OUT/bench.jsonl" 2>/dev/null
    tail -n 60 "$LOGS/bench_run.txt"
    ;;
esac
say "== done in $(( $(date +%s) - start )) s, status $status"
tar -C "$LOGS" -czf "$OUT/logs.tar.gz" .
rm -rf "$LOGS"
exit $status
