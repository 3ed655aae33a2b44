# lease 5 of session 17: Stage 2 (bench_cuda_model stage2: 14 layers of the 1.5B shape, 300 steps)
# under 4, 8 and 14 task streams and host threads (GRAFT_CUDA_TASKS; 4 the default), alternating,
# and test_cuda_convert with its new GRAFT_CUDA_TASKS checks. Carry .carry.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
make -j14 build/gpu/bench_cuda_model build/gpu/test_cuda_convert >$L/build.log 2>&1 || { grep -m 20 -E "error|warning" $L/build.log; exit 1; }
el built
s2() {
    GRAFT_CUDA_TASKS=$1 timeout 40 build/gpu/bench_cuda_model stage2 2>>$L/stage2.log | grep '"model"' |
        sed "s/^{/{\"tasks\":$1,/" | tee -a $R/stage2.jsonl | show | grep Stage
    el "stage2, $1 tasks"
}
s2 4; s2 8; s2 14
GRAFT_ROOT=$PWD timeout 60 build/gpu/test_cuda_convert >$R/test_cuda_convert.txt 2>&1
echo "test_cuda_convert rc $?"; grep -E "FAIL|TASKS|passed" $R/test_cuda_convert.txt | head -20
el test_cuda_convert
[ $(left 150) -gt 20 ] && s2 14
[ $(left 170) -gt 20 ] && s2 8
[ $(left 190) -gt 20 ] && s2 4
