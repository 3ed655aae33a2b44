#!/bin/sh
# One call on the GPU machine: build graft and the GPU programs (make gpu-tests),
# then run what WHAT names, and leave at most three files in $OUT (the device
# tool brings back 8), named after WHAT so that two runs in one call keep both:
#   $OUT/WHAT-summary.txt  what ran, pass/fail lines, the benchmark table
#   $OUT/WHAT-logs.tar.gz  every log and bench.jsonl
#   $OUT/WHAT-bench.jsonl  the figures (bench runs)
# Usage (repository root, after `sh tests/gpu/carry.sh` here; carry .carry):
#   . .carry/env.sh && sh tests/gpu/device_run.sh test          every check (make test-gpu: tests/gpu/run.sh)
#   . .carry/env.sh && sh tests/gpu/device_run.sh build         only the build (a fresh machine takes minutes;
#                                                                a warm one keeps build/ for the next call)
#   . .carry/env.sh && sh tests/gpu/device_run.sh bench         kernels: GEMM roofline, attention, GDN layer,
#                                                                with their peers (torch matmul; naive torch
#                                                                and FLA GDN, FLA from .peers/fla)
#   . .carry/env.sh && sh tests/gpu/device_run.sh bench-gdn     the GDN layer beside FLA and the naive peer
#                                                                (carry .peers; FLA's Triton autotuning, ~4.5 min,
#                                                                runs once while graft builds: bench, bench-gdn, all)
#   . .carry/env.sh && sh tests/gpu/device_run.sh bench-model   graft's teacher forward, training steps,
#                                                                Stage 2 (no peers)
#   . .carry/env.sh && sh tests/gpu/device_run.sh peers-forward transformers forward peers
#   . .carry/env.sh && sh tests/gpu/device_run.sh peers-train   PyTorch training peers (torch.compile: minutes)
#   . .carry/env.sh && sh tests/gpu/device_run.sh all           everything (longer than one call allows)
# The tables of several calls make one: python3 tests/gpu/bench/table.py a/bench.jsonl b/bench.jsonl
set -u
WHAT=${1:-test}
case $WHAT in
test|build|bench|bench-gdn|bench-model|peers-forward|peers-train|all) ;;
*) echo "usage: sh tests/gpu/device_run.sh test|build|bench|bench-gdn|bench-model|peers-forward|peers-train|all" >&2; exit 2 ;;
esac
start=$(date +%s)
OUT=${OUT:-$(pwd)/build/gpu/out}
mkdir -p "$OUT"
LOGS=$(mktemp -d)
SUM="$OUT/$WHAT-summary.txt"
: >"$SUM"
say() { printf '%s\n' "$*" | tee -a "$SUM"; }

say "== device_run $WHAT $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi -L 2>&1 | tee -a "$SUM"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv 2>&1 | tee -a "$SUM"
(command -v nvcc >/dev/null && nvcc --version | tail -n 2) 2>&1 | tee -a "$SUM"
python3 -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)' 2>&1 | tail -n 1 | tee -a "$SUM"

jobs=$(nproc 2>/dev/null || echo 8)
if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
    say "NO nvcc in PATH or /usr/local/cuda/bin: graft would build without CUDA and every check would skip"
    exit 1
fi
[ -n "${GRAFT_SHARED:-}" ] || say "GRAFT_SHARED is not set (. .carry/env.sh first?): checks that need stories260K skip"
# FLA's Triton autotuning takes ~4.5 min on a fresh machine (session 8 lost a call to it): run
# peer_gdn.py once while graft builds, FLA only, to fill Triton's cache on this machine; the
# figures come from run.sh's own peer_gdn.py later, on a quiet GPU, which then takes seconds
warm=
case $WHAT in
bench|bench-gdn|all)
    export GRAFT_FLA_PATH="${GRAFT_FLA_PATH:-$PWD/.peers/fla}"
    if [ -d "$GRAFT_FLA_PATH/fla" ] && python3 -c 'import torch' 2>/dev/null; then
        (cd tests/gpu/peers && GRAFT_BENCH_GDN_NAIVE_TOKENS=0 timeout 400 python3 peer_gdn.py) \
            >"$LOGS/peer_gdn_warm.jsonl" 2>"$LOGS/peer_gdn_warm.log" &
        warm=$!
        jobs=$(( jobs > 4 ? jobs - 4 : 1 )) # leave it cores for Triton's compiles
    fi ;;
