# lease 1 of session 8: build, make test-gpu on the head, then where the GDN core's
# kernels spend their time at the hybrid training step's shape (B 4 x T 2048, 12 x 128)
set -u
. .carry/env.sh
R=$OUT
t0=$(date +%s)
el() { echo "== $(( $(date +%s)-t0 )) s: $*"; }
if ! make -j16 gpu-tests >$R/build.log 2>&1; then
    echo "BUILD FAILED with warnings as errors:"; grep -m 10 -E "error|warning" $R/build.log
    make -j16 gpu-tests SAN=-Wno-error CUDA_WERROR=0 >$R/build2.log 2>&1 || { tail -30 $R/build2.log; exit 1; }
fi
el built
mkdir -p $R/logs
GRAFT_GPU_LOGS=$R/logs timeout -k 10 200 sh tests/gpu/run.sh build >$R/test-gpu.txt 2>&1
tail -17 $R/test-gpu.txt
grep -hE '^(FAIL|FATAL)|TIMEOUT|^\[  FAILED' $R/logs/*.log 2>/dev/null | head -20
tar -C $R -czf $R/logs.tar.gz logs && rm -rf $R/logs
el test-gpu
export GRAFT_BENCH_GDN_TOKENS=8192
timeout 120 sh tests/gpu/bench/gdn_ncu.sh build >$R/gdn_ncu_b4.txt 2>&1; tail -8 $R/gdn_ncu_b4.txt
el gdn_ncu
mkdir -p $R/src
for k in bwd_local bwd_state state; do
    timeout 100 sh tests/gpu/bench/gdn_ncu_source.sh $k build $R/src >$R/src/top_$k.txt 2>&1; head -40 $R/src/top_$k.txt
    rm -f $R/src/ncu_$k.ncu-rep $R/src/ncu_${k}_src.csv.gz
    el "source $k"
done
