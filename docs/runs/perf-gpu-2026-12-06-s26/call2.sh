# Session 26's second call, sent while call 1's H200 was warm (carry .carry, .peers; the same working
# tree): make test-gpu on it while FLA's autotuning and the compiled training peer warm up in the
# background, then the GDN layer beside FLA's chunk kernel and the hybrid training step beside torch +
# FLA compiled, alternating, while the call's 585 s last.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
peers_warm
OUT=$R timeout 300 sh tests/gpu/device_run.sh test >$L/device-test.log 2>&1; echo "== device_run test rc $?"
el test; tail -n 20 $R/test-summary.txt
make -j12 build/gpu/bench_gdn build/gpu/bench_cuda_model >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
wait; el warm-ups
gdn_beside_fla
hybrid_pairs 4 585
el pairs
tar -C $L -czf $R/misc.tar.gz .
