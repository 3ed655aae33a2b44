# Not run yet (written in session 21, its device time spent): `make test-gpu` with the two-warpgroup
# attention backward as the default (6433c7e; session 21's run on 110b96a had the one-group kernel
# as its default and ran the new one forced only), then the hybrid step and torch + FLA compiled
# training alternating, three pairs, in one call: the peer's step moved 207-229 ms between machines
# of one kind, so the 1.2x needs it beside graft each time. The peer's first run compiles (~4 min
# on a fresh machine: lease 2 of session 21 ran out of 220 s), so it runs warm-up first while graft
# builds. Carry .carry, .peers.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
mkdir -p .peers/fla && tar -xJf .peers/fla.tar.xz -C .peers/fla
export GRAFT_FLA_PATH=$PWD/.peers/fla
peer() {
    (cd tests/gpu/peers && GRAFT_PEER_TRAIN=hybrid GRAFT_PEER_COMPILE=1 timeout $1 python3 peer_train.py) >>$R/peer_train.jsonl 2>>$L/peer_train.log
    echo "peer_train rc $?"
}
peer 300 & # fills torch.compile's cache; its figure is taken with the GPU shared with the tests: not used
GRAFT_GPU_CALL_S=300 sh tests/gpu/device_run.sh test 2>&1 | tee $L/test-gpu.txt | grep -E "FAIL|SKIP|passed|STOPPED|done in"
wait
el test-gpu
mv $R/peer_train.jsonl $R/peer_train-warmup.jsonl
for i in 1 2 3; do
    [ $(left 560) -gt 60 ] || break
    timeout 40 build/gpu/bench_cuda_model train-hybrid 2>>$L/train.log | grep '"model"' | sed "s/^{/{\"pair\":$i,/" |
        tee -a $R/train.jsonl | show | grep "^\[model"
    peer $(left 580)
done
grep -v '^{"note' $R/peer_train.jsonl | show
el pairs
tar -C $L -czf $R/misc.tar.gz .
