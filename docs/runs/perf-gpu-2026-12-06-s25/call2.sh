# Session 25's second call (carry .carry and .peers): the head with nt4f.patch's forward half (the
# WY and output kernels on 16 x 32 tiles; the backward's V' kernel left as it is, since call 1 timed
# it 1.5 % slower a launch) in the working tree. FLA's autotuning and the compiled training peer's
# first run fill their caches in the background while graft builds (their figures are not used);
# then test_cuda_gdn on the GPU, the GDN layer beside FLA's chunk kernel, and the 50 % hybrid
# training step beside torch + FLA compiled, alternating, while the call's 585 s last.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
peers_warm
make -j12 build/gpu/bench_gdn build/gpu/bench_cuda_model build/gpu/test_cuda_gdn >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
el build
wait; el warm-ups
build/gpu/test_cuda_gdn >$R/test_cuda_gdn.txt 2>&1; echo "test_cuda_gdn rc $?: $(tail -n 1 $R/test_cuda_gdn.txt)"
gzip -9 $R/test_cuda_gdn.txt
gdn_beside_fla
hybrid_pairs 4 585
el pairs
tar -C $L -czf $R/misc.tar.gz .
