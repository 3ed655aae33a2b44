# lease 1 of session 7, call a: build and make test-gpu on the head
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
sh tests/gpu/device_run.sh test >$R/dr.txt 2>&1; echo "device_run rc $?"
tail -22 $R/dr.txt
el test-gpu
