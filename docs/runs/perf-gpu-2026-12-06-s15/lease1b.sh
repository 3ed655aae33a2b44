# lease 1b of session 15, for when little device time is left (a machine's start is most of it):
# the two changed GDN kernels' checks and the GDN layer on the head against the base in one call.
# Builds only test_cuda_gdn and bench_gdn; the base (.carry/base.patch on a copy: 6de398e's engine)
# builds on the CPUs while the head's check and benchmark run on the GPU.
set -u
. .carry/env.sh
R=$OUT
t0=$(date +%s)
el() { echo "== $(( $(date +%s)-t0 )) s: $*"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader
L=$(mktemp -d)
make -j16 build/gpu/test_cuda_gdn build/gpu/bench_gdn >$L/build.log 2>&1 ||
    { grep -m 20 -E "error|warning" $L/build.log; tar -C $L -czf $R/misc.tar.gz .; exit 1; }
el built
B=/tmp/base; rm -rf $B; mkdir -p $B; tar --exclude=./.peers -cf - . | tar -xf - -C $B
(cd $B && patch -s -p1 <.carry/base.patch && make -j14 build/gpu/bench_gdn >$L/build-base.log 2>&1; echo "base build rc $?" >>$L/build-base.log) &
base=$!
build/gpu/test_cuda_gdn >$R/test_cuda_gdn.txt 2>&1; echo "test_cuda_gdn rc $?"; grep -E "FAIL|passed" $R/test_cuda_gdn.txt | tail -n 12
el test_cuda_gdn
show() { python3 -c "
import json,sys
for l in sys.stdin:
    try: d=json.loads(l)
    except Exception: continue
    if 'ms' in d: print(f'{d[\"what\"][:92]:92s} {d[\"ms\"]:8.3f} ms floor {d.get(\"of_floor\",0):.3f}')"; }
wait $base; tail -1 $L/build-base.log; el base built
for run in 1 2; do
    echo "-- head $run"; timeout 60 build/gpu/bench_gdn 2>>$L/bench_gdn.log | tee -a $R/bench_gdn_head.jsonl | show
    echo "-- base $run"; (cd $B && timeout 60 build/gpu/bench_gdn 2>>$L/bench_gdn.log) | tee -a $R/bench_gdn_base.jsonl | show
    el bench_gdn $run
done
build/gpu/test_cuda_gdn --slab 32 >$R/test_cuda_gdn_slab32.txt 2>&1; echo "test_cuda_gdn --slab 32 rc $?"; grep -E "FAIL|passed" $R/test_cuda_gdn_slab32.txt | tail -n 6
el done
tar -C $L -czf $R/misc.tar.gz .
