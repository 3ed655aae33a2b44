# lease 2 of session 14: the hybrid training step (Qwen2.5-1.5B shape, 4 x 2048, 50 % GDN) under
# each GDN local-gradient form and attention backward named in FORMS / ABWD (two runs each, graft's
# kept WY products in all), the plain step under each attention backward, Stage 2; then
# torch + FLA compiled training of the same hybrid in the same call (peer_train.py, FLA bc3b101d).
# Usage: FORMS="fused split" ABWD="mma wgmma" sh lease2.sh
set -u
. .carry/env.sh
R=$OUT
t0=$(date +%s)
el() { echo "== $(( $(date +%s)-t0 )) s: $*"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader
L=$(mktemp -d)
make -j16 gpu-tests >$L/build.log 2>&1 || { grep -m 20 -E "error|warning" $L/build.log; exit 1; }
el built
show() { python3 -c "
import json,sys
for l in sys.stdin:
    try: d=json.loads(l)
    except Exception: continue
    if 'ms' in d: print(f'{d[\"what\"][:88]:88s} {d[\"ms\"]:8.3f} ms roofline {d.get(\"of_roofline\",0):.3f} floor {d.get(\"of_floor\",0):.3f}')"; }
B=build/gpu/bench_cuda_model
for a in ${ABWD:-mma}; do for f in ${FORMS:-fused}; do
    echo "-- attention bwd $a, GDN local $f"
    for k in train-hybrid train-hybrid; do
        GRAFT_CUDA_ATTN_BWD=$a GRAFT_CUDA_GDN_LOCAL=$f timeout 60 $B $k 2>>$L/train.log | grep '"model"' |
            sed "s/^{/{\"attn_bwd\":\"$a\",\"gdn_local\":\"$f\",/" | tee -a $R/train.jsonl | show
    done
done; done
for a in ${ABWD:-mma}; do
    echo "-- plain, attention bwd $a"
    GRAFT_CUDA_ATTN_BWD=$a timeout 60 $B train-plain 2>>$L/train.log | grep '"model"' |
        sed "s/^{/{\"attn_bwd\":\"$a\",/" | tee -a $R/train.jsonl | show
done
el train
timeout 60 $B stage2 2>>$L/train.log | grep '"model"' | tee -a $R/train.jsonl | show
el stage2
mkdir -p .peers/fla && tar -xJf .peers/fla.tar.xz -C .peers/fla
export GRAFT_FLA_PATH=$PWD/.peers/fla
left=$(( 575 - ($(date +%s) - t0) ))
(cd tests/gpu/peers && GRAFT_PEER_TRAIN=hybrid GRAFT_PEER_COMPILE=1 timeout $left python3 peer_train.py) >$R/peer_train.jsonl 2>$L/peer_train.log
echo "peer_train rc $?"; grep -v '^{"note' $R/peer_train.jsonl | show; tail -2 $L/peer_train.log
el peer_train
tar -C $L -czf $R/misc.tar.gz .
