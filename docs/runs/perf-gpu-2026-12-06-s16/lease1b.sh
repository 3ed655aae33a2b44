# lease 1b of session 16, for when little device time is left (a machine's start is most of it): the
# checks of the kernels sessions 15-16 changed (test_cuda_gdn: every GDN kernel; test_cuda_ops: the
# attention kernels, the wgmma backward among them) and the GDN layer and the attention kernels on the
# head against mid (60f155c, common.sh) in one call. The mid tree builds while the checks run.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
LIMIT=${LIMIT:-540} # seconds this call may run: the later benches are skipped past it
make -j16 build/gpu/test_cuda_gdn build/gpu/test_cuda_ops build/gpu/bench_gdn build/gpu/bench_attention >$L/build.log 2>&1 ||
    { grep -m 20 -E "error|warning" $L/build.log; tar -C $L -czf $R/misc.tar.gz .; exit 1; }
el built
tree_build mid build/gpu/bench_gdn build/gpu/bench_attention >$L/trees.log 2>&1 &
trees=$!
build/gpu/test_cuda_gdn >$R/test_cuda_gdn.txt 2>&1; echo "test_cuda_gdn rc $?"; grep -E "^FAIL|passed" $R/test_cuda_gdn.txt | tail -n 12
build/gpu/test_cuda_ops >$R/test_cuda_ops.txt 2>&1; echo "test_cuda_ops rc $?"; grep -E "^FAIL|passed" $R/test_cuda_ops.txt | tail -n 12
el checks
wait $trees; cat $L/trees.log; el mid built
for run in 1 2; do
    for t in head mid; do
        d=.; [ $t = head ] || d=/tmp/$t
        echo "-- $t $run"; (cd $d && timeout 60 build/gpu/bench_gdn 2>>$L/bench_gdn.log) | tee -a $R/bench_gdn_$t.jsonl | show | grep -E "core|layer fwd\+bwd"
    done
    el bench_gdn $run
    [ $(left $((LIMIT - 60))) -gt 0 ] || break
done
for t in head mid; do
    [ $(left $LIMIT) -gt 50 ] || break
    d=.; [ $t = head ] || d=/tmp/$t
    echo "-- $t attention"; (cd $d && timeout 50 build/gpu/bench_attention 2>>$L/bench_attention.log) | tee -a $R/bench_attention_$t.jsonl | show | grep -E "bwd|stats\+lse B"
done
el done
tar -C $L -czf $R/misc.tar.gz .
