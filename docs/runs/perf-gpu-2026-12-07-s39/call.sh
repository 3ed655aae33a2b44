# Session 39's call (carry .carry and .peers; ~570 s, or BUDGET s). The CUDA backend is as 46ff468 left
# it, which `make test-gpu` passed on an H100 at session 38's end, so no tests here.
# The forward + statistics targets beside sdpa, on whichever card comes: on an H200 (the card)
# they were last measured in session 27 (before session 32's attention forward); on an H100 in session
# 32 (41f6668, before sessions 35-36's RMSNorm loads and logit chunk). Rounds of graft untuned, sdpa,
# graft with GRAFT_CUDA_GEMM_TUNE=8 (the first tuned run pays the tuning; later ones read its
# choices), while more than 200 s are left.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
make -j16 build/gpu/bench_cuda_model >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
el build
for i in 1 2 3; do
    [ $(left ${BUDGET:-570}) -gt 200 ] || break
    tuned_model forward-targets 0 $i 60
    (cd tests/gpu/peers && GRAFT_PEER_EAGER=0 GRAFT_PEER_CASES=qwen2.5-1.5b:4:2048,qwen2.5-1.5b:1:8192 \
        timeout 120 python3 peer_forward.py) 2>>$L/peer_forward.log | grep '^{' |
        sed "s/^{/{\"round\":$i,/" | tee -a $R/peer_forward.jsonl | show | grep '^\[peer'
    tuned_model forward-targets 8 $i 90
    el round $i
done
el done
tar -C $L -czf $R/misc.tar.gz .
