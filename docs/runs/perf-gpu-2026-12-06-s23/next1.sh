# For the next session's first call (not run: written after session 23's device time ran out).
# Carry .carry, with `cp docs/runs/perf-gpu-2026-12-06-s23/nt4.patch .carry/` made here first: the
# local backward's C x d products on 16 x 32 tiles, four accumulator chains a warp (39f0369, taken
# out of the tree again because no GPU had run it). In a tree beside the head with the patch:
# test_cuda_gdn on the GPU first (it compares the C 64 / d 128 kernels with the general ones bit
# for bit), then bench_gdn under the head (nt2) and nt4 alternating, two rounds, then Nsight
# Compute's duration of one local backward launch at 16 x 2048 under each (1.29 ms on the head in
# session 23's lease2.sh). Apply the patch in the tree only if test_cuda_gdn passes and it is faster.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
make -j16 build/gpu/bench_gdn >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
tree_build nt4 build/gpu/bench_gdn build/gpu/test_cuda_gdn || exit 1
el build
/tmp/nt4/build/gpu/test_cuda_gdn >$R/test_cuda_gdn-nt4.txt 2>&1
echo "test_cuda_gdn (nt4) rc $?: $(tail -n 1 $R/test_cuda_gdn-nt4.txt)"
bench_trees 2 300 $R/bench_gdn-nt.jsonl nt2=. nt4=/tmp/nt4
el bench_gdn
for t in nt2=. nt4=/tmp/nt4; do
    [ $(left 400) -gt 40 ] && ncu_launch gdn_bwd_local_kernel ${t%%=*} ${t#*=} $R/ncu-nt.txt
done
el ncu
