# Session 22, call 5 (carry .carry; the session's last ~220 s of device time): the local backward's
# dg scan on one warp (lane 0 sums in registers, the warp writes) instead of one thread with two
# global stores a row. bench_gdn alone (no peer: lease3.sh has FLA's figures on the code before,
# another H100), then Nsight Compute's duration of one local backward launch at 16 x 2048 (1.49 ms
# in lease4.sh, before).
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
make -j16 build/gpu/bench_gdn >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
el build
timeout 60 build/gpu/bench_gdn 2>$L/bench_gdn.log | grep '^{' | tee $R/bench_gdn.jsonl | show | grep -E "core|layer fwd\+bwd"
el bench_gdn
GRAFT_BENCH_GDN_TOKENS=32768 timeout 40 ncu --clock-control none -k regex:gdn_bwd_local_kernel --launch-skip 2 \
    --launch-count 1 --section SpeedOfLight build/gpu/bench_gdn >$R/ncu-bwd-local.txt 2>&1
grep -E "Duration|Compute \(SM\)" $R/ncu-bwd-local.txt
el ncu
