# Session 23, call 2 (carry .carry; the session's last few minutes of device time: one short call):
# bench_gdn on the head (the core figures with their new data-flow floor, flow_ms / of_flow), then
# where the GDN local backward spends its time now that its output stores and dg scan are wider
# (session 22's profile, before them: 1.49 ms): gdn_ncu_source.sh at 16 x 2048, one launch, warp
# states and source counters, for the next round's kernel work.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
make -j16 build/gpu/bench_gdn >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
el build
timeout 40 build/gpu/bench_gdn 2>>$L/bench_gdn.log | grep '^{' | tee $R/bench_gdn-lease2.jsonl | show | grep -E "core|layer fwd\+bwd D"
el bench_gdn
timeout $(left 170) sh tests/gpu/bench/gdn_ncu_source.sh bwd_local build $R >$R/top-bwd_local.txt 2>&1
echo "bwd_local rc $?"; head -12 $R/top-bwd_local.txt
rm -f $R/ncu_bwd_local.ncu-rep
el ncu
