#!/bin/sh
# Students of teachers without a tokenizer.json get one (docs/student-format.md):
# llama2.c tokenizer.bin, GGUF SentencePiece ("llama") and GGUF byte-level BPE
# ("gpt2" with the qwen2, llama-bpe and smollm pre-tokenizers). The written
# tokenizer.json must encode id for id like graft's own tokenizer on a torture
# text (scripts, ill-formed UTF-8, whitespace runs, special-token text) plus
# 24 KB of prose: read back by graft here, and by the Hugging Face tokenizers
# library (scripts/pyenv.sh tokenizers, a few MB).
# (run alone: defaults as tests/run.sh sets them)
: "${GRAFT_ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}" "${GRAFT_BIN:=$GRAFT_ROOT/build/graft}"
: "${GRAFT_SHARED:=$(cd "$GRAFT_ROOT/.." && pwd)/shared}"
export GRAFT_ROOT GRAFT_BIN GRAFT_SHARED
. "$(dirname "$0")/../lib.sh"
. "$GRAFT_ROOT/tests/integration/lib/export.sh"
need_stories
TS=$SHARED/data/tinystories.txt
TOK512=$(dirname "$STORIES")/tok512.bin
[ -f "$TS" ] && [ -f "$TOK512" ] || skip "tinystories.txt / tok512.bin not found under \$GRAFT_SHARED"
for t in qwen3 llama3; do
    [ -f "$SHARED/tokenizers/$t/tokenizer.json" ] || skip "\$GRAFT_SHARED/tokenizers/$t missing"
done
write_texts "$TMP"
python3 "$REF/gguf_write.py" stories "$STORIES" "$TOK512" "$TMP/stories.gguf" || fail "gguf_write stories"
python3 "$REF/gguf_write.py" bpe "$SHARED/tokenizers/qwen3/tokenizer.json" qwen2 "$TMP/qwen.gguf" --model-dim 8 ||
    fail "gguf_write qwen"
python3 "$REF/gguf_write.py" bpe "$SHARED/tokenizers/llama3/tokenizer.json" llama-bpe "$TMP/llama3.gguf" || fail "gguf_write llama3"
python3 "$REF/gguf_write.py" bpe "$SHARED/tokenizers/qwen3/tokenizer.json" smollm "$TMP/smol.gguf" || fail "gguf_write smol"

# students through graft convert: llama2.c, GGUF SentencePiece, GGUF byte-level BPE
SMALL="--keep 0.5 --strategy uniform --init random --calib $TS --ctx 64 --calib-seqs 1"
"$G" convert "$STORIES" $SMALL --out "$TMP/s_l2c" >/dev/null || fail "convert stories260K.bin"
"$G" convert "$TMP/stories.gguf" $SMALL --out "$TMP/s_gspm" >/dev/null || fail "convert stories.gguf"
"$G" convert "$TMP/qwen.gguf" $SMALL --out "$TMP/s_gbpe" >/dev/null || fail "convert qwen.gguf"
for s in s_l2c s_gspm s_gbpe; do
    for f in tokenizer.json tokenizer_config.json modeling_graft_student.py; do
        [ -f "$TMP/$s/$f" ] || fail "$s lacks $f"
    done
    [ "$(json_get "$TMP/$s/config.json" "(j['model_type'], j['auto_map']['AutoModelForCausalLM'], 'hf_tokenizer' in j['graft_student'])")" = \
        "('graft_student', 'modeling_graft_student.GraftStudentForCausalLM', False)" ] || fail "$s config.json: HF keys"
done
[ -f "$TMP/s_l2c/tokenizer.bin" ] || fail "the llama2.c student lost its tokenizer.bin"
[ "$(json_get "$TMP/s_gspm/config.json" "(j['graft_student']['tokenizer'], j['graft_student']['teacher_model_type'])")" = \
    "('tokenizer.json', 'llama')" ] || fail "GGUF student: graft_student.tokenizer"

# graft reads the GGUF students through their tokenizer.json: same weights, same ids, same perplexity as the llama2.c one
head -c 6000 "$TS" >"$TMP/eval.txt"
"$G" eval "$TMP/s_l2c" --text "$TMP/eval.txt" --ctx 64 --json >"$TMP/e1.json" || fail "eval llama2.c student"
"$G" eval "$TMP/s_gspm" --text "$TMP/eval.txt" --ctx 64 --json >"$TMP/e2.json" || fail "eval GGUF student"
python3 - "$TMP/e1.json" "$TMP/e2.json" <<'PY' || fail "GGUF and llama2.c students of stories260K disagree"
import json, math, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
# same tokens; same weights up to float32 rounding of the GGUF copy (none: f32): nll equal to 1e-6 relative
assert a["tokens"] == b["tokens"], (a, b)
assert math.isfinite(a["nll"]) and abs(a["nll"] - b["nll"]) <= 1e-6 * abs(a["nll"]), (a, b)
PY

# tokenizer-only GGUF files (no model): the exporter on its own
for t in llama3 smol; do
    mkdir -p "$TMP/x_$t"
    "$TOOL" export-tokenizer "$TMP/$t.gguf" "$TMP/x_$t" || fail "export-tokenizer $t"
done

# graft: teacher tokenizer vs the exported tokenizer.json
check_graft() { # name source text folder
    "$TOOL" tokenize "$2" "$3" "$TMP/$1.ref.json" --vocab 512 || fail "tokenize $2"
    "$TOOL" tokenize "$4/tokenizer.json" "$3" "$TMP/$1.got.json" || fail "tokenize $4/tokenizer.json"
    python3 - "$TMP/$1.ref.json" "$TMP/$1.got.json" <<'PY' || fail "$1: graft reads different ids from the exported tokenizer.json"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert len(a["ids"]) > 5000 and a == b, (len(a["ids"]), len(b["ids"]))
PY
}
# llama2.c's tokenizer reads ill-formed UTF-8 byte by byte, tokenizer.json pipelines
# replace it by U+FFFD first: the llama2.c comparison uses valid text
check_graft l2c "$TOK512" "$TMP/valid.txt" "$TMP/s_l2c"
check_graft gspm "$TMP/stories.gguf" "$TMP/all.txt" "$TMP/s_gspm"
check_graft gbpe "$TMP/qwen.gguf" "$TMP/all.txt" "$TMP/s_gbpe"
check_graft llama3 "$TMP/llama3.gguf" "$TMP/all.txt" "$TMP/x_llama3"
check_graft smol "$TMP/smol.gguf" "$TMP/all.txt" "$TMP/x_smol"

# the Hugging Face tokenizers library on the same files
need_pyenv tokenizers
for c in "l2c valid s_l2c" "gspm all s_gspm" "gbpe all s_gbpe" "llama3 all x_llama3" "smol all x_smol"; do
    set -- $c
    "$PY" "$REF/tokenizer_export_check.py" "$TMP/$3" "$TMP/$2.txt" "$TMP/$1.ref.json" || fail "tokenizers library: $1"
done
echo ok
