# Session 36, call 2 (carry .carry with chunk.patch and gqa.patch). Two changes beside the head
# (da9690b), each built in its own tree (/tmp/chunk, /tmp/gqa):
# - chunk.patch: the training step's logits in one chunk. TF_LOGIT_CHUNK at 1280M values instead of
#   256M: qwen2.5-1.5b's 4 x 2048 rows (151936 columns) make one chunk instead of five, so the
#   lm_head weight gradient is one beta-0 product over 8192 rows instead of one beta-0 and four beta-1
#   products of 1766 / 1128 rows, each of which reads and writes the whole [151936, 1536] f32
#   gradient (0.93 GB). The cost: 2.5 GB of bf16 logits instead of 0.54.
# - gqa.patch: the attention backward adds dK and dV to fp32 buffers of the key-value head with
#   atomics (as dQ already is), instead of writing per-query-head copies (G = 6 times the bytes,
#   100 MB a layer at this shape) that group_sum_kernel then reads and sums.
# 1. test_cuda_ops in the gqa tree (every attention backward case against the CPU backend);
# 2. Nsight Compute: one hybrid step's attention backward launches (the kernel, its conversions,
#    group_sum) in the head and the gqa tree, gpu__time_duration, clocks left alone;
# 3. the 50 % hybrid step, head / chunk / gqa in turn, while B (560 s) lasts.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
B=${BUDGET:-560}
make -j16 build/gpu/bench_cuda_model >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
(tree_build chunk build/gpu/bench_cuda_model >$L/chunk.log 2>&1; echo "chunk build rc $?" >>$L/chunk.log) &
tree_build gqa build/gpu/bench_cuda_model build/gpu/test_cuda_ops || exit 1
wait; cat $L/chunk.log
el build
timeout 120 /tmp/gqa/build/gpu/test_cuda_ops >$L/test_cuda_ops.txt 2>&1
echo "test_cuda_ops (gqa) rc $?: $(tail -n 1 $L/test_cuda_ops.txt)"; grep FAIL $L/test_cuda_ops.txt | head
grep -E "attention_backward|attention backward" $L/test_cuda_ops.txt | head -12
gzip -c $L/test_cuda_ops.txt >$R/test_cuda_ops-gqa-call2.txt.gz
el tests
# ncu_attn TREE: one step's attention backward launches (14 layers: the kernel and its conversions, group_sum)
ncu_attn() {
    d=.; [ $1 = head ] || d=/tmp/$1
    timeout 100 ncu --clock-control none --metrics gpu__time_duration.sum --csv \
        -k "regex:attn_bwd|scale_convert|group_sum" --launch-skip 60 --launch-count 60 \
        $d/build/gpu/bench_cuda_model train-hybrid 2>/dev/null | grep '^"' >$R/ncu-attn-$1.csv
    python3 - $R/ncu-attn-$1.csv $1 <<'PY'
import csv, sys, collections
rows = list(csv.DictReader(open(sys.argv[1])))
unit = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3}
by = collections.defaultdict(list)
for r in rows:
    by[r["Kernel Name"].split("(")[0].split("<")[0].replace("void ", "")].append(
        float(r["Metric Value"].replace(",", "")) * unit[r["Metric Unit"]])
for k, v in sorted(by.items()):
    print(f"{sys.argv[2]}: {k}: {len(v)} launches, mean {sum(v) / len(v):.2f} us, median {sorted(v)[len(v) // 2]:.2f}")
PY
    el ncu $1
}
ncu_attn head
ncu_attn gqa
for round in 1 2 3 4; do
    for t in head chunk gqa; do
        [ $(left $B) -gt 40 ] || break 2
        d=.; [ $t = head ] || d=/tmp/$t
        timeout 40 $d/build/gpu/bench_cuda_model train-hybrid 2>>$L/train-$t.log | grep '"model"' |
            sed "s/^{/{\"tree\":\"$t\",\"round\":$round,/" | tee -a $R/train.jsonl | show | grep "^\[model" |
            sed "s/^/$t: /" | cut -c1-150
    done
done
el done
tar -C $L -czf $R/misc.tar.gz .
