# lease 3 of session 14 (short: little device time was left): the head after the local
# backward's other forms were dropped (fused only) and the wgmma attention backward became the
# default on compute capability 9.0: the GDN and attention checks, then one hybrid
# training step with the defaults (no variables: the backend's own choice).
set -u
. .carry/env.sh
R=$OUT
t0=$(date +%s)
el() { echo "== $(( $(date +%s)-t0 )) s: $*"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader
make -j16 gpu-tests >$R/build.log 2>&1 || { grep -m 20 -E "error|warning" $R/build.log; exit 1; }
el built
for t in test_cuda_gdn test_cuda_ops test_cuda_train test_cuda_model; do
    timeout 90 build/gpu/$t >$R/$t.log 2>&1; echo "$t rc $? $(tail -n 1 $R/$t.log)"; grep -m 10 "^FAIL" $R/$t.log
done
el checks
show() { python3 -c "
import json,sys
for l in sys.stdin:
    try: d=json.loads(l)
    except Exception: continue
    if 'ms' in d: print(f'{d[\"what\"][:88]:88s} {d[\"ms\"]:8.3f} ms roofline {d.get(\"of_roofline\",0):.3f} floor {d.get(\"of_floor\",0):.3f}')"; }
for k in train-hybrid; do timeout 50 build/gpu/bench_cuda_model $k 2>>$R/train.log | grep '"model"' | tee -a $R/train.jsonl | show; done
el train
