# Session 26's third call, on call 2's warm H200 (carry .carry, .peers; the same tree), with the
# session's last ~300 s of device time: the training targets' other figures on the issue's card (the
# plain step's MFU) and the forward with statistics beside transformers' sdpa forward, then one more
# hybrid pair, while BUDGET (default 280) seconds last.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
B=${BUDGET:-280}
export GRAFT_FLA_PATH=$PWD/.peers/fla
timeout 60 build/gpu/bench_cuda_model train-plain 2>>$L/train.log | grep '"model"' | tee -a $R/train.jsonl | show
el plain
timeout 90 build/gpu/bench_cuda_model forward 2>>$L/forward.log | grep '"model"' | tee $R/forward.jsonl | show
el forward
(cd tests/gpu/peers && GRAFT_PEER_EAGER=0 GRAFT_PEER_CASES=qwen2.5-1.5b:4:2048,qwen2.5-1.5b:1:8192 timeout $(left $B) python3 peer_forward.py) >$R/peer_forward.jsonl 2>$L/peer_forward.log
echo "peer_forward rc $?"; cat $R/forward.jsonl $R/peer_forward.jsonl | show
el peer_forward
hybrid_pairs 1 $B
tar -C $L -czf $R/misc.tar.gz .
