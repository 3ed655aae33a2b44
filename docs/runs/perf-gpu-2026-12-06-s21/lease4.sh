# call 4 of session 21 (the same warm machine, the session's last device time): the peer twice
# around one hybrid step under wgmma2, to read the peer's spread. Carry .carry, .peers.
# (Sent as one command line; written out here.)
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
export GRAFT_FLA_PATH=$PWD/.peers/fla
mkdir -p .peers/fla && tar -xJf .peers/fla.tar.xz -C .peers/fla
pt() {
    (cd tests/gpu/peers && GRAFT_PEER_TRAIN=hybrid GRAFT_PEER_COMPILE=1 timeout $(left 170) python3 peer_train.py) >>$R/peer_train.jsonl 2>>$L/pt.log
    echo "peer rc $?"
}
pt
GRAFT_CUDA_ATTN_BWD=wgmma2 timeout 40 build/gpu/bench_cuda_model train-hybrid 2>/dev/null | grep '"model"' |
    sed "s/^{/{\"attn_bwd\":\"wgmma2\",\"round\":5,/" | tee -a $R/train.jsonl | show | grep "^\[model"
el g
[ $(left 200) -gt 60 ] && pt
grep -v '^{"note' $R/peer_train.jsonl | show
el done
