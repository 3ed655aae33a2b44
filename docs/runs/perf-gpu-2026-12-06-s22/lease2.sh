# Session 22, call 2 (carry .carry, .peers): make test-gpu on the head without the dQ-of-four variant;
# then the GDN core's two sequential passes (forward state pass, backward dh pass) under slabs of 32
# and 16 state rows inside the hybrid step (Nsight Compute, one whole step's 28 launches each: at
# B 4 x 12 heads the 32-row slabs are 192 blocks, 0.73 of a wave at two a multiprocessor; the 16-row
# ones 384, which the backward's 70 KB fits three a multiprocessor), and the step itself under both,
# alternating. FLA's Triton autotuning runs meanwhile for lease3.sh on the same warm machine.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
mkdir -p .peers/fla && tar -xJf .peers/fla.tar.xz -C .peers/fla
export GRAFT_FLA_PATH=$PWD/.peers/fla
(cd tests/gpu/peers && GRAFT_BENCH_GDN_NAIVE_TOKENS=0 timeout 420 python3 peer_gdn.py) \
    >$L/peer_gdn_warm.jsonl 2>$L/peer_gdn_warm.log & # shares the GPU with the tests: not used
GRAFT_GPU_CALL_S=300 sh tests/gpu/device_run.sh test 2>&1 | tee $L/test-gpu.txt | grep -E "FAIL|SKIP|passed|STOPPED|done in"
el test-gpu
for slab in 32 16; do
    [ $(left 500) -gt 40 ] || break
    GRAFT_CUDA_GDN_SLAB=$slab timeout 60 ncu --clock-control none --section SpeedOfLight --section Occupancy \
        --section LaunchStats --kernel-name regex:"gdn_(bwd_)?state_kernel" --launch-skip 28 --launch-count 28 \
        build/gpu/bench_cuda_model train-hybrid >$R/ncu-slab$slab.txt 2>&1
    python3 - $R/ncu-slab$slab.txt $slab <<'PY'
import re, sys
txt = open(sys.argv[1]).read()
runs = {}
for blk in re.split(r"\n  (?=\S)", txt):
    m = re.match(r"(?:void )?(gdn_\w*state_kernel)", blk.strip())
    d = re.search(r"Duration\s+(\S+)\s+([\d.,]+)", blk)
    if m and d:
        v = float(d.group(2).replace(",", "")) * (1000 if d.group(1) == "ms" else 1)
        runs.setdefault(m.group(1), []).append(v)
for k, v in runs.items():
    print(f"slab {sys.argv[2]}: {k} x{len(v)} mean {sum(v)/len(v):.1f} us, sum {sum(v):.1f} us")
PY
done
el ncu
wait
el fla-warm
for round in 1 2; do
    for slab in 32 16; do
        [ $(left 560) -gt 25 ] || break 2
        GRAFT_CUDA_GDN_SLAB=$slab timeout 40 build/gpu/bench_cuda_model train-hybrid 2>>$L/train.log | grep '"model"' |
            sed "s/^{/{\"gdn_slab\":$slab,\"round\":$round,/" | tee -a $R/train-slab.jsonl | show | grep "^\[model" | sed "s/^/slab $slab: /"
    done
done
el steps
tar -C $L -czf $R/misc.tar.gz .
