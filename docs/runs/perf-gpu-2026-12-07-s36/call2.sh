# Session 36, call 2 (carry .carry with chunk.patch). The training step's logits in one chunk: with
# TF_LOGIT_CHUNK at 1280M values instead of 256M, qwen2.5-1.5b's 4 x 2048 rows (151936 columns) make
# one chunk instead of five, so the lm_head weight gradient is one beta-0 product over 8192 rows
# instead of one beta-0 and four beta-1 products of 1766 / 1128 rows, each of which reads and writes
# the whole [151936, 1536] f32 gradient (0.93 GB). The cost: 2.5 GB of bf16 logits instead of 0.54.
# chunk.patch is `git diff` of that one-line change, built beside the head in /tmp/chunk.
# The 50 % hybrid step, then the plain step, head / chunk alternating, while B (540 s) lasts.
. docs/runs/perf-gpu-2026-12-06-s16/common.sh
B=${BUDGET:-540}
make -j16 build/gpu/bench_cuda_model >$L/build.log 2>&1 || { tail -20 $L/build.log; exit 1; }
tree_build chunk build/gpu/bench_cuda_model || exit 1
el build
for kind in train-hybrid:4 train-plain:2; do
    for round in $(seq ${kind#*:}); do
        for t in head chunk; do
            [ $(left $B) -gt 40 ] || break 3
            d=.; [ $t = head ] || d=/tmp/$t
            timeout 40 $d/build/gpu/bench_cuda_model ${kind%:*} 2>>$L/train-$t.log | grep '"model"' |
                sed "s/^{/{\"tree\":\"$t\",\"round\":$round,/" | tee -a $R/train.jsonl | show | grep "^\[model" |
                sed "s/^/$t: /" | cut -c1-150
        done
    done
done
el done
tar -C $L -czf $R/misc.tar.gz .
