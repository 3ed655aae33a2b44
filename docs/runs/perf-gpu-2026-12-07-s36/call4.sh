# Session 36, call 4 (carry .carry with both.patch, and .peers), sent inline (written to /tmp/c4.sh and run) on
# the machine that ran calls 2 and 3: two more rounds of the head, both.patch untuned and tuned, and the peer.
# GRAFT_FLA_PATH was not exported (peers_warm, which sets it, did not run in this call), so both peer runs were
# skipped: this call's peer lines are skips.
B=330
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
tree_build both build/gpu/bench_cuda_model || exit 1
top=$PWD
export GRAFT_CUDA_GEMM_TUNE_FILE=/tmp/gemm-choices.json
for round in 2 3; do
  [ $(left $B) -gt 120 ] || break
  timeout 40 build/gpu/bench_cuda_model train-hybrid 2>>$L/head.log | grep '"model"' | sed "s/^{/{\"tree\":\"head\",\"tune\":0,\"round\":$round,/" | tee -a $R/train.jsonl | show | grep "^\[model" | sed "s/^/head: /" | cut -c1-130
  cd /tmp/both; for tune in 0 8; do tuned_model train-hybrid $tune $round 40 | cut -c1-130; done; cd $top
  (cd tests/gpu/peers && GRAFT_PEER_TRAIN=hybrid GRAFT_PEER_COMPILE=1 timeout $(left $((B + 15))) python3 peer_train.py) >>$R/peer_train.jsonl 2>>$L/peer_train.log
  echo "peer rc $?"; el round $round
done
grep -v '^{"note' $R/peer_train.jsonl | show | cut -c1-150
