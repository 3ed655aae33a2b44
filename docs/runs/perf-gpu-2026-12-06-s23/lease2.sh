# Session 23, call 2 (carry .carry; the session's last 424 s of device time: one short call): where
# the GDN local backward spends its time now that its output stores and dg scan are wider (session
# 22's profile, before them: 1.49 ms), for the next round's kernel work: gdn_ncu_source.sh on
# bench_gdn at 16 x 2048, one launch, warp states and source counters.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
make -j16 build/gpu/bench_gdn >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
el build
timeout $(left 165) sh tests/gpu/bench/gdn_ncu_source.sh bwd_local build $R >$R/top-bwd_local.txt 2>&1
echo "bwd_local rc $?"; head -12 $R/top-bwd_local.txt
rm -f $R/ncu_bwd_local.ncu-rep
el ncu
