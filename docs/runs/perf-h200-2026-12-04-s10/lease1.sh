# lease 1 of session 10: the attention forward's Hopper (wgmma) shapes, cfgs 20-22, checked on the
# GPU against the CPU backend (test_cuda_ops runs every shape), timed beside the mma.sync shapes
# (bench_attention), then the whole teacher forward with statistics under the default shape and
# under each Hopper shape (GRAFT_CUDA_ATTN_CFG), and transformers' sdpa forward in the same call.
set -u
. .carry/env.sh
R=$OUT
t0=$(date +%s)
el() { echo "== $(( $(date +%s)-t0 )) s: $*"; }
make -j16 gpu-tests >$R/build.log 2>&1 || { grep -m 20 -E "error|warning" $R/build.log; exit 1; }
el built
timeout 150 build/gpu/test_cuda_ops >$R/test_cuda_ops.log 2>&1; echo "test_cuda_ops rc $?"
grep -E "FAIL|passed|with attention cfg" $R/test_cuda_ops.log | head -30
el test_cuda_ops
show() { python3 -c "
import json,sys
for l in sys.stdin:
    try: d=json.loads(l)
    except Exception: continue
    if 'ms' in d: print(f'{d[\"what\"][:100]:100s} {d[\"ms\"]:8.3f} ms {d.get(\"tok_s\",0):10.0f} tok/s floor {d.get(\"of_floor\",0):.3f}')"; }
timeout 120 build/gpu/bench_attention 2>$R/bench_attention.log | tee $R/bench_attention.jsonl | show
el bench_attention
for c in default 20 21 22; do
    if [ $c = default ]; then unset GRAFT_CUDA_ATTN_CFG; else export GRAFT_CUDA_ATTN_CFG=$c; fi
    echo "-- forward, attention cfg $c"
    timeout 90 build/gpu/bench_cuda_model forward 2>$R/fwd-$c.log | tee $R/fwd-$c.jsonl | show
    el "forward cfg $c"
done
unset GRAFT_CUDA_ATTN_CFG
(cd tests/gpu/peers && GRAFT_PEER_EAGER=0 GRAFT_PEER_CASES=qwen2.5-1.5b:4:2048,qwen2.5-1.5b:1:8192 timeout 120 python3 peer_forward.py) >$R/peer_forward.jsonl 2>$R/peer_forward.log
echo "peer_forward rc $?"; show <$R/peer_forward.jsonl; tail -3 $R/peer_forward.log
el peer_forward
