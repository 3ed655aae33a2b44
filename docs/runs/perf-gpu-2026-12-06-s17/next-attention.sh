# Not run yet (written at the end of session 17): the attention forward's cfgs 25, 26 and 27 (flash-
# attention-3's 128 x 128 tile on wgmma: overlapped / two tiles ahead / overlapped with ping-pong;
# checked in the emulation only) beside cfg 23, the default, in bench_attention (which times every
# shape), then through the teacher forward with statistics under each as time allows, and
# transformers' sdpa forward in the same call. Carry .carry; ~500 s on a fresh machine.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
make -j14 gpu-tests >$L/build.log 2>&1 || { grep -m 20 -E "error|warning" $L/build.log; exit 1; }
el built
timeout 100 build/gpu/test_cuda_ops >$R/test_cuda_ops.txt 2>&1; echo "test_cuda_ops rc $?"; grep -E "FAIL|passed" $R/test_cuda_ops.txt | head
el test_cuda_ops
timeout 90 build/gpu/bench_attention 2>$L/bench_attention.log | tee $R/bench_attention.jsonl | show | grep -E "cfg 2[3-7]"
el bench_attention
for c in 25 26 27 23; do
    [ $(left 500) -gt 60 ] || break
    GRAFT_CUDA_ATTN_CFG=$c timeout 100 build/gpu/bench_cuda_model forward 2>>$L/forward.log | grep '"model"' |
        sed "s/^{/{\"attn_cfg\":$c,/" | tee -a $R/forward.jsonl | show | grep qwen2.5
    el "forward cfg $c"
done
(cd tests/gpu/peers && GRAFT_PEER_EAGER=0 GRAFT_PEER_CASES=qwen2.5-1.5b:4:2048,qwen2.5-1.5b:1:8192 timeout $(left 590) python3 peer_forward.py) >$R/peer_forward.jsonl 2>$L/peer_forward.log
show <$R/peer_forward.jsonl
tar -C $L -czf $R/misc.tar.gz .
