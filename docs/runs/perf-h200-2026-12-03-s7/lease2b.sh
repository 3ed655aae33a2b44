# lease 2 of session 7, call b: the training steps' kernel profiles
set -u
. .carry/env.sh
R=$OUT
t0=$(date +%s)
make -j16 gpu-tests >$R/build.log 2>&1 || make -j16 gpu-tests SAN=-Wno-error CUDA_WERROR=0 >$R/build2.log 2>&1 || { echo BUILD FAILED; exit 1; }
export OUTDIR=$R
sh tests/gpu/bench/profile_train.sh build $R 2>&1 | grep -v '^   step at' | head -70
echo "== $(( $(date +%s)-t0 )) s: profiles"
gzip $R/*.csv
