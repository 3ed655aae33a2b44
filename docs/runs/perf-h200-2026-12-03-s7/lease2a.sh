# lease 2 of session 7, call a: build, make test-gpu, then the two B 4 training steps beside
# torch + FLA compiled (the hybrid's peer) in the same call
set -u
. .carry/env.sh
R=$OUT
t0=$(date +%s)
el() { echo "== $(( $(date +%s)-t0 )) s: $*"; }
if ! make -j16 gpu-tests >$R/build.log 2>&1; then
    echo "BUILD FAILED with warnings as errors:"; grep -m 10 -E "error|warning" $R/build.log
    make -j16 gpu-tests SAN=-Wno-error CUDA_WERROR=0 >$R/build2.log 2>&1 || { tail -30 $R/build2.log; exit 1; }
fi
el built
mkdir -p $R/logs
GRAFT_GPU_LOGS=$R/logs timeout -k 10 200 sh tests/gpu/run.sh build >$R/test-gpu.txt 2>&1
tail -17 $R/test-gpu.txt
grep -hE '^(FAIL|FATAL)|TIMEOUT|^\[  FAILED' $R/logs/*.log 2>/dev/null | head -20
tar -C $R -czf $R/logs.tar.gz logs && rm -rf $R/logs
el test-gpu
B=build/gpu/bench_cuda_model
show() { python3 -c "
import json,sys
for l in sys.stdin:
    d=json.loads(l)
    if 'ms' in d: print(f'{d[\"what\"][:80]:80s} {d[\"ms\"]:8.2f} ms {d.get(\"tok_s\",0):8.0f} tok/s roofline {d.get(\"of_roofline\",0):.3f}')"; }
for k in train-plain train-hybrid; do $B $k 2>/dev/null | grep '"model"' | tee -a $R/train.jsonl | show; done
el walls
mkdir -p .peers/fla && tar -xJf .peers/fla.tar.xz -C .peers/fla
export GRAFT_FLA_PATH=$PWD/.peers/fla
(cd tests/gpu/peers && GRAFT_PEER_TRAIN=hybrid GRAFT_PEER_COMPILE=1 timeout 280 python3 peer_train.py) >$R/peer_train.jsonl 2>$R/peer_train.log
echo "peer rc $?"; grep -v '^{"note' $R/peer_train.jsonl | head; tail -3 $R/peer_train.log
el peer
for k in train-hybrid train-plain; do $B $k 2>/dev/null | grep '"model"' | tee -a $R/train.jsonl | show; done
el walls-again
