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
bench_trees 2 300 $R/bench_gdn-nt.jsonl nt4=. nt2=/tmp/nt2
el bench_gdn
for t in nt4=. nt2=/tmp/nt2; do
    [ $(left 400) -gt 40 ] && ncu_launch gdn_bwd_local_kernel ${t%%=*} ${t#*=} $R/ncu-nt.txt
done
el ncu
