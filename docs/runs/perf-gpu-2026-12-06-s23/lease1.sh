# Session 23's first call (carry .carry; here first: `git diff HEAD ebc0d43 -- engine >.carry/mid.patch`,
# `git diff HEAD 40490f9^ -- engine >.carry/before.patch`, HEAD = 67cdaa1). Three trees of the GDN core
# backward, none timed before: after (67cdaa1: the dh pass's kFix operands row-major), mid (ebc0d43:
# session 22's local-backward output stores and one-warp dg scan) and before (40490f9^, the code
# before both). test_cuda_gdn on the GPU first, then bench_gdn alternating the three, two rounds,
# then Nsight Compute's duration of one launch of each changed kernel at 16 x 2048 under the trees
# that differ in it, then make test-gpu on the head when the call has room.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
make -j16 build/gpu/bench_gdn build/gpu/test_cuda_gdn >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
el build
(tree_build mid build/gpu/bench_gdn; echo "mid tree rc $?") >$L/mid.txt 2>&1 &
(tree_build before build/gpu/bench_gdn; echo "before tree rc $?") >$L/before.txt 2>&1 &
build/gpu/test_cuda_gdn >$R/test_cuda_gdn.txt 2>&1; echo "test_cuda_gdn rc $?: $(tail -n 1 $R/test_cuda_gdn.txt)"
wait; cat $L/mid.txt $L/before.txt
el trees
tree_dir() { case $1 in after) echo . ;; *) echo /tmp/$1 ;; esac; }
for round in 1 2; do
    for name in after mid before; do
        [ $(left 330) -gt 30 ] || break 2
        timeout 60 $(tree_dir $name)/build/gpu/bench_gdn 2>>$L/bench_gdn.log | grep '^{' | sed "s/^{/{\"tree\":\"$name\",\"round\":$round,/" |
            tee -a $R/bench_gdn-trees.jsonl | show | grep -E "core bwd D|layer fwd\+bwd D" | sed "s/^/$name: /"
    done
done
el bench_gdn
ncu1() { # ncu1 KERNEL TREE
    [ $(left 420) -gt 30 ] || return
    GRAFT_BENCH_GDN_TOKENS=32768 timeout 40 ncu --clock-control none -k regex:$1 --launch-skip 2 --launch-count 1 \
        --section SpeedOfLight $(tree_dir $2)/build/gpu/bench_gdn >$L/ncu.txt 2>&1
    { echo "==== $1 under $2"; cat $L/ncu.txt; } >>$R/ncu-lease1.txt
    grep -E "Duration|Compute \(SM\)" $L/ncu.txt | sed "s/^/$1 $2: /"
}
ncu1 gdn_bwd_state_kernel after; ncu1 gdn_bwd_state_kernel mid
ncu1 gdn_bwd_local_kernel mid; ncu1 gdn_bwd_local_kernel before
el ncu
room=$(left 585)
if [ $room -lt 210 ]; then echo "== make test-gpu not run: $room s left"; exit 0; fi
timeout $room sh tests/gpu/device_run.sh test >$L/device-test.log 2>&1
echo "== device_run test rc $?"; el test
tail -n 22 $OUT/test-summary.txt
