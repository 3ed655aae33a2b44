# tests/bench/synthetic_gguf.py (the writer of the GGUF load benchmark):
# what it writes at small shapes loads in graft with the shapes, types and
# tokenizer the script says it wrote (its --manifest), generates, is the same
# for the same seed, and refuses shapes its types cannot hold. With the gguf
# package (GRAFT_GGUF_PY: its wheel or an unpacked folder; else gguf 0.19.0's
# wheel, fetched once with `pip download --no-deps` into the user's cache,
# nothing installed), llama.cpp's own reader reads the same tensor list and
# its dequantizer finds every quantized weight finite, with a standard
# deviation near the 0.02 the script aims for.
. "$(dirname "$0")/../lib.sh"
W=${GRAFT_ROOT:?}/tests/bench/synthetic_gguf.py
PY=$(numpy_python) || skip "SKIP: no python3 with numpy (tried python3, /usr/bin/python3): the writer needs numpy"

config() { # FILE ARCH HIDDEN HEADS KV HEAD_DIM TIED
    cat >"$1" <<EOF
{"model_type": "$2", "hidden_size": $3, "intermediate_size": 512, "num_hidden_layers": 3,
 "num_attention_heads": $4, "num_key_value_heads": $5, "head_dim": $6, "vocab_size": 600,
 "max_position_embeddings": 512, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
 "bos_token_id": 570, "eos_token_id": 572, "tie_word_embeddings": $7}
EOF
}
config "$TMP/qwen2.json" qwen2 256 4 2 64 true
config "$TMP/qwen3.json" qwen3 256 4 2 128 false # head_dim != hidden / heads: key_length in the metadata
config "$TMP/llama.json" llama 256 8 4 32 true
config "$TMP/narrow.json" qwen2 96 4 2 24 true # 96-value rows: no whole q4_k blocks

# name config type [--untied]
cases="qwen2_q4km $TMP/qwen2.json q4_k_m
qwen2_q4km_untied $TMP/qwen2.json q4_k_m --untied
qwen2_q8 $TMP/qwen2.json q8_0
qwen2_bf16 $TMP/qwen2.json bf16
qwen3_f16 $TMP/qwen3.json f16
llama_q6k $TMP/llama.json q6_k
narrow_bf16 $TMP/narrow.json bf16"

echo "$cases" | while read -r name cfg type extra; do
    "$PY" "$W" "$cfg" "$TMP/$name.gguf" --type "$type" $extra --manifest "$TMP/$name.man" >"$TMP/w.out" ||
        fail "writing $name: $(cat "$TMP/w.out")"
    "$G" inspect "$TMP/$name.gguf" --json >"$TMP/$name.json" 2>"$TMP/err" || fail "graft inspect $name: $(cat "$TMP/err")"
done || exit 1
# graft checks every tensor's shape and type against the config it reads from
# the metadata; here that config, the parameter count, the type mix and the
# tokenizer must be the ones the manifest lists
echo "$cases" >"$TMP/cases"
"$PY" - "$TMP" <<'EOF' || fail "graft's view differs from the manifest"
import json, sys
bad, n = [], 0
for line in open(sys.argv[1] + "/cases"):
    n += 1
    name, cfg = line.split()[:2]
    man, got, c = (json.load(open(p)) for p in (f"{sys.argv[1]}/{name}.man", f"{sys.argv[1]}/{name}.json", cfg))
    ids = {"f32": 0, "f16": 1, "q8_0": 8, "q4_k": 12, "q6_k": 14, "bf16": 30}
    mats = sorted({t["type"] for t in man["tensors"] if len(t["shape"]) == 2}, key=ids.get)
    want = {"format": "gguf", "arch": c["model_type"], "layers": c["num_hidden_layers"],
            "hidden_size": c["hidden_size"], "intermediate_size": c["intermediate_size"],
            "heads": c["num_attention_heads"], "kv_heads": c["num_key_value_heads"], "head_dim": c["head_dim"],
            "vocab_size": c["vocab_size"], "qkv_bias": c["model_type"] == "qwen2",
            "qk_norm": c["model_type"] == "qwen3", "tied_embeddings": man["tied"],
            "parameters": man["parameters"], "dtype": "+".join(mats)}
    bad += [f"{name} {k}: graft {got.get(k)!r}, expected {v!r}" for k, v in want.items() if got.get(k) != v]
    tok = got.get("tokenizer") or {}
    for k, v in (("kind", "bpe-bytelevel"), ("vocab_size", man["vocab_size"]), ("eos", man["eos"]), ("bos", -1)):
        if tok.get(k) != v:
            bad.append(f"{name} tokenizer {k}: graft {tok.get(k)!r}, expected {v!r}")
    n2 = sum(len(t["shape"]) == 2 for t in man["tensors"])
    if n2 != 2 + 7 * c["num_hidden_layers"] - man["tied"]:
        bad.append(f"{name}: {n2} matrices in the manifest")
if n != 7:
    bad.append(f"{n} cases read, not 7")
if bad:
    print("\n".join(bad))
sys.exit(1 if bad else 0)
EOF

