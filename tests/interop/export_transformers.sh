#!/bin/sh
# Student folders load in Hugging Face transformers through the modeling file
# graft writes (trust_remote_code) and give graft's logits, float32 and
# bfloat16 (tolerances in tests/ref/student_hf_check.py), with generate()
# through the student's cache; AutoTokenizer gives graft's ids.
# Students: stories260K (llama2.c, Taylor-Calibrate), the tiny HF fixtures
# llama / qwen2 / qwen3 and the GGUF fixtures llama / qwen2 / qwen3, each with
# other options (short conv, q/k/v biases, no query scale, chunk 16 / 32 / 64)
# and perturbed GDN parameters (tests/tools/student_tool.c).
# Needs torch + transformers (scripts/pyenv.sh transformers: ~3 GB from PyPI the
# first time on a machine). GPU machine: GRAFT_PYTHON=python3 GRAFT_HF_DEVICE=cuda
# (GRAFT_HF_BACKEND=fla for flash-linear-attention's kernel).
# (run alone: defaults as tests/run.sh sets them)
: "${GRAFT_ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}" "${GRAFT_BIN:=$GRAFT_ROOT/build/graft}"
: "${GRAFT_SHARED:=$(cd "$GRAFT_ROOT/.." && pwd)/shared}"
export GRAFT_ROOT GRAFT_BIN GRAFT_SHARED
. "$(dirname "$0")/../lib.sh"
. "$GRAFT_ROOT/tests/integration/lib/export.sh"
DEVICE=${GRAFT_HF_DEVICE:-cpu}
BACKEND=${GRAFT_HF_BACKEND:-auto}
DTYPES=float32,bfloat16
[ "$BACKEND" = fla ] && DTYPES=bfloat16 # fla's kernel refuses float32
F=$GRAFT_ROOT/tests/fixtures
need_pyenv transformers

check() { # name folder vocab
    random_ids "$TMP/$1.ids.json" "$3" 11 70 45
    "$TOOL" logits "$2" "$TMP/$1.ids.json" "$TMP/$1.graft.json" --greedy 8 || fail "graft logits of $1"
    (cd "$TMP" && "$PY" "$REF/student_hf_check.py" "$2" "$1.ids.json" "$1.graft.json" --device "$DEVICE" \
        --backend "$BACKEND" --dtypes "$DTYPES") 2>"$TMP/$1.err" || { tail -n 20 "$TMP/$1.err"; fail "transformers: $1"; }
}

make_student() { # name teacher options...
    n=$1 t=$2
    shift 2
    "$TOOL" make "$t" "$TMP/$n" "$@" || fail "student_tool make $n"
}
make_student hf_llama "$F/hf/llama" --gdn 0,2 --conv --chunk 16
make_student hf_qwen2 "$F/hf/qwen2" --gdn 1 --qkv-bias --no-query-scale --chunk 32
make_student hf_qwen3 "$F/hf/qwen3" --gdn 0 --conv --chunk 16
make_student gguf_llama "$F/gguf/llama.gguf" --gdn 1 --chunk 16
make_student gguf_qwen2 "$F/gguf/qwen2.gguf" --gdn 0 --conv --qkv-bias
make_student gguf_qwen3 "$F/gguf/qwen3.gguf" --gdn 1 --no-query-scale
[ "$(json_get "$TMP/gguf_llama/config.json" "len(j['graft_student']['rope_freq_factors'])")" = 4 ] ||
    fail "the GGUF llama student lacks its RoPE factors"
check hf_llama "$TMP/hf_llama" 131
check hf_qwen2 "$TMP/hf_qwen2" 143
check hf_qwen3 "$TMP/hf_qwen3" 120
check gguf_llama "$TMP/gguf_llama" 131
check gguf_qwen2 "$TMP/gguf_qwen2" 143
check gguf_qwen3 "$TMP/gguf_qwen3" 120

if [ -f "$STORIES" ] && [ -f "$SHARED/data/tinystories.txt" ]; then
    "$G" convert "$STORIES" --keep 0.5 --strategy uniform --init taylor-calibrate --calib "$SHARED/data/tinystories.txt" \
        --ctx 128 --calib-seqs 2 --steps 20 --out "$TMP/stories" >/dev/null || fail "convert stories260K"
    check stories "$TMP/stories" 512
    write_texts "$TMP"
    "$TOOL" tokenize "$TMP/stories/tokenizer.bin" "$TMP/valid.txt" "$TMP/stories.tok.json" --vocab 512 || fail "tokenize"
    "$PY" "$REF/tokenizer_export_check.py" "$TMP/stories" "$TMP/valid.txt" "$TMP/stories.tok.json" --auto 2>"$TMP/tok.err" ||
        { tail -n 5 "$TMP/tok.err"; fail "AutoTokenizer of the stories260K student"; }
else
    echo "stories260K not found under \$GRAFT_SHARED: its student was not checked"
fi
echo ok
