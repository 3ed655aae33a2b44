# lease 1 of session 15: make test-gpu on the head (the fused GDN local backward alone and the wgmma
# attention backward by default on CC 9.0, neither yet run on a GPU in this form; the GDN checkpoint's
# states kept in bf16), then the GDN layer against the base (common.sh: 6de398e's engine, the states
# in fp32 and dh' sharing h's tile), and the hybrid training step on both if time is left. No FLA
# here: its Triton autotuning (~270 s) did not fit the device time session 15 had (lease 2 runs the peers).
. docs/runs/perf-gpu-2026-12-06-s15/common.sh
make -j12 gpu-tests >$L/build.log 2>&1 || { grep -m 20 -E "error|warning" $L/build.log; tar -C $L -czf $R/misc.tar.gz .; exit 1; }
el built
GRAFT_GPU_CALL_S=250 sh tests/gpu/device_run.sh test 2>&1 | grep -E "FAIL|SKIP|passed|STOPPED|done in"
el test-gpu
echo "-- head"; timeout 100 build/gpu/bench_gdn 2>>$L/bench_gdn.log | tee -a $R/bench_gdn_head.jsonl | show
el bench_gdn head
base_build build/gpu/bench_gdn build/gpu/bench_cuda_model
el base built
echo "-- base (fp32 states)"; (cd $B && timeout 100 build/gpu/bench_gdn 2>>$L/bench_gdn.log) | tee -a $R/bench_gdn_base.jsonl | show
el bench_gdn base
# what time is left: the hybrid training step once on each tree (lease 2 repeats it with its peer)
if [ $(left 560) -gt 60 ]; then
    echo "-- head train-hybrid"; timeout 40 build/gpu/bench_cuda_model train-hybrid 2>>$L/train.log | grep '"model"' | tee -a $R/train.jsonl | show
    echo "-- base train-hybrid"; (cd $B && timeout 40 build/gpu/bench_cuda_model train-hybrid 2>>$L/train.log) | grep '"model"' | tee -a $R/train.jsonl | show
    el train-hybrid
fi
tar -C $L -czf $R/misc.tar.gz .
