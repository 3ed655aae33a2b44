# Session 32, call 5 (carry .carry and .peers; ~520 s) on a fresh machine that may be an H200 or an
# H100: on an H200 (the card), h200.sh (the forward and hybrid targets beside their peers);
# on an H100, where calls 1-4 measured those, Nsight Systems' per-kernel account of one 50 % hybrid
# training step after the descriptor change (profile_steps.sh), and the forwards once more.
case $(nvidia-smi --query-gpu=name --format=csv,noheader) in
*H200*) exec sh docs/runs/perf-gpu-2026-12-07-s32/h200.sh ;;
esac
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
make -j16 build/gpu/bench_cuda_model >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
el build
timeout 150 sh tests/gpu/bench/profile_steps.sh hybrid embedding_kernel 400 4500 train-hybrid 2>&1 |
    tail -30 | tee $R/profile-hybrid.txt
el profiled hybrid
tar -C $L -czf $R/misc.tar.gz .
