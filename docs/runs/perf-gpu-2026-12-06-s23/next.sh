# For the next session (not run: session 23's device time was spent on asks that found no machine).
# One call on a fresh machine, carry .carry and .peers: the two missed targets' ratios again on the
# code as it stands (the GDN local backward's faster output stores, timed in session 23 against the
# code before but with no peer in that call), each beside its peer in the same call. FLA's Triton
# autotuning and the compiled training peer's first run (~4.5 and ~4 min on a fresh machine) fill
# their caches in the background while graft builds; their own figures are not used.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
peers_warm
make -j12 build/gpu/bench_gdn build/gpu/bench_cuda_model >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
el build
wait; el warm-ups
# the GDN layer (16 x 2048, 4 x 8192) and FLA's chunk kernel on the same shapes
gdn_beside_fla
# the 50 % hybrid training step and torch + FLA compiled, alternating
hybrid_pairs 3 560
el pairs
tar -C $L -czf $R/misc.tar.gz .
