# lease 1 of session 6: profiles (decode, Stage 2, the 1 x 8192 forward) and wall times
set -u
. .carry/env.sh
R=$OUT
t0=$(date +%s)
make -j16 gpu-tests >$R/build.log 2>&1 || { echo BUILD FAILED; tail -30 $R/build.log; exit 1; }
echo "built $(( $(date +%s)-t0 )) s"
B=build/gpu/bench_cuda_model
for a in "1024 1" "8192 1" "32000 1" "8192 16"; do $B decode $a 64 2>/dev/null | grep '"model"'; done | tee $R/decode.jsonl
$B stage2 2>/dev/null | grep '"model"' | tee $R/stage2.jsonl
echo "walls done $(( $(date +%s)-t0 )) s"
export OUTDIR=$R
sh tests/gpu/bench/profile_steps.sh dec1k-teacher embedding_kernel 0 4000 decode 1024 1 3 teacher 2>&1 | tail -32
echo "== $(( $(date +%s)-t0 )) s"
sh tests/gpu/bench/profile_steps.sh dec8k-hybrid embedding_kernel 0 4000 decode 8192 1 3 hybrid 2>&1 | tail -32
echo "== $(( $(date +%s)-t0 )) s"
EVERY=2 sh tests/gpu/bench/profile_steps.sh stage2 mse_kernel 5000 1200 stage2 2>&1 | tail -32
echo "== $(( $(date +%s)-t0 )) s"
sh tests/gpu/bench/profile_steps.sh fwd8k embedding_kernel 0 3000 forward-long 2>&1 | tail -30
echo "== $(( $(date +%s)-t0 )) s"
gzip $R/*.csv
