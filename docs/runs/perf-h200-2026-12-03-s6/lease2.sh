# lease 2 of session 6: build, make test-gpu, then the decode and Stage 2 figures, then two profiles
set -u
. .carry/env.sh
R=$OUT
t0=$(date +%s)
el() { echo "== $(( $(date +%s)-t0 )) s: $*"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
if ! make -j16 gpu-tests >$R/build.log 2>&1; then
    echo "BUILD FAILED with warnings as errors:"; grep -m 10 -E "error|warning" $R/build.log
    make -j16 gpu-tests SAN=-Wno-error CUDA_WERROR=0 >$R/build2.log 2>&1 || { tail -30 $R/build2.log; exit 1; }
fi
el built
mkdir -p $R/logs
GRAFT_GPU_LOGS=$R/logs timeout -k 10 300 sh tests/gpu/run.sh build >$R/test-gpu.txt 2>&1
tail -25 $R/test-gpu.txt
el test-gpu
B=build/gpu/bench_cuda_model
for a in "1024 1" "8192 1" "32000 1" "8192 16" "32000 16"; do $B decode $a 64 2>/dev/null | grep '"model"'; done >$R/decode.jsonl
python3 - $R/decode.jsonl <<'PY'
import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    if "ms" in d: print(f'{d["what"]:60s} {d["ms"]:8.3f} ms {d["tok_s"]:8.0f} tok/s  floor {d["floor_ms"]:.3f} ms  kv {d["kv_mib_per_seq"]} MiB state {d["state_mib_per_seq"]} MiB')
    else: print(d)
PY
el decode
for i in 1 2; do $B stage2 2>/dev/null | grep '"model"'; done | tee $R/stage2.jsonl
el stage2
export OUTDIR=$R
sh tests/gpu/bench/profile_steps.sh dec8k-teacher embedding_kernel 0 4000 decode 8192 1 3 teacher 2>&1 | tail -16
el prof1
sh tests/gpu/bench/profile_steps.sh dec8k-hybrid embedding_kernel 0 4000 decode 8192 1 3 hybrid 2>&1 | tail -16
el prof2
gzip $R/*.csv 2>/dev/null
tar -C $R -czf $R/logs.tar.gz logs && rm -rf $R/logs
