# call 3 of session 21 (lease 2's warm machine, its torch.compile cache filled by lease 2's peer run,
# which ran out of its 220 s): the hybrid step under wgmma2 and wgmma, torch + FLA compiled training
# of the same hybrid (peer_train.py), the hybrid step under both again. Carry .carry, .peers.
# (Sent as one command line; written out here.)
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
export GRAFT_FLA_PATH=$PWD/.peers/fla
mkdir -p .peers/fla && tar -xJf .peers/fla.tar.xz -C .peers/fla
for b in wgmma2 wgmma; do
    GRAFT_CUDA_ATTN_BWD=$b timeout 40 build/gpu/bench_cuda_model train-hybrid 2>/dev/null | grep '"model"' |
        sed "s/^{/{\"attn_bwd\":\"$b\",\"round\":3,/" | tee -a $R/train.jsonl | show | grep "^\[model"
done
el g1
(cd tests/gpu/peers && GRAFT_PEER_TRAIN=hybrid GRAFT_PEER_COMPILE=1 timeout $(left 250) python3 peer_train.py) >$R/peer_train.jsonl 2>$L/pt.log
echo "peer rc $?"; grep -v '^{"note' $R/peer_train.jsonl | show; tail -3 $L/pt.log
el peer
for b in wgmma2 wgmma; do
    [ $(left 320) -gt 25 ] || break
    GRAFT_CUDA_ATTN_BWD=$b timeout 40 build/gpu/bench_cuda_model train-hybrid 2>/dev/null | grep '"model"' |
        sed "s/^{/{\"attn_bwd\":\"$b\",\"round\":4,/" | tee -a $R/train.jsonl | show | grep "^\[model"
done
el done
