#!/bin/sh
# Issue 11 and 16 through the command line: `graft generate --device cuda`
# (chunked prefill, then token-by-token decode: the KV cache, and the GDN
# layers' recurrent state and conv history) for the teacher stories260K and a
# converted hybrid student (GDN layers 2 and 4, conv on): in fp32 the greedy
# tokens are the CPU's, all 96 of them, with and without a prompt; in bf16 the
# count of identical leading tokens is printed (INFO, not a check: bf16 is not
# expected to repeat float32 token for token). `graft eval` of the student:
# fp32 perplexity within 1e-4 of the CPU's (the same weights, float32 both).
. "$(dirname "$0")/lib.sh"
run "cpu convert" on_cpu convert "$STORIES" --keep 0.5 --strategy uniform --init taylor-calibrate --conv --calib "$TS" \
    --ctx 128 --calib-seqs 2 --steps 30 --out "$TMP/student" || exit 1
head -c 20000 "$TS" >"$TMP/eval.txt"
ids() { python3 -c "import json,sys; print(' '.join(map(str, json.load(open(sys.argv[1]))['ids'])))" "$1"; }
for mode in fp32 bf16; do
    FP32=0
    [ $mode = fp32 ] && FP32=1
    case $DEV in cpu*) [ $mode = bf16 ] && continue ;; esac
    for model in teacher student; do
        m=$STORIES
        [ $model = student ] && m=$TMP/student
        for prompt in "" "Once upon a time, a little"; do
            run "cpu generate" on_cpu generate "$m" -n 96 --ignore-eos --prompt "$prompt" --json || continue
            want=$(ids "$TMP/run.out")
            run "$mode generate on $DEV" on_dev generate "$m" -n 96 --ignore-eos --prompt "$prompt" --json || continue
            got=$(ids "$TMP/run.out")
            same=$(python3 -c "import sys; a,b=sys.argv[1].split(),sys.argv[2].split(); n=0
while n<min(len(a),len(b)) and a[n]==b[n]: n+=1
print(n)" "$got" "$want")
            what="$mode  generate $model, prompt '${prompt:-<BOS>}', greedy 96 tokens on $DEV: the first $same of $(echo $want | wc -w) ids (prompt included) are the CPU's"
            if [ $mode = fp32 ]; then result "$([ "$got" = "$want" ] && echo 1 || echo 0)" "$what"
            else echo "INFO  $what"; fi
        done
    done
    if [ $mode = fp32 ]; then
        run "cpu eval" on_cpu eval "$TMP/student" --text "$TMP/eval.txt" --ctx 128 --json && cp "$TMP/run.out" "$TMP/e_cpu.json" &&
            run "fp32 eval on $DEV" on_dev eval "$TMP/student" --text "$TMP/eval.txt" --ctx 128 --json &&
            pycheck "fp32  eval student on $DEV vs CPU" "import json,math,sys; a,b=(json.load(open(p))['ppl'] for p in sys.argv[1:3]); e=abs(a-b)/b; print(int(math.isfinite(e) and e<=1e-4), f'ppl {a:.6f} vs {b:.6f}: rel {e:.2e} (1e-4)')" "$TMP/run.out" "$TMP/e_cpu.json"
    fi
done
finish
