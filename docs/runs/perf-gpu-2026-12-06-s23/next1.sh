# For the next session's first call (not run: written after session 23's device time ran out).
# Carry .carry, with `git diff HEAD 39f0369^ -- engine >.carry/nt2.patch` made here first (the local
# backward's C x d products on 16 x 16 tiles, two accumulator chains a warp, as before 39f0369).
# test_cuda_gdn on the GPU (39f0369 has not run on one), then bench_gdn under the head and under nt2
# alternating, two rounds, then Nsight Compute's duration of one local backward launch at 16 x 2048
# under each (1.29 ms before, in session 23's lease2.sh).
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
make -j16 build/gpu/bench_gdn build/gpu/test_cuda_gdn >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
(tree_build nt2 build/gpu/bench_gdn; echo "nt2 tree rc $?") >$L/nt2.txt 2>&1 &
build/gpu/test_cuda_gdn >$R/test_cuda_gdn.txt 2>&1; echo "test_cuda_gdn rc $?: $(tail -n 1 $R/test_cuda_gdn.txt)"
wait; cat $L/nt2.txt
el build
for round in 1 2; do
    for tree in . /tmp/nt2; do
        [ $(left 300) -gt 30 ] || break 2
        name=$( [ $tree = . ] && echo nt4 || echo nt2 )
        timeout 60 $tree/build/gpu/bench_gdn 2>>$L/bench_gdn.log | grep '^{' | sed "s/^{/{\"tree\":\"$name\",\"round\":$round,/" |
            tee -a $R/bench_gdn-nt.jsonl | show | grep -E "core bwd D|layer fwd\+bwd D" | sed "s/^/$name: /"
    done
done
el bench_gdn
for tree in . /tmp/nt2; do
    [ $(left 400) -gt 40 ] || break
    name=$( [ $tree = . ] && echo nt4 || echo nt2 )
    GRAFT_BENCH_GDN_TOKENS=32768 timeout 40 ncu --clock-control none -k regex:gdn_bwd_local_kernel --launch-skip 2 \
        --launch-count 1 --section SpeedOfLight $tree/build/gpu/bench_gdn >$L/ncu.txt 2>&1
    { echo "==== $name"; cat $L/ncu.txt; } >>$R/ncu-nt.txt
    grep -E "Duration|Compute \(SM\)" $L/ncu.txt | sed "s/^/$name: /"
done
el ncu
