# Session 22, call 4 (carry .carry): where the GDN core's three slowest kernels spend their time,
# line by line, for the next round's kernel work: tests/gpu/bench/gdn_ncu_source.sh on bench_gdn at
# 16 x 2048 for the local backward, the backward's dh pass and the forward state pass (one launch
# each, warp states and source counters); the per-line CSVs come back for the phase breakdown.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
make -j16 gpu-tests >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
el build
for k in bwd_local bwd_state state; do
    [ $(left 560) -gt 60 ] || break
    timeout $(left 570) sh tests/gpu/bench/gdn_ncu_source.sh $k build $R >$R/top-$k.txt 2>&1
    echo "$k rc $?"; head -12 $R/top-$k.txt
    rm -f $R/ncu_$k.ncu-rep
    el $k
done
