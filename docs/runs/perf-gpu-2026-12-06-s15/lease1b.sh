# lease 1b of session 15, for when little device time is left (a machine's start is most of it):
# the GDN checks and the GDN layer on the head against the base (common.sh) in one call. Builds only
# test_cuda_gdn and bench_gdn; the base builds on the CPUs while the head's check runs on the GPU.
. docs/runs/perf-gpu-2026-12-06-s15/common.sh
make -j16 build/gpu/test_cuda_gdn build/gpu/bench_gdn >$L/build.log 2>&1 ||
    { grep -m 20 -E "error|warning" $L/build.log; tar -C $L -czf $R/misc.tar.gz .; exit 1; }
el built
base_build build/gpu/bench_gdn &
base=$!
build/gpu/test_cuda_gdn >$R/test_cuda_gdn.txt 2>&1; echo "test_cuda_gdn rc $?"; grep -E "FAIL|passed" $R/test_cuda_gdn.txt | tail -n 12
el test_cuda_gdn
wait $base; el base built
for run in 1 2; do
    echo "-- head $run"; timeout 60 build/gpu/bench_gdn 2>>$L/bench_gdn.log | tee -a $R/bench_gdn_head.jsonl | show
    echo "-- base $run"; (cd $B && timeout 60 build/gpu/bench_gdn 2>>$L/bench_gdn.log) | tee -a $R/bench_gdn_base.jsonl | show
    el bench_gdn $run
done
build/gpu/test_cuda_gdn --slab 32 >$R/test_cuda_gdn_slab32.txt 2>&1; echo "test_cuda_gdn --slab 32 rc $?"; grep -E "FAIL|passed" $R/test_cuda_gdn_slab32.txt | tail -n 6
el done
tar -C $L -czf $R/misc.tar.gz .
