# For the next session (written in session 31, not run: too little device time was left to start a
# machine). Carry .carry with base.patch = `git diff -R dbc3ce9~1 HEAD -- engine/backend/cuda/cuda_attention*
# engine/backend/cuda/cuda_wgmma.cuh` (~150 s): the attention forward's and backward's wgmma descriptors
# built once a tile and stepped with one add (wgmma_desc_at), the warpgroup's index through a
# shuffle, against the same tree without that change (base, built beside it by tree_build):
# test_cuda_ops on the change (every block shape and both backward kernels against the CPU
# backend), then bench_attention on the change, on base, and on the change again while time is left.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
make -j16 build/gpu/test_cuda_ops build/gpu/bench_attention >$L/build.log 2>&1 &
tree_build base build/gpu/bench_attention &
wait
[ -x build/gpu/bench_attention ] || { tail -20 $L/build.log; exit 1; }
el build
timeout 60 build/gpu/test_cuda_ops >$L/test_cuda_ops.txt 2>&1
echo "test_cuda_ops rc $?: $(tail -n 1 $L/test_cuda_ops.txt)"; grep FAIL $L/test_cuda_ops.txt | head
gzip -c $L/test_cuda_ops.txt >$R/test_cuda_ops-descs.txt.gz
el tests
for t in descs base descs; do
    [ $(left 150) -gt 25 ] || break
    d=.; [ $t = base ] && d=/tmp/base
    timeout 40 $d/build/gpu/bench_attention 2>/dev/null | grep '^{' | sed "s/^{/{\"tree\":\"$t\",/" | tee -a $R/bench_attention-descs.jsonl |
        show | grep -E "\[cfg (23|30)|two warpgroups\] bwd" | grep -E "stats|fwd B|bwd B" | sed "s/^/$t: /" | cut -c1-60,100-140
    el $t
done
