# Session 26's first call (carry .carry and .peers) on the head 919e311: both missed ratios again beside
# their peers on whatever card this session gets (the targets are set on an H200; sessions 14-25 got
# H100s), then Nsight Compute's source profile of the two forward kernels furthest from their bytes
# (WY at ~2x its 72 KB a chunk, the state pass at ~2x its 96 KB), while the call's 585 s last.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
peers_warm
make -j12 build/gpu/bench_gdn build/gpu/bench_cuda_model >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
el build
wait; el warm-ups
gdn_beside_fla
hybrid_pairs 3 430
el pairs
for k in wy state; do
    [ $(left 585) -gt 75 ] || break
    timeout $(( $(left 585) - 10 )) sh tests/gpu/bench/gdn_ncu_source.sh $k build $R >$R/top-$k.txt 2>&1
    echo "== $k rc $?"; head -n 14 $R/top-$k.txt
    rm -f $R/ncu_$k.ncu-rep
    el "ncu $k"
done
nvidia-smi --query-gpu=name,clocks.sm,power.draw,clocks_throttle_reasons.active --format=csv,noheader
tar -C $L -czf $R/misc.tar.gz .
