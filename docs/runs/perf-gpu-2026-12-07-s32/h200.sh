# Session 32, call 4 (carry .carry and .peers; ~500 s), for the card: on the H200, the forwards
# of the sdpa targets (rounds 1 and 2 around sdpa, on a quiet GPU), then the peers warmed (FLA's
# autotuning, torch.compile) and the 50 % hybrid training step beside torch + FLA compiled.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
B=${BUDGET:-560}
make -j16 build/gpu/bench_cuda_model >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
el build
forward_rounds
peers_warm
wait
el warm
hybrid_pairs 3 $B
el done
tar -C $L -czf $R/misc.tar.gz .
