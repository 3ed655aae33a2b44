# Session 27's fourth call (carry .carry and .peers), on becebc9 (dkreg.patch in the engine): FLA's
# autotuning and the compiled training peer's first run fill their caches in the background while graft
# builds (their figures are not used); then the GDN layer beside FLA's chunk kernel, and the 50 % hybrid
# training step beside torch + FLA compiled, alternating, while the call's 585 s last.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
peers_warm
make -j12 build/gpu/bench_gdn build/gpu/bench_cuda_model >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
el build
wait; el warm-ups
gdn_beside_fla
hybrid_pairs 6 585
el pairs
tar -C $L -czf $R/misc.tar.gz .
