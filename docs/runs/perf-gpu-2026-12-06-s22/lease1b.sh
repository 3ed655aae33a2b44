# Run in session 22 as call 1b (written in session 21; GRAFT_CUDA_ATTN_DQ=4 set before it). Call 2 of 2, on next.sh's warm machine (its compile cache filled): the hybrid step and
# torch + FLA compiled training alternating, three pairs in one call (the peer's step moved 207-229 ms
# between machines of one kind in sessions 20-21, so the 1.2x needs it beside graft each time).
# Set GRAFT_CUDA_ATTN_DQ=4 before it if next.sh found the four-float atomics faster. Carry .carry, .peers.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
mkdir -p .peers/fla && tar -xJf .peers/fla.tar.xz -C .peers/fla
export GRAFT_FLA_PATH=$PWD/.peers/fla
for i in 1 2 3; do
    [ $(left 560) -gt 70 ] || break
    timeout 40 build/gpu/bench_cuda_model train-hybrid 2>>$L/train.log | grep '"model"' | sed "s/^{/{\"pair\":$i,/" |
        tee -a $R/train.jsonl | show | grep "^\[model"
    (cd tests/gpu/peers && GRAFT_PEER_TRAIN=hybrid GRAFT_PEER_COMPILE=1 timeout $(left 585) python3 peer_train.py) \
        >>$R/peer_train.jsonl 2>>$L/peer_train.log
    echo "peer_train rc $?"
done
grep -v '^{"note' $R/peer_train.jsonl | show
el pairs
tar -C $L -czf $R/misc.tar.gz .
