# lease 1 of session 15: make test-gpu on the head (the fused GDN local backward alone and the wgmma
# attention backward by default on CC 9.0, neither yet run on a GPU in this form; the GDN checkpoint's
# states kept in bf16), then the GDN layer with the states in bf16 against the same tree with them in
# fp32 and dh' sharing h's tile (.carry/base.patch applied to a copy: the head before, 6de398e), and the
# hybrid training step on both if time is left. No FLA here: its Triton autotuning (~270 s) does not
# fit the device time this session has left (lease 2 runs the peers).
set -u
. .carry/env.sh
R=$OUT
t0=$(date +%s)
el() { echo "== $(( $(date +%s)-t0 )) s: $*"; }
left() { echo $(( $1 - ($(date +%s) - t0) )); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader
L=$(mktemp -d)
make -j12 gpu-tests >$L/build.log 2>&1 || { grep -m 20 -E "error|warning" $L/build.log; tar -C $L -czf $R/misc.tar.gz .; exit 1; }
el built
GRAFT_GPU_CALL_S=250 sh tests/gpu/device_run.sh test 2>&1 | grep -E "FAIL|SKIP|passed|STOPPED|done in"
el test-gpu
show() { python3 -c "
import json,sys
for l in sys.stdin:
    try: d=json.loads(l)
    except Exception: continue
    if 'ms' in d: print(f'{d[\"what\"][:92]:92s} {d[\"ms\"]:8.3f} ms floor {d.get(\"of_floor\",0):.3f}')"; }
echo "-- head"; timeout 100 build/gpu/bench_gdn 2>>$L/bench_gdn.log | tee -a $R/bench_gdn_head.jsonl | show
el bench_gdn head
# the base: a copy of this tree and its build, the patch applied (make rebuilds what it touched)
B=/tmp/base; rm -rf $B; mkdir -p $B; tar --exclude=./.peers -cf - . | tar -xf - -C $B
(cd $B && patch -s -p1 <.carry/base.patch && make -j12 build/gpu/bench_gdn build/gpu/bench_cuda_model >$L/build-base.log 2>&1) || { echo "base build failed"; tail -5 $L/build-base.log; }
el base built
echo "-- base (fp32 states)"; (cd $B && timeout 100 build/gpu/bench_gdn 2>>$L/bench_gdn.log) | tee -a $R/bench_gdn_base.jsonl | show
el bench_gdn base
# what time is left: the hybrid training step once on each tree (lease 2 repeats it with its peer)
if [ $(left 560) -gt 60 ]; then
    echo "-- head train-hybrid"; timeout 40 build/gpu/bench_cuda_model train-hybrid 2>>$L/train.log | grep '"model"' | tee -a $R/train.jsonl | show
    echo "-- base train-hybrid"; (cd $B && timeout 40 build/gpu/bench_cuda_model train-hybrid 2>>$L/train.log) | grep '"model"' | tee -a $R/train.jsonl | show
    el train-hybrid
fi
tar -C $L -czf $R/misc.tar.gz .
