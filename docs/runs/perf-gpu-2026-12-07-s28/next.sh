# For the next session (written in session 28 after its device time was spent; not run). One call,
# carry .carry and .peers (`sh tests/gpu/carry.sh --lean` first: with the full .carry the call passes
# 64 MiB). It runs what session 28 could not:
# 1. test_cuda_ops, whose tuned checks since 7b39ae5 include the GEMM choice file (a second run must
#    take every choice from the first run's file and time none; a foreign file refused at open) and
#    five refused values of GRAFT_CUDA_GEMM_TUNE: none of them has run on a GPU yet;
# 2. while graft builds, FLA's autotuning and the compiled training peer's first run (caches only);
# 3. the GDN layer beside FLA's chunk kernel (the first FLA ratio with 2f8ce24's sigmoid);
# 4. the 50 % hybrid step untuned, with GRAFT_CUDA_GEMM_TUNE=8 (its choice file filled by one run
#    before the pairs, so the timed runs take the kept choices), and torch + FLA compiled, in turn,
#    ROUNDS (4) rounds while the call's 585 s last; the forward beside sdpa the same way once.
# BUDGET (585) and TESTS (test_cuda_ops: the GPU programs run first) may be set; session 29's
# call1.sh sets TESTS to both programs its review commits changed.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
peers_warm
B=${BUDGET:-585} TESTS=${TESTS:-test_cuda_ops}
make -j16 $(for t in $TESTS; do echo build/gpu/$t; done) build/gpu/bench_gdn build/gpu/bench_cuda_model \
    >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
el build
for t in $TESTS; do
    build/gpu/$t >$R/$t.txt 2>&1; echo "$t rc $?: $(tail -n 1 $R/$t.txt)"
done
grep -E "tuned|kept|FAIL" $R/test_cuda_ops.txt | head -20
el tests
wait; el warm-ups
gdn_beside_fla
export GRAFT_CUDA_GEMM_TUNE_FILE=/tmp/gemm-choices.json
GRAFT_CUDA_GEMM_TUNE=8 timeout 60 build/gpu/bench_cuda_model train-hybrid >/dev/null 2>$L/tune-fill.log
echo "choice file filled: $(grep -c "the heuristic's first" $L/tune-fill.log) shapes timed"
for round in $(seq ${ROUNDS:-4}); do
    for tune in 0 8; do
        [ $(left $B) -gt 80 ] || break 2
        tuned_model train-hybrid $tune $round 40
    done
    (cd tests/gpu/peers && GRAFT_PEER_TRAIN=hybrid GRAFT_PEER_COMPILE=1 timeout $(left $B) python3 peer_train.py) \
        >>$R/peer_train.jsonl 2>>$L/peer_train.log
    echo "peer_train rc $?"
    if [ $round = 1 ] && [ $(left $B) -gt 200 ]; then
        for tune in 0 8; do tuned_model forward $tune 1 90; done
        sdpa_forward
    fi
done
grep -v '^{"note' $R/peer_train.jsonl | show
echo "kept from the file in the timed runs: $(cat $L/train-8.log | grep -c 'from the choice file'), timed: $(cat $L/train-8.log | grep -c "the heuristic's first")"
cp /tmp/gemm-choices.json $R/ 2>/dev/null
tar -C $L -czf $R/misc.tar.gz .
