# Session 25's second call (carry .carry and .peers): the head with nt4f.patch's forward half (the
# WY and output kernels on 16 x 32 tiles; the backward's V' kernel left as it is, since call 1 timed
# it 1.5 % slower a launch) in the working tree. FLA's autotuning and the compiled training peer's
# first run fill their caches in the background while graft builds (their figures are not used);
# then test_cuda_gdn on the GPU, the GDN layer beside FLA's chunk kernel, and the 50 % hybrid
# training step beside torch + FLA compiled, alternating, while the call's 585 s last.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
mkdir -p .peers/fla && tar -xJf .peers/fla.tar.xz -C .peers/fla
export GRAFT_FLA_PATH=$PWD/.peers/fla
(cd tests/gpu/peers && GRAFT_BENCH_GDN_NAIVE_TOKENS=0 timeout 330 python3 peer_gdn.py) >$L/fla_warm.jsonl 2>$L/fla_warm.log &
(cd tests/gpu/peers && GRAFT_PEER_TRAIN=hybrid GRAFT_PEER_COMPILE=1 timeout 330 python3 peer_train.py) \
    >$L/train_warm.jsonl 2>$L/train_warm.log &
make -j12 build/gpu/bench_gdn build/gpu/bench_cuda_model build/gpu/test_cuda_gdn >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
el build
wait; el warm-ups
build/gpu/test_cuda_gdn >$R/test_cuda_gdn.txt 2>&1; echo "test_cuda_gdn rc $?: $(tail -n 1 $R/test_cuda_gdn.txt)"
gzip -9 $R/test_cuda_gdn.txt
timeout 60 build/gpu/bench_gdn 2>>$L/bench_gdn.log | grep '^{' | tee $R/bench_gdn.jsonl | show | grep -E "layer fwd\+bwd D|core"
(cd tests/gpu/peers && GRAFT_BENCH_GDN_NAIVE_TOKENS=0 timeout 90 python3 peer_gdn.py) >$R/peer_gdn.jsonl 2>>$L/peer_gdn.log
echo "peer_gdn rc $?"; cat $R/bench_gdn.jsonl $R/peer_gdn.jsonl | grep '^{' | show | grep -E "layer fwd\+bwd D"
el gdn
hybrid_pairs 4 585
el pairs
tar -C $L -czf $R/misc.tar.gz .
