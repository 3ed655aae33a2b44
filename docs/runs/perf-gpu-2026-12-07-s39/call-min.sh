# Session 39's last-chance call (~220 s, for the budget's last minutes): call.sh's first round without
# the tuned run: graft's forward + statistics untuned, then sdpa, one pair.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
make -j16 build/gpu/bench_cuda_model >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
el build
tuned_model forward-targets 0 1 60
(cd tests/gpu/peers && GRAFT_PEER_EAGER=0 GRAFT_PEER_CASES=qwen2.5-1.5b:4:2048,qwen2.5-1.5b:1:8192 \
    timeout 100 python3 peer_forward.py) 2>>$L/peer_forward.log | grep '^{' |
    sed 's/^{/{"round":1,/' | tee -a $R/peer_forward.jsonl | show | grep '^\[peer'
el done
