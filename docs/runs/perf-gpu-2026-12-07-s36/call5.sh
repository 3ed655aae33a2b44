# Session 36, call 5 (carry .carry with both.patch, and .peers), sent inline (written to /tmp/c5.sh and run) on
# the same machine: call 4's rounds with FLA unpacked and GRAFT_FLA_PATH set, without the head's runs.
B=250
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
mkdir -p .peers/fla && tar -xJf .peers/fla.tar.xz -C .peers/fla; export GRAFT_FLA_PATH=$PWD/.peers/fla
tree_build both build/gpu/bench_cuda_model || exit 1
top=$PWD
export GRAFT_CUDA_GEMM_TUNE_FILE=/tmp/gemm-choices.json
for round in 4 5 6; do
  [ $(left $B) -gt 75 ] || break
  cd /tmp/both; for tune in 0 8; do tuned_model train-hybrid $tune $round 40 | cut -c1-130; done; cd $top
  (cd tests/gpu/peers && GRAFT_PEER_TRAIN=hybrid GRAFT_PEER_COMPILE=1 timeout $(left $((B + 15))) python3 peer_train.py) >>$R/peer_train.jsonl 2>>$L/peer_train.log
  echo "peer rc $?"; el round $round
done
grep -v '^{"note' $R/peer_train.jsonl | show | cut -c1-150
