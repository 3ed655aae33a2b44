# lease 1 of session 16: make test-gpu on the head (sessions 14-16's GDN and attention changes, none yet
# run on a GPU in this form), then the GDN layer on the head, mid and base trees (common.sh), the
# attention kernels on head and mid (the wgmma backward's double-buffered row tiles), the GDN layer
# again, and the hybrid training step and Stage 2 on head and base if time is left. No FLA here.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
make -j14 gpu-tests >$L/build.log 2>&1 || { grep -m 20 -E "error|warning" $L/build.log; tar -C $L -czf $R/misc.tar.gz .; exit 1; }
el built
(tree_build mid build/gpu/bench_gdn build/gpu/bench_attention && tree_build base build/gpu/bench_gdn build/gpu/bench_cuda_model) >$L/trees.log 2>&1 &
trees=$!
GRAFT_GPU_CALL_S=240 sh tests/gpu/device_run.sh test 2>&1 | tee $R/test-gpu.txt | grep -E "FAIL|SKIP|passed|STOPPED|done in"
el test-gpu
wait $trees; cat $L/trees.log; el trees built
for run in 1 2; do
    for t in head mid base; do
        d=.; [ $t = head ] || d=/tmp/$t
        echo "-- $t $run"; (cd $d && timeout 80 build/gpu/bench_gdn 2>>$L/bench_gdn.log) | tee -a $R/bench_gdn_$t.jsonl | show | grep -E "core|layer fwd\+bwd"
    done
    el bench_gdn $run
    if [ $run = 1 ]; then
        for t in head mid; do
            d=.; [ $t = head ] || d=/tmp/$t
            echo "-- $t attention"; (cd $d && timeout 60 build/gpu/bench_attention 2>>$L/bench_attention.log) | tee -a $R/bench_attention_$t.jsonl | show | grep -E "bwd|stats\+lse B"
        done
        el bench_attention
    fi
    [ $(left 470) -gt 0 ] || break
done
if [ $(left 540) -gt 50 ]; then
    echo "-- head train-hybrid"; timeout 40 build/gpu/bench_cuda_model train-hybrid 2>>$L/train.log | grep '"model"' | tee -a $R/train.jsonl | show
    echo "-- base train-hybrid"; (cd /tmp/base && timeout 40 build/gpu/bench_cuda_model train-hybrid 2>>$L/train.log) | grep '"model"' | tee -a $R/train.jsonl | show
    el train-hybrid
fi
if [ $(left 560) -gt 30 ]; then
    echo "-- head stage2"; timeout 30 build/gpu/bench_cuda_model stage2 2>>$L/stage2.log | grep '"model"' | tee -a $R/stage2.jsonl | show
    echo "-- base stage2"; (cd /tmp/base && timeout 30 build/gpu/bench_cuda_model stage2 2>>$L/stage2.log) | grep '"model"' | tee -a $R/stage2.jsonl | show
    el stage2
fi
tar -C $L -czf $R/misc.tar.gz .
