# Not run yet (written at the end of session 17, its device time spent): the call that says where the
# 50 % hybrid's step goes now that it is 1.15x torch + FLA compiled and 1.2x needs 4.5 % less. The GDN
# layer at the step's own shape (B 4 x T 2048: 48 (sequence, head) pairs, a quarter of bench_gdn's
# default 32768 tokens) beside FLA at the same shape, then Nsight Compute's per-kernel sum of one
# plain and one hybrid step (profile_train.sh). Carry .carry and .peers; ~400 s on a fresh machine.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
mkdir -p .peers/fla && tar -xJf .peers/fla.tar.xz -C .peers/fla
export GRAFT_FLA_PATH=$PWD/.peers/fla GRAFT_BENCH_GDN_NAIVE_TOKENS=0 GRAFT_BENCH_GDN_TOKENS=8192
(cd tests/gpu/peers && timeout 300 python3 peer_gdn.py) >$L/peer_gdn_warm.jsonl 2>$L/peer_gdn_warm.log &
warm=$!
make -j14 gpu-tests >$L/build.log 2>&1 || { grep -m 20 -E "error|warning" $L/build.log; exit 1; }
el built
timeout 200 sh tests/gpu/bench/profile_train.sh 2>&1 | tee $R/profile-train.txt | tail -60
el profile_train
wait $warm; echo "peer_gdn warm-up rc $?"
timeout 60 build/gpu/bench_gdn 2>$L/bench_gdn.log | tee $R/bench_gdn_8k.jsonl | show | grep -E "core|layer"
el bench_gdn
(cd tests/gpu/peers && timeout $(left 570) python3 peer_gdn.py) >$R/peer_gdn_8k.jsonl 2>$L/peer_gdn.log
echo "peer_gdn rc $?"; show <$R/peer_gdn_8k.jsonl | grep -E "layer"
el peer_gdn
tar -C $L -czf $R/misc.tar.gz .
