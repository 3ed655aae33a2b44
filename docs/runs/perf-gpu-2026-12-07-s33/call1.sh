# Session 33, call 1, on any Hopper card (carry .carry with zgbase.patch; ~570 s):
# 1. the head (each weight matrix's first gradient of a step written by its product, beta 0, and
#    tf_zero_grads zeroing only the rest: engine/model/grads.c) and zgbase (the head without that:
#    .carry/zgbase.patch, the reverse of the change in engine/) built side by side;
# 2. test_cuda_ops (every op against the CPU backend: be_linear_backward's "=" form from NaN, and the
#    first GPU run of cfg 32, cfg 23 with the block's barrier once every two tiles) and test_cuda_train
#    (training steps against the CPU backend) on the head;
# 3. the 50 % hybrid training step, head and zgbase alternating, three rounds; the plain step once each;
# 4. bench_gemm's weight-gradient products, dW += (beta 1) and dW = (beta 0);
# 5. cfg 32 against cfg 23: bench_attention twice, then the forwards of the sdpa targets under 23, 32,
#    23, 32 (no sdpa in this call), while time lasts.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
B=${BUDGET:-570}
d=/tmp/zgbase
rm -rf $d && mkdir -p $d && tar --exclude=./.peers --exclude=./build -cf - . | tar -xf - -C $d
(cd $d && patch -s -p1 <.carry/zgbase.patch) || { echo "zgbase.patch does not apply"; exit 1; }
(cd $d && make -j8 build/gpu/bench_cuda_model >$L/build-zgbase.log 2>&1; echo "zgbase build rc $?") &
make -j8 build/gpu/test_cuda_ops build/gpu/test_cuda_train build/gpu/bench_cuda_model build/gpu/bench_gemm \
    build/gpu/bench_attention >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
wait
el build
timeout 120 build/gpu/test_cuda_ops >$L/test_cuda_ops.txt 2>&1
echo "test_cuda_ops rc $?: $(tail -n 1 $L/test_cuda_ops.txt)"; grep FAIL $L/test_cuda_ops.txt | head
echo "cfg 32 checks passed: $(grep -cE "PASS.*cfg32\b" $L/test_cuda_ops.txt); linear_backward: $(grep -c "PASS.*linear_backward" $L/test_cuda_ops.txt)"
gzip -c $L/test_cuda_ops.txt >$R/test_cuda_ops.txt.gz
timeout 150 build/gpu/test_cuda_train >$R/test_cuda_train.txt 2>&1
echo "test_cuda_train rc $?: $(tail -n 1 $R/test_cuda_train.txt)"
el tests
step() { # TREE KIND ROUND
    dir=.; [ $1 = head ] || dir=$d
    [ $(left $B) -gt 45 ] || return 0
    timeout 60 $dir/build/gpu/bench_cuda_model $2 2>>$L/train-$1.log | grep '"model"' |
        sed "s/^{/{\"tree\":\"$1\",\"round\":$3,/" | tee -a $R/train.jsonl | show | grep "^\[model" | sed "s/^/$1: /"
}
for round in 1 2 3; do step head train-hybrid $round; step zgbase train-hybrid $round; done
step zgbase train-plain 1; step head train-plain 1
el train
[ $(left $B) -gt 60 ] && timeout 60 build/gpu/bench_gemm 2>/dev/null | grep '^{' | tee $R/bench_gemm.jsonl | show | grep -E "dW"
el gemm
for round in 1 2; do
    [ $(left $B) -gt 40 ] || break
    timeout 40 build/gpu/bench_attention 2>/dev/null | grep '^{' | sed "s/^{/{\"round\":$round,/" |
        tee -a $R/bench_attention.jsonl | show | grep -E "\[cfg (23|32)" | cut -c1-50,90-120
done
el attention
for c in 23 32 23 32; do
    [ $(left $B) -gt 35 ] || break
    GRAFT_CUDA_ATTN_CFG=$c timeout 60 build/gpu/bench_cuda_model forward-targets 2>>$L/forward.log |
        grep '"model"' | sed "s/^{/{\"cfg\":$c,/" | tee -a $R/forward.jsonl | show | grep "^\[model" | sed "s/^/cfg $c: /"
done
el done
tar -C $L -czf $R/misc.tar.gz .
