# Session 29, call 1 (carry .carry without shared/data/gutenberg-60.txt, as `carry.sh --lean` leaves
# it, and .peers): session 28's next.sh, plus test_cuda_convert after test_cuda_ops (the two GPU
# programs session 28's review commits changed: the choice file's and the refused values' checks, and
# gpu_open_refused). Its steps, as next.sh said:
# 1. test_cuda_ops (the choice file's first GPU run) and test_cuda_convert;
# 2. while graft builds, FLA's autotuning and the compiled training peer's first run (caches only);
# 3. the GDN layer beside FLA's chunk kernel (the first FLA ratio with 2f8ce24's sigmoid);
# 4. the 50 % hybrid step untuned, with GRAFT_CUDA_GEMM_TUNE=8 (its choice file filled by one run
#    before the pairs, so the timed runs take the kept choices), and torch + FLA compiled, in turn,
#    ROUNDS (4) rounds while the call's BUDGET (585) s last; the forward beside sdpa the same way once.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
peers_warm
make -j16 build/gpu/test_cuda_ops build/gpu/test_cuda_convert build/gpu/bench_gdn build/gpu/bench_cuda_model >$L/build.log 2>&1 ||
    { tail -20 $L/build.log; exit 1; }
el build
build/gpu/test_cuda_ops >$R/test_cuda_ops.txt 2>&1; echo "test_cuda_ops rc $?: $(tail -n 1 $R/test_cuda_ops.txt)"
grep -E "tuned|kept|FAIL" $R/test_cuda_ops.txt | head -20
build/gpu/test_cuda_convert >$R/test_cuda_convert.txt 2>&1; echo "test_cuda_convert rc $?: $(tail -n 1 $R/test_cuda_convert.txt)"
el test_cuda_convert
wait; el warm-ups
gdn_beside_fla
export GRAFT_CUDA_GEMM_TUNE_FILE=/tmp/gemm-choices.json
GRAFT_CUDA_GEMM_TUNE=8 timeout 60 build/gpu/bench_cuda_model train-hybrid >/dev/null 2>$L/tune-fill.log
echo "choice file filled: $(grep -c "the heuristic's first" $L/tune-fill.log) shapes timed"
tag() { sed "s/^{/{\"tune\":$1,\"round\":$2,/"; }
for round in $(seq ${ROUNDS:-4}); do
    for tune in 0 8; do
        [ $(left ${BUDGET:-585}) -gt 80 ] || break 2
        v=$([ $tune = 0 ] || echo $tune)
        GRAFT_CUDA_GEMM_TUNE=$v timeout 40 build/gpu/bench_cuda_model train-hybrid 2>>$L/train-$tune.log |
            grep '"model"' | tag $tune $round | tee -a $R/train.jsonl | show | grep "^\[model" | sed "s/^/tune $tune: /"
    done
    (cd tests/gpu/peers && GRAFT_PEER_TRAIN=hybrid GRAFT_PEER_COMPILE=1 timeout $(left ${BUDGET:-585}) python3 peer_train.py) \
        >>$R/peer_train.jsonl 2>>$L/peer_train.log
    echo "peer_train rc $?"
    if [ $round = 1 ] && [ $(left ${BUDGET:-585}) -gt 200 ]; then
        for tune in 0 8; do
            v=$([ $tune = 0 ] || echo $tune)
            GRAFT_CUDA_GEMM_TUNE=$v timeout 90 build/gpu/bench_cuda_model forward 2>>$L/forward-$tune.log |
                grep '"model"' | tag $tune 1 | tee -a $R/forward.jsonl | show | grep "^\[model" | sed "s/^/tune $tune: /"
        done
        (cd tests/gpu/peers && GRAFT_PEER_EAGER=0 GRAFT_PEER_CASES=qwen2.5-1.5b:4:2048,qwen2.5-1.5b:1:8192 \
            timeout 120 python3 peer_forward.py) >$R/peer_forward.jsonl 2>$L/peer_forward.log
        echo "peer_forward rc $?"; grep '^{' $R/peer_forward.jsonl | show | grep '^\[peer'
    fi
done
grep -v '^{"note' $R/peer_train.jsonl | show
echo "kept from the file in the timed runs: $(cat $L/train-8.log | grep -c 'from the choice file'), timed: $(cat $L/train-8.log | grep -c "the heuristic's first")"
cp /tmp/gemm-choices.json $R/ 2>/dev/null
tar -C $L -czf $R/misc.tar.gz .
