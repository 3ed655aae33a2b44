# For the next session (written in session 27, not run: seven asks for a machine found none after
# call 4, and the session's device time ran out). One call, carry .carry: applies gemmtune.patch
# (GRAFT_CUDA_GEMM_TUNE=N: each product shape's first call times cublasLt's first N algorithms on its
# own operands and keeps the fastest, unless it is not 2 % faster than the heuristic's first; an
# in-place sum, beta != 0 with C == D, is timed into a scratch output; bf16 only: the fp32 checking
# mode, whose runs repeat bit for bit, never times; unset, the code does what it
# does without the patch) to this call's copy of the tree; then the forward with statistics and the
# training steps without and with GRAFT_CUDA_GEMM_TUNE=8, alternating, ROUNDS (2) rounds of WHAT
# (forward train-plain train-hybrid) while GUARD (440) s last, each line tagged "tune"; bench_gemm
# too with GEMM=1 (round 1); the sdpa forward peer once; then test_cuda_ops, whose "tuned" checks
# (linear and its backward with the sums in place) say whether D takes the product once; a line a
# log with the shapes timed, the ones whose algorithm changed and the microseconds saved.
#   e.g. ROUNDS=1 WHAT="forward train-hybrid" GUARD=235 sh docs/runs/perf-gpu-2026-12-06-s27/next-gemmtune.sh
# Built and compiled here (warnings as errors) with the patch; the tuned path has never run on a GPU.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
patch -s -p1 <docs/runs/perf-gpu-2026-12-06-s27/gemmtune.patch || { echo "gemmtune.patch does not apply"; exit 1; }
make -j16 build/gpu/test_cuda_ops build/gpu/bench_gemm build/gpu/bench_cuda_model >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
el build
tag() { sed "s/^{/{\"tune\":$1,\"round\":$2,/"; }
for round in $(seq ${ROUNDS:-2}); do
    for tune in 0 8; do
        v=$([ $tune = 0 ] || echo $tune)
        [ -z "${GEMM:-}" ] || [ $round = 2 ] || GRAFT_CUDA_GEMM_TUNE=$v timeout 90 build/gpu/bench_gemm 2>>$R/tune-gemm-$tune.log | grep '^{' | tag $tune $round >>$R/bench_gemm.jsonl
        for what in ${WHAT:-forward train-plain train-hybrid}; do
            [ $(left ${GUARD:-440}) -gt 40 ] || break 3
            GRAFT_CUDA_GEMM_TUNE=$v timeout 90 build/gpu/bench_cuda_model $what 2>>$R/tune-$what-$tune.log | grep '"model"' |
                tag $tune $round | tee -a $R/model.jsonl | show | grep '^\[model' | sed "s/^/tune $tune: /"
        done
        el "round $round tune $tune"
    done
    if [ $round = 1 ]; then
        (cd tests/gpu/peers && GRAFT_PEER_EAGER=0 GRAFT_PEER_CASES=qwen2.5-1.5b:4:2048,qwen2.5-1.5b:1:8192 timeout 120 python3 peer_forward.py) >$R/peer_forward.jsonl 2>$L/peer_forward.log
        echo "peer_forward rc $?"; grep '^{' $R/peer_forward.jsonl | show | grep '^\[peer'
    fi
done
build/gpu/test_cuda_ops >$R/test_cuda_ops.txt 2>&1; echo "test_cuda_ops rc $?: $(tail -n 1 $R/test_cuda_ops.txt)"
grep -A6 "GEMM_TUNE=8" $R/test_cuda_ops.txt; grep FAIL $R/test_cuda_ops.txt | head
el test
for f in $R/tune-*-8.log; do
    [ -s $f ] && awk -v f=$(basename $f) '/algorithm/ { n++; split($0, a, "algorithm "); split(a[2], b, " "); if (b[1] != 1) c++;
        match($0, /, [0-9.]+ us/); t = substr($0, RSTART + 2, RLENGTH - 5); match($0, /first [0-9.]+ us/); h = substr($0, RSTART + 6, RLENGTH - 9);
        s += h - t } END { printf "%s: %d shapes timed, %d changed, %.1f us saved a call of each\n", f, n, c, s }' $f
done
[ -s $R/bench_gemm.jsonl ] && python3 - $R/bench_gemm.jsonl <<'PY'
import json, sys, statistics as st
rows = [json.loads(l) for l in open(sys.argv[1])]
by = {}
for r in rows: by.setdefault((r["what"], r["tune"]), []).append(r["ms"])
for w in dict.fromkeys(r["what"] for r in rows):
    a, b = by.get((w, 0)), by.get((w, 8))
    if a and b: print(f"{st.mean(a):8.3f} {st.mean(b):8.3f} ms {st.mean(a)/st.mean(b):6.3f}x  {w}")
PY
tar -C $L -czf $R/misc.tar.gz .
