# Session 34, call 3 (call 2's H100, warm; carry .carry and .peers; 406 s; sent inline, written out
# here as sent, one line split at its semicolons): the 50 % hybrid training step, untuned and with
# GRAFT_CUDA_GEMM_TUNE=8, beside torch + FLA compiled (peer_train.py), four rounds.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh; B=470
make -j16 build/gpu/bench_cuda_model >$L/b.log 2>&1 || tail $L/b.log
peers_warm
export GRAFT_CUDA_GEMM_TUNE_FILE=/tmp/gemm-choices.json
GRAFT_CUDA_GEMM_TUNE=8 timeout 60 build/gpu/bench_cuda_model train-hybrid >/dev/null 2>$L/fill-busy.log
wait; el warm; tail -2 $L/train_warm.log
rm -f /tmp/gemm-choices.json
GRAFT_CUDA_GEMM_TUNE=8 timeout 60 build/gpu/bench_cuda_model train-hybrid >/dev/null 2>$L/fill.log
echo "filled: $(grep -c "the heuristic's first" $L/fill.log)"
for round in 1 2 3 4; do
    [ $(left $B) -gt 75 ] || break
    for tune in 0 8; do tuned_model train-hybrid $tune $round 40 | cut -c1-130; done
    (cd tests/gpu/peers && GRAFT_PEER_TRAIN=hybrid GRAFT_PEER_COMPILE=1 timeout $(left 585) python3 peer_train.py) \
        >>$R/peer_train.jsonl 2>>$L/peer_train.log
    echo "peer rc $?"; el round $round
done
grep -v '^{"note' $R/peer_train.jsonl | show | cut -c1-150
tar -C $L -czf $R/misc.tar.gz .