# Q4_K_M's mix: q6_k for the tied embedding (the output of the untied one)
# and for attn_v / ffn_down where llama.cpp's use_more_bits holds: of 3
# layers only the last (l >= 7 * 3 / 8 = 2)
q6k="[t['name'] for t in j['tensors'] if t['type'] == 'q6_k']"
[ "$(json_get "$TMP/qwen2_q4km.man" "$q6k")" = "['token_embd.weight', 'blk.2.attn_v.weight', 'blk.2.ffn_down.weight']" ] ||
    fail "q4_k_m's q6_k tensors: $(json_get "$TMP/qwen2_q4km.man" "$q6k")"
[ "$(json_get "$TMP/qwen2_q4km_untied.man" "$q6k")" = "['blk.2.attn_v.weight', 'blk.2.ffn_down.weight', 'output.weight']" ] ||
    fail "untied q4_k_m's q6_k tensors: $(json_get "$TMP/qwen2_q4km_untied.man" "$q6k")"

"$G" generate "$TMP/qwen2_q4km.gguf" --prompt "Once upon a time" -n 8 >"$TMP/gen.out" 2>"$TMP/err" ||
    fail "graft generate: $(cat "$TMP/err")"
[ -s "$TMP/gen.out" ] || fail "graft generate printed nothing"

"$PY" "$W" "$TMP/qwen2.json" "$TMP/again.gguf" >/dev/null || fail "second write"
cmp -s "$TMP/qwen2_q4km.gguf" "$TMP/again.gguf" || fail "the same seed wrote a different file"
"$PY" "$W" "$TMP/qwen2.json" "$TMP/other.gguf" --seed 1 >/dev/null || fail "write with --seed 1"
cmp -s "$TMP/qwen2_q4km.gguf" "$TMP/other.gguf" && fail "--seed 1 wrote the same file as seed 0"

expect_error "rows of 96 values are not whole q6_k blocks of 256" "$PY" "$W" "$TMP/narrow.json" "$TMP/narrow.gguf" --type q4_k_m
[ -e "$TMP/narrow.gguf" ] || [ -e "$TMP/narrow.gguf.tmp" ] && fail "a refused write left a file behind"

GGUF_PY=${GRAFT_GGUF_PY:-}
if [ -z "$GGUF_PY" ]; then
    wheels=${XDG_CACHE_HOME:-$HOME/.cache}/graft/wheels
    GGUF_PY=$(ls "$wheels"/gguf-0.19.0-*.whl 2>/dev/null | head -n 1)
    if [ -z "$GGUF_PY" ]; then
        mkdir -p "$wheels"
        python3 -m pip download --disable-pip-version-check --no-deps -q -d "$wheels" gguf==0.19.0 \
            >"$TMP/pip.log" 2>&1 || true
        GGUF_PY=$(ls "$wheels"/gguf-0.19.0-*.whl 2>/dev/null | head -n 1)
    fi
fi
[ -n "$GGUF_PY" ] && [ -e "$GGUF_PY" ] ||
    skip "SKIP (graft's checks passed): no gguf package for the reader check (pip download gguf==0.19.0: $(tail -n 1 "$TMP/pip.log" 2>/dev/null); or set GRAFT_GGUF_PY to its wheel or folder)"
"$PY" - "$GGUF_PY" "$TMP" <<'EOF' || fail "the gguf package's reading differs"
import json, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
import gguf
bad, n = [], 0
for line in open(sys.argv[2] + "/cases"):
    n += 1
    name = line.split()[0]
    r = gguf.GGUFReader(f"{sys.argv[2]}/{name}.gguf")
    man = json.load(open(f"{sys.argv[2]}/{name}.man"))
    got = [(t.name, [int(n) for n in reversed(t.shape)], t.tensor_type.name.lower()) for t in r.tensors]
    want = [(t["name"], t["shape"], t["type"]) for t in man["tensors"]]
    if got != want:
        bad.append(f"{name} tensors: gguf {got[:3]}... ({len(got)}), manifest {want[:3]}... ({len(want)})")
    field = lambda k: r.fields[k].contents()
    if field("general.architecture") != man["arch"] or len(field("tokenizer.ggml.tokens")) != man["vocab_size"]:
        bad.append(f"{name} metadata: architecture or token count")
    if len(field("tokenizer.ggml.merges")) != man["merges"]:
        bad.append(f"{name} merges")
    for t in r.tensors:
        if t.tensor_type.name in ("Q4_K", "Q6_K", "Q8_0", "BF16", "F16"):
            x = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float64)
            # the script aims at std 0.02 with per-type constants worked out
            # by hand; a factor of 2 either way means a wrong layout or scale
            s = float(x.std())
            if not np.isfinite(x).all() or not 0.01 < s < 0.04:
                bad.append(f"{name} {t.name} ({t.tensor_type.name}): std {s}, finite {bool(np.isfinite(x).all())}")
if n != 7:
    bad.append(f"{n} cases read, not 7")
if bad:
    print("\n".join(bad))
sys.exit(1 if bad else 0)
EOF
exit 0
