# tests/gpu/runs/hf_gguf_ppl.py (transformers' perplexity of a GGUF, the
# reference for graft ppl) against graft ppl, with torch, transformers and gguf
# importable (scripts/pyenv.sh transformers pins them, with accelerate, which transformers needs to load a GGUF): SmolLM2-135M Q4_1 on 1,500 bytes of
# gutenberg-60.txt at ctx 64 (several windows): the same token count and
# perplexity within 1e-4 relative (float32 both sides; measured 1e-7 on the
# 1.5B teacher). The window layout alone is tests/integration/hf_gguf_ppl.sh.
. "$(dirname "$0")/../lib.sh"
SCRIPT=$GRAFT_ROOT/tests/gpu/runs/hf_gguf_ppl.py
SMOL=${GRAFT_TEACHERS:-${XDG_CACHE_HOME:-$HOME/.cache}/graft/teachers}/SmolLM2-135M-Instruct.Q4_1.gguf
[ -f "$SMOL" ] || skip "SmolLM2-135M-Instruct.Q4_1.gguf not fetched (sh scripts/fetch-teachers.sh smollm2)"
GUT=$SHARED/data/gutenberg-60.txt
[ -f "$GUT" ] || skip "gutenberg-60.txt not found under \$GRAFT_SHARED"
# the export checks' environment (scripts/pyenv.sh; GRAFT_PYTHON names another)
PY=$(sh "$GRAFT_ROOT/scripts/pyenv.sh" transformers 2>"$TMP/pyenv.err") ||
    skip "no Python environment for the model comparison ($(tail -n 1 "$TMP/pyenv.err"))"
"$PY" -c "import torch, transformers, gguf, accelerate" 2>"$TMP/imp.err" ||
    skip "the model comparison needs torch, transformers, gguf and accelerate in $PY ($(tail -n 1 "$TMP/imp.err"))"
tail -c 1500 "$GUT" >"$TMP/t.txt"
"$G" ppl "$SMOL" --text "$TMP/t.txt" --ctx 64 --json >"$TMP/g.json" || fail "graft ppl"
"$PY" "$SCRIPT" "$SMOL" "$TMP/t.txt" --ctx 64 >"$TMP/h.json" 2>"$TMP/h.err" || { tail -n 5 "$TMP/h.err"; fail "hf_gguf_ppl.py"; }
python3 - "$TMP/g.json" "$TMP/h.json" <<'PY' || fail "graft vs transformers: $(cat "$TMP/g.json") $(cat "$TMP/h.json")"
import json, math, sys
g, h = (json.load(open(p)) for p in sys.argv[1:3])
assert h["tokens"] > 3 * 63, h  # several windows
assert g["tokens"] == h["tokens"], (g["tokens"], h["tokens"])
assert math.isfinite(g["ppl"]) and math.isfinite(h["ppl"]) and abs(g["ppl"] - h["ppl"]) <= 1e-4 * h["ppl"], (g["ppl"], h["ppl"])
PY
exit 0
