# Session 38's second call, on the machine call 1 left warm (carry .carry and .peers; ~585 s): the peers
# warmed with nothing beside them (FLA's autotuning and the compiled training peer's first run), then
# the GDN layer beside FLA's chunk kernel, then the 50 % hybrid step alternating with torch + FLA
# compiled while the call lasts: the 1.2x target again, with the peer's every rep logged (misc.tar.gz).
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
make -j16 build/gpu/bench_cuda_model build/gpu/bench_gdn >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
peers_warm
wait
el warm
gdn_beside_fla
hybrid_pairs 6 585
el done
tar -C $L -czf $R/misc.tar.gz .
