# lease 1 of session 7, call b: the training steps' wall times and their kernel profiles on the head
set -u
. .carry/env.sh
R=$OUT
t0=$(date +%s)
el() { echo "== $(( $(date +%s)-t0 )) s: $*"; }
make -j16 gpu-tests >$R/build.log 2>&1 || make -j16 gpu-tests SAN=-Wno-error CUDA_WERROR=0 >$R/build2.log 2>&1 || { echo BUILD FAILED; exit 1; }
el built
B=build/gpu/bench_cuda_model
for k in train-plain train-hybrid; do $B $k 2>/dev/null | grep '"model"' | tee -a $R/train.jsonl | python3 -c "
import json,sys
for l in sys.stdin:
    d=json.loads(l); print(f'{d[\"what\"]:70s} {d[\"ms\"]:8.2f} ms {d.get(\"tok_s\",0):8.0f} tok/s')"; done
el walls
export OUTDIR=$R
sh tests/gpu/bench/profile_train.sh build $R 2>&1 | grep -v '^   step at' | head -70
el profiles
gzip $R/*.csv
