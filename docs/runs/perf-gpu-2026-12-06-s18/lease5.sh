# lease 5 of session 18: the training step's memory-bound passes trimmed (a norm's 1/rms kept from
# the forward instead of recomputed, 57 rstd kernels a step; the RMSNorm backward's dw summed in
# the dx kernel's pass over dy and x; the training residuals added in the epilogues of o_proj, the
# GDN out-projection and down, cublasLt's C != D, instead of 56 add kernels). First the GPU checks
# of the changed ops and of training (test_cuda_ops, test_cuda_train, test_cuda_model, test_cuda_gdn,
# the unit tests on the device), then the plain and hybrid steps on the head and on prev (this tree
# with .carry/prev.patch: a051298's engine, built beside it), alternating (the session's last
# 368 s of device time leave no room for the whole make test-gpu). Carry .carry (with prev.patch: git diff HEAD a051298 -- engine > .carry/prev.patch).
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
(tree_build prev build/gpu/bench_cuda_model) >$L/trees.log 2>&1 &
trees=$!
make -j12 gpu-tests >$L/build.log 2>&1 || { grep -m 20 -E "error|warning" $L/build.log; exit 1; }
el built
for t in test_cuda_ops test_cuda_train test_cuda_model test_cuda_gdn; do
    timeout 60 build/gpu/$t >$L/$t.txt 2>&1; echo "$t rc $? $(grep -cE '^FAIL|FAIL ' $L/$t.txt) FAIL lines: $(tail -1 $L/$t.txt)"
    grep -E "^FAIL|FAIL " $L/$t.txt | head -5
done
for u in test_train_grad test_transformer test_train_ref; do
    GRAFT_TEST_DEVICE=cuda GRAFT_CUDA_FP32=1 timeout 60 build/tests/$u >$L/$u.txt 2>&1; echo "$u on the device rc $?: $(tail -1 $L/$u.txt)"
done
grep -E "rmsnorm_backward.*2100|linear_add" $L/test_cuda_ops.txt | head -12 >$R/new-checks.txt
el checks
wait $trees; cat $L/trees.log; el prev built
train() { # train TREE KIND
    d=.; [ $1 = head ] || d=/tmp/$1
    (cd $d && timeout 60 build/gpu/bench_cuda_model train-$2 2>>$L/train.log) | grep '"model"' |
        sed "s/^{/{\"tree\":\"$1\",/" | tee -a $R/train.jsonl | show | grep -E "^\[model\]" | sed "s/^/$1: /"
}
for round in 1 2; do
    for t in head prev; do train $t hybrid; done
    [ $(left 230) -gt 0 ] || break
done
for t in head prev; do train $t plain; done
el train
tar -C $L -czf $R/misc.tar.gz .
