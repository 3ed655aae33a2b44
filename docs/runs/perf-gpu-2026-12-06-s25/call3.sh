# Session 25's third call, sent while call 2's machine is still warm (carry .carry and .peers; the
# same working tree): make test-gpu on it, then the GDN layer beside FLA again and more hybrid pairs
# (the compiled peer's and FLA's caches are warm from call 2) while BUDGET seconds last (default 400).
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
B=${BUDGET:-400}
mkdir -p .peers/fla && [ -d .peers/fla/fla ] || tar -xJf .peers/fla.tar.xz -C .peers/fla
export GRAFT_FLA_PATH=$PWD/.peers/fla
OUT=$R timeout $(( B - 150 )) sh tests/gpu/device_run.sh test >$L/device-test.log 2>&1; echo "== device_run test rc $?"
el test; tail -n 20 $R/test-summary.txt
make -j12 build/gpu/bench_gdn build/gpu/bench_cuda_model >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
if [ $(left $B) -gt 200 ]; then
    gdn_beside_fla
fi
hybrid_pairs 4 $B
el pairs
tar -C $L -czf $R/misc.tar.gz .
