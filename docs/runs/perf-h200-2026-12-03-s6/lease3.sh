# lease 3 of session 6: build, make test-gpu, decode (B 1 and 16) and Stage 2 figures after the GEMV
set -u
. .carry/env.sh
R=$OUT
t0=$(date +%s)
el() { echo "== $(( $(date +%s)-t0 )) s: $*"; }
if ! make -j16 gpu-tests >$R/build.log 2>&1; then
    echo "BUILD FAILED with warnings as errors:"; grep -m 10 -E "error|warning" $R/build.log
    make -j16 gpu-tests SAN=-Wno-error CUDA_WERROR=0 >$R/build2.log 2>&1 || { tail -30 $R/build2.log; exit 1; }
fi
el built
mkdir -p $R/logs
GRAFT_GPU_LOGS=$R/logs timeout -k 10 250 sh tests/gpu/run.sh build >$R/test-gpu.txt 2>&1
tail -17 $R/test-gpu.txt
tar -C $R -czf $R/logs.tar.gz logs && rm -rf $R/logs
el test-gpu
B=build/gpu/bench_cuda_model
for a in "1024 1" "8192 1" "32000 1" "8192 16" "32000 16"; do
    $B decode $a 64 2>/dev/null | grep '"model"' >>$R/decode.jsonl
    tail -3 $R/decode.jsonl | python3 -c "
import json,sys
for l in sys.stdin:
    d=json.loads(l); print(f'{d[\"what\"]:60s} {d[\"ms\"]:7.3f} ms {d[\"tok_s\"]:6.0f} tok/s floor {d[\"floor_ms\"]:.3f}')"
done
el decode
$B stage2 2>/dev/null | grep '"model"' | tee $R/stage2.jsonl
el stage2
