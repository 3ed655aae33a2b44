# lease 3 of session 17: the inference forward's residual adds moved into the epilogue of the product
# that ends each sublayer (o_proj, down, the GDN out-projection: x += y W^T). make test-gpu on that
# head, then the teacher forward with statistics on the head and on the tree before it (prev: this
# tree with .carry/prev.patch, fa06a9b's engine, built beside it), alternating, and transformers' sdpa
# forward (peer_forward.py) in the same call. Carry .carry.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
make -j14 gpu-tests >$L/build.log 2>&1 || { grep -m 20 -E "error|warning" $L/build.log; tar -C $L -czf $R/misc.tar.gz .; exit 1; }
el built
(tree_build prev build/gpu/bench_cuda_model) >$L/trees.log 2>&1 &
trees=$!
GRAFT_GPU_CALL_S=200 sh tests/gpu/device_run.sh test 2>&1 | tee $R/test-gpu.txt | grep -E "FAIL|SKIP|passed|STOPPED|done in"
el test-gpu
wait $trees; cat $L/trees.log; el prev built
fwd() { # fwd TREE: bench_cuda_model forward in that tree, its lines tagged with the tree
    d=.; [ $1 = head ] || d=/tmp/$1
    echo "-- $1 forward"
    (cd $d && timeout 110 build/gpu/bench_cuda_model forward 2>>$L/forward.log) | grep '"model"' |
        sed "s/^{/{\"tree\":\"$1\",/" | tee -a $R/forward.jsonl | show | grep -E "qwen2.5"
    el "$1 forward"
}
fwd prev
fwd head
(cd tests/gpu/peers && GRAFT_PEER_EAGER=0 GRAFT_PEER_CASES=qwen2.5-1.5b:4:2048,qwen2.5-1.5b:1:8192 timeout 60 python3 peer_forward.py) >$R/peer_forward.jsonl 2>$L/peer_forward.log
echo "peer_forward rc $?"; show <$R/peer_forward.jsonl
el peer_forward
[ $(left 400) -gt 0 ] && fwd prev
[ $(left 490) -gt 0 ] && fwd head
tar -C $L -czf $R/misc.tar.gz .