esac
if ! make -j"$jobs" gpu-tests >"$LOGS/build.log" 2>&1; then
    # a warning this machine's compilers raise and the development machine's did not: say so, go on
    say "BUILD FAILED with warnings as errors; the first lines:"
    grep -m 10 -E 'error|warning' "$LOGS/build.log" | tee -a "$SUM"
    say "RETRYING with warnings as warnings (SAN=-Wno-error CUDA_WERROR=0): fix them after this run"
    if ! make -j"$jobs" gpu-tests SAN=-Wno-error CUDA_WERROR=0 >"$LOGS/build2.log" 2>&1; then
        say "BUILD FAILED"
        tail -n 40 "$LOGS/build2.log" | tee -a "$SUM"
        tar -C "$LOGS" -czf "$OUT/$WHAT-logs.tar.gz" .
        exit 1
    fi
fi
say "built in $(( $(date +%s) - start )) s"
if [ -n "$warm" ]; then
    wait "$warm" && say "FLA's autotuning (peer_gdn.py warm-up) done at $(( $(date +%s) - start )) s" ||
        say "FLA's warm-up run failed or ran out (its log: peer_gdn_warm.log in the logs): peer_gdn.py will tune again"
fi

status=0
case $WHAT in
test|all)
    # the device tool stops a call at 10 min: stop the checks before that, so the logs come back
    left=$(( ${GRAFT_GPU_CALL_S:-580} - ($(date +%s) - start) ))
    [ $left -lt 60 ] && left=60
    GRAFT_GPU_LOGS="$LOGS" timeout -k 10 $left sh tests/gpu/run.sh build >"$LOGS/run.txt" 2>&1 || status=1
    [ $status -ne 0 ] && [ "$(tail -n 1 "$LOGS/run.txt" | grep -c 'passed,')" = 0 ] &&
        echo "STOPPED after $left s (the call's time): the checks above finished, the rest did not run" >>"$LOGS/run.txt"
    cat "$LOGS/run.txt" | tee -a "$SUM"
    say "-- every FAIL line of every log:"
    grep -E '^(FAIL|FATAL)|TIMEOUT|^\[  FAILED' "$LOGS"/*.log 2>/dev/null | sed "s|^$LOGS/||" | head -n 80 >>"$SUM"
    ;;
esac
case $WHAT in
bench|bench-gdn|bench-model|all|peers-forward|peers-train)
    peers=1 only=
    case $WHAT in
    bench) only="bench_gemm bench_attention bench_gdn peer_gemm peer_gdn" ;;
    bench-gdn) only="bench_gdn peer_gdn" ;;
    bench-model) only="bench_cuda_model" peers=0 ;;
    peers-forward) only="peer_forward" ;;
    peers-train) only="peer_train" ;;
    esac
    export GRAFT_FLA_PATH="${GRAFT_FLA_PATH:-$PWD/.peers/fla}"
    left=$(( ${GRAFT_GPU_CALL_S:-580} - ($(date +%s) - start) ))
    [ $left -lt 60 ] && left=60
    GRAFT_GPU_LOGS="$LOGS" GRAFT_BENCH_PEERS=$peers GRAFT_BENCH_ONLY=$only timeout -k 10 $left \
        sh tests/gpu/bench/run.sh build >"$LOGS/bench_run.txt" 2>&1 || status=1
    [ $status -ne 0 ] && echo "(exit status 1: a benchmark failed, or the call's $left s ran out)" >>"$LOGS/bench_run.txt"
    cat "$LOGS/bench_run.txt" >>"$SUM"
    cp "$LOGS/bench.jsonl" "$OUT/$WHAT-bench.jsonl" 2>/dev/null
    tail -n 60 "$LOGS/bench_run.txt"
    ;;
esac
say "== done in $(( $(date +%s) - start )) s, status $status"
tar -C "$LOGS" -czf "$OUT/$WHAT-logs.tar.gz" .
rm -rf "$LOGS"
exit $status
