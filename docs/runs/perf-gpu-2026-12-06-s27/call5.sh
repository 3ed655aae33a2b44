# Session 27's fifth call (carry .carry): GRAFT_CUDA_GEMM_TUNE (each product shape's first call times
# cublasLt's first N algorithms on its own operands and keeps the fastest). test_cuda_ops (its new
# "tuned" checks: the sums in place take the product once), then bench_gemm (one round), the forward with
# statistics and both training steps without and with GRAFT_CUDA_GEMM_TUNE=8, alternating, two rounds while 480 s last,
# each line tagged "tune"; the sdpa forward peer once; the tuned shapes' lines (stderr) kept.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
make -j16 build/gpu/test_cuda_ops build/gpu/bench_gemm build/gpu/bench_cuda_model >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
el build
build/gpu/test_cuda_ops >$R/test_cuda_ops.txt 2>&1; echo "test_cuda_ops rc $?: $(tail -n 1 $R/test_cuda_ops.txt)"
grep -A6 "GEMM_TUNE=8" $R/test_cuda_ops.txt; grep FAIL $R/test_cuda_ops.txt | head
el test
tag() { sed "s/^{/{\"tune\":$1,\"round\":$2,/"; }
for round in 1 2; do
    for tune in 0 8; do
        v=$([ $tune = 0 ] || echo $tune)
        [ $round = 2 ] || GRAFT_CUDA_GEMM_TUNE=$v timeout 90 build/gpu/bench_gemm 2>>$R/tune-gemm-$tune.log | grep '^{' | tag $tune $round >>$R/bench_gemm.jsonl
        for what in forward train-plain train-hybrid; do
            [ $(left 480) -gt 40 ] || break 3
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
python3 - $R/bench_gemm.jsonl <<'PY'
import json, sys, statistics as st
rows = [json.loads(l) for l in open(sys.argv[1])]
by = {}
for r in rows: by.setdefault((r["what"], r["tune"]), []).append(r["ms"])
for w in dict.fromkeys(r["what"] for r in rows):
    a, b = by.get((w, 0)), by.get((w, 8))
    if a and b: print(f"{st.mean(a):8.3f} {st.mean(b):8.3f} ms {st.mean(a)/st.mean(b):6.3f}x  {w}")
PY
tar -C $L -czf $R/misc.tar.gz .
