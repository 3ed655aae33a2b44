# For the next session (written in session 32, not run): every missed target on the card, the
# H200, in one call (carry .carry and .peers; ~560 s). No H200 came in sessions 28-32, and the latest
# H200 figures (session 27) predate the attention forward's 10 % (session 31's descriptors, timed in
# session 32 on H100s, where the forward then met 1.4x / 1.3x in six rounds). On an H100 it stops
# at once (its figures are in session 32's README): ask again later rather than spend the call.
# 1. the forwards of the sdpa targets, rounds 1 and 2 around sdpa, on a quiet GPU;
# 2. the peers warmed (FLA's autotuning, torch.compile), then the GDN layer beside FLA's chunk kernel;
# 3. the 50 % hybrid training step beside torch + FLA compiled, pairs while time lasts.
case $(nvidia-smi --query-gpu=name --format=csv,noheader) in
*H200*) ;;
*) echo "not an H200: $(nvidia-smi --query-gpu=name --format=csv,noheader)"; exit 0 ;;
esac
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
B=${BUDGET:-560}
make -j16 build/gpu/bench_cuda_model build/gpu/bench_gdn >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
el build
forward_rounds
peers_warm
wait
el warm
gdn_beside_fla
hybrid_pairs 4 $B
el done
tar -C $L -czf $R/misc.tar.gz .
