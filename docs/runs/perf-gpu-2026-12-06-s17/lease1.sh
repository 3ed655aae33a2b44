# lease 1 of session 17: make test-gpu on the head (sessions 15-16's kernel changes have run only
# test_cuda_gdn and test_cuda_ops on a GPU), then the GDN layer beside FLA (bc3b101d) in the same
# call, then the attention kernels. FLA's Triton autotuning runs once while graft builds and tests
# (its cache), the timed peer run right after graft's bench_gdn. Carry .carry and .peers.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
mkdir -p .peers/fla && tar -xJf .peers/fla.tar.xz -C .peers/fla
export GRAFT_FLA_PATH=$PWD/.peers/fla GRAFT_BENCH_GDN_NAIVE_TOKENS=0
(cd tests/gpu/peers && timeout 300 python3 peer_gdn.py) >$L/peer_gdn_warm.jsonl 2>$L/peer_gdn_warm.log &
warm=$!
make -j14 gpu-tests >$L/build.log 2>&1 || { grep -m 20 -E "error|warning" $L/build.log; tar -C $L -czf $R/misc.tar.gz .; exit 1; }
el built
GRAFT_GPU_CALL_S=240 sh tests/gpu/device_run.sh test 2>&1 | tee $R/test-gpu.txt | grep -E "FAIL|SKIP|passed|STOPPED|done in"
el test-gpu
wait $warm; echo "peer_gdn warm-up rc $?"
timeout 90 build/gpu/bench_gdn 2>$L/bench_gdn.log | tee $R/bench_gdn.jsonl | show | grep -E "core|layer"
el bench_gdn
t=$(left 480); [ $t -gt 150 ] && t=150
(cd tests/gpu/peers && timeout $t python3 peer_gdn.py) >$R/peer_gdn.jsonl 2>$L/peer_gdn.log
echo "peer_gdn rc $?"; show <$R/peer_gdn.jsonl | grep -E "layer|fwd|bwd"; tail -2 $L/peer_gdn.log
el peer_gdn
t=$(left 575)
if [ $t -gt 50 ]; then
    timeout $t build/gpu/bench_attention 2>$L/bench_attention.log | tee $R/bench_attention.jsonl | show | grep -E "bwd|stats\+lse"
    el bench_attention
fi
tar -C $L -czf $R/misc.tar.gz .
