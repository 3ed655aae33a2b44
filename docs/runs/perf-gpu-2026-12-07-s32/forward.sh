# Session 32, call 2 (carry .carry and .peers; ~540 s): the forward and training targets after the
# wgmma-descriptor change (dbc3ce9, 8cb1bdb), which call 1 measured 10 % faster in bench_attention:
# 1. FLA unpacked and the compiled training peer warmed in the background (peers_warm);
# 2. the forwards of the sdpa targets (bench_cuda_model forward-targets), default plan, two rounds
#    with transformers' sdpa forward between them;
# 3. the 50 % hybrid training step beside torch + FLA compiled (hybrid_pairs), while time lasts.
# As run, step 2 overlapped step 1's background GPU work, so its forwards are no figures (README.md);
# forward2.sh and h200.sh run them on a quiet GPU.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
B=${BUDGET:-540}
peers_warm
make -j16 build/gpu/bench_cuda_model >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
el build
forward_rounds
wait
el warm
hybrid_pairs 3 $B
el done
tar -C $L -czf $R/misc.tar.gz .
