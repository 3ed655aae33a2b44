# Session 33, call 3 (the warm H100 of calls 1-2; carry .carry and .peers; 525 s): the 50 % hybrid
# training step on 737056f beside torch + FLA compiled (peer_train.py), after the peers' warm-up
# (FLA's autotuning, torch.compile) had finished on a quiet GPU, five pairs (common.sh's hybrid_pairs).
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
make -j16 build/gpu/bench_cuda_model >$L/b.log 2>&1 || tail $L/b.log
peers_warm
wait
el warm
tail -2 $L/train_warm.log
hybrid_pairs 5 570
el done
tar -C $L -czf $R/misc.tar.gz .
