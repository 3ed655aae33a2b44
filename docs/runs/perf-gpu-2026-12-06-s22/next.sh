# Not run: session 22 had too little device time left to start a machine. For the next session
# (carry .carry, after `git diff ebc0d43 40490f9^ -- engine >.carry/dg-before.patch` here): the
# local backward's outputs as session 22 left them (40490f9: the dg scan on one warp, lane 0 summing
# in registers, where one thread stored two values a row; 59d3a82: dv as column pairs and dk 16
# bytes a store, where each was one element a store) against the code before both, built beside it
# in /tmp/dg-before by common.sh's tree_build: test_cuda_gdn first (their first run on a GPU), then
# bench_gdn alternating, two rounds, then Nsight Compute's duration of one local backward launch at
# 16 x 2048 under each (1.49 ms before, in lease4.sh).
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
make -j16 build/gpu/bench_gdn build/gpu/test_cuda_gdn >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
build/gpu/test_cuda_gdn >$R/test_cuda_gdn.txt 2>&1; echo "test_cuda_gdn rc $?: $(tail -n 1 $R/test_cuda_gdn.txt)"
tree_build dg-before build/gpu/bench_gdn || exit 1
el build
for round in 1 2; do
    for tree in . /tmp/dg-before; do
        [ $(left 480) -gt 40 ] || break 2
        name=$( [ $tree = . ] && echo after || echo before )
        timeout 60 $tree/build/gpu/bench_gdn 2>>$L/bench_gdn.log | grep '^{' | sed "s/^{/{\"tree\":\"$name\",\"round\":$round,/" |
            tee -a $R/bench_gdn-dg.jsonl | show | grep -E "core bwd D|layer fwd\+bwd D" | sed "s/^/$name: /"
    done
done
el bench_gdn
for tree in . /tmp/dg-before; do
    [ $(left 560) -gt 40 ] || break
    name=$( [ $tree = . ] && echo after || echo before )
    GRAFT_BENCH_GDN_TOKENS=32768 timeout 40 ncu --clock-control none -k regex:gdn_bwd_local_kernel --launch-skip 2 \
        --launch-count 1 --section SpeedOfLight $tree/build/gpu/bench_gdn >$R/ncu-bwd-local-$name.txt 2>&1
    grep -E "Duration|Compute \(SM\)" $R/ncu-bwd-local-$name.txt | sed "s/^/$name: /"
done
el ncu
