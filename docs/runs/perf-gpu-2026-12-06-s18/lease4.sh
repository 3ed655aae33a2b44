# lease 4 of session 18: the forward with statistics on the head (cfg 23, the default; a051298) and
# transformers' sdpa forward alternating in one call (head, peer, head, peer as time allows): lease 1
# measured 1.40x / 1.33x, the first call to reach both targets, and the peer moved ~2 % between
# session 17's calls. Carry .carry.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
make -j14 build/gpu/bench_cuda_model >$L/build.log 2>&1 || { grep -m 20 -E "error|warning" $L/build.log; exit 1; }
el built
fwd() {
    timeout 100 build/gpu/bench_cuda_model forward 2>>$L/forward.log | grep '"model"' |
        sed "s/^{/{\"round\":$1,/" | tee -a $R/forward.jsonl | show | grep qwen2.5
    el "forward $1"
}
peer() {
    (cd tests/gpu/peers && GRAFT_PEER_EAGER=0 GRAFT_PEER_CASES=qwen2.5-1.5b:4:2048,qwen2.5-1.5b:1:8192 timeout 100 python3 peer_forward.py) |
        sed "s/^{/{\"round\":$1,/" >>$R/peer_forward.jsonl 2>>$L/peer_forward.log
    grep '"round":'$1 $R/peer_forward.jsonl | show | grep qwen2.5
    el "peer $1"
}
fwd 1
peer 1
fwd 2
[ $(left 330) -gt 0 ] && peer 2
tar -C $L -czf $R/misc.tar.gz .
