# A teacher's config must agree with its weights, in every format: a config
# field that the tensors contradict (layer count, hidden size, query and
# key/value heads, feed-forward size, vocabulary) is refused with one line
# naming the file, the field, its value and what the weights hold, before
# anything is allocated. The mutated teachers are made here: a GGUF written by
# tests/bench/synthetic_gguf.py with one metadata integer patched in place, the
# committed Hugging Face fixture with one config.json field changed, and
# stories260K (and v1 / v2 files made from its header) with the llama2.c
# header's n_layers changed.
. "$(dirname "$0")/../lib.sh"
need_stories
PY=$(numpy_python) || skip "SKIP: no python3 with numpy (tried python3, /usr/bin/python3): the GGUF writer needs numpy"

# ---- GGUF: metadata against the blk.N tensors and their shapes ----
cat >"$TMP/q.json" <<'JSON'
{"model_type": "qwen2", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 3,
 "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 300,
 "max_position_embeddings": 256, "rms_norm_eps": 1e-6, "rope_theta": 10000.0, "tie_word_embeddings": true}
JSON
"$PY" "$GRAFT_ROOT/tests/bench/synthetic_gguf.py" "$TMP/q.json" "$TMP/q.gguf" --type f16 >"$TMP/w.out" ||
    fail "writing the GGUF: $(cat "$TMP/w.out")"
"$G" inspect "$TMP/q.gguf" >/dev/null 2>"$TMP/err" || fail "the unmutated GGUF does not load: $(cat "$TMP/err")"

# patch KEY VALUE OUT: a copy of q.gguf whose uint32 metadata KEY holds VALUE
patch() {
    "$PY" - "$TMP/q.gguf" "$1" "$2" "$3" <<'PY' || fail "patching $1"
import struct, sys
src, key, value, out = sys.argv[1], sys.argv[2].encode(), int(sys.argv[3]), sys.argv[4]
b = bytearray(open(src, "rb").read())
at = b.find(struct.pack("<Q", len(key)) + key)       # a GGUF string: uint64 length, bytes
assert at > 0, key
at += 8 + len(key)
assert struct.unpack_from("<I", b, at)[0] == 4, "not a uint32"   # GGUF_TYPE_UINT32
struct.pack_into("<I", b, at + 4, value)
open(out, "wb").write(b)
PY
}
patch qwen2.block_count 2 "$TMP/more.gguf"
expect_error "$TMP/more.gguf: qwen2.block_count = 2, but the tensors hold 3 layers (blk.0 .. blk.2)" "$G" inspect "$TMP/more.gguf"
patch qwen2.block_count 4 "$TMP/fewer.gguf"
expect_error "$TMP/fewer.gguf: qwen2.block_count = 4, but the tensors hold 3 layers (blk.0 .. blk.2)" "$G" inspect "$TMP/fewer.gguf"
patch qwen2.embedding_length 32 "$TMP/dim.gguf"
expect_error "$TMP/dim.gguf: qwen2.embedding_length = 32, but token_embd.weight has rows of 64 values" "$G" inspect "$TMP/dim.gguf"
patch qwen2.attention.head_count_kv 1 "$TMP/kv.gguf"
expect_error "$TMP/kv.gguf: qwen2.attention.head_count_kv = 1, but blk.0.attn_k.weight has 32 rows: 2 heads of size 16" "$G" inspect "$TMP/kv.gguf"
patch qwen2.feed_forward_length 96 "$TMP/ffn.gguf"
expect_error "$TMP/ffn.gguf: qwen2.feed_forward_length = 96, but blk.0.ffn_gate.weight has 128 rows" "$G" inspect "$TMP/ffn.gguf"
# the same refusal from a command that loads the teacher for work
expect_error "qwen2.block_count = 2, but the tensors hold 3 layers" "$G" ppl "$TMP/more.gguf" --text "$SHARED/data/tinystories.txt"

# ---- Hugging Face folder: config.json against the safetensors ----
# hf FIELD VALUE: a copy of the fixture whose config.json has FIELD = VALUE
hf() {
    rm -rf "$TMP/hf"
    cp -r "$GRAFT_ROOT/tests/fixtures/hf/llama" "$TMP/hf"
    python3 -c "import json, sys
c = json.load(open(sys.argv[1])); c[sys.argv[2]] = int(sys.argv[3]); json.dump(c, open(sys.argv[1], 'w'))" \
        "$TMP/hf/config.json" "$1" "$2"
}
C="$TMP/hf/config.json"
hf num_hidden_layers 2
expect_error "$C: num_hidden_layers = 2, but the weights hold 3 layers (model.layers.0 .. model.layers.2)" "$G" inspect "$TMP/hf"
hf num_hidden_layers 5
expect_error "$C: num_hidden_layers = 5, but the weights hold 3 layers (model.layers.0 .. model.layers.2)" "$G" inspect "$TMP/hf"
hf hidden_size 64
expect_error "$C: hidden_size = 64, but model.embed_tokens.weight has rows of 48 values" "$G" inspect "$TMP/hf"
hf vocab_size 200
expect_error "$C: vocab_size = 200, but model.embed_tokens.weight has 131 rows" "$G" inspect "$TMP/hf"
hf num_attention_heads 4
expect_error "$C: num_attention_heads = 4, but model.layers.0.self_attn.q_proj.weight has 48 rows: 6 heads of size 8" "$G" inspect "$TMP/hf"
hf num_key_value_heads 1
expect_error "$C: num_key_value_heads = 1, but model.layers.0.self_attn.k_proj.weight has 16 rows: 2 heads of size 8" "$G" inspect "$TMP/hf"
hf intermediate_size 96
expect_error "$C: intermediate_size = 96, but model.layers.0.mlp.gate_proj.weight has 72 rows" "$G" inspect "$TMP/hf"

# ---- llama2.c: the header's n_layers against the file's size ----
# l2c VALUE OUT: stories260K with header n_layers (the third int32) = VALUE
l2c() {
    python3 -c "import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read()); struct.pack_into('<i', b, 8, int(sys.argv[2])); open(sys.argv[3], 'wb').write(b)" \
        "$STORIES" "$1" "$2"
}
cp "$SHARED/models/tinyllamas/stories260K/tok512.bin" "$TMP/"
for n in 4 6; do
    l2c "$n" "$TMP/l$n.bin"
    expect_error "$TMP/l$n.bin: header n_layers = $n, but the file's 1056540 bytes hold 5 layers" "$G" inspect "$TMP/l$n.bin"
done
# a v1 file (256-byte header, made here from stories260K's tensors) told the same way
"$PY" - "$STORIES" "$TMP/v1.bin" <<'PY' || fail "writing the v1 checkpoint"
import struct, sys
b = open(sys.argv[1], "rb").read()
dim, hid, L, H, KV, V, S = struct.unpack_from("<7i", b)
kvd = dim // H * KV
f = lambda n: n * 4
o = 28
emb = b[o:o + f(V * dim)]; o += f(V * dim)
def take(n):
    global o
    parts = [b[o + f(n) * l:o + f(n) * (l + 1)] for l in range(L)]
    o += f(n) * L
    return b"".join(parts)
att, wq, wk, wv, wo, ffn = take(dim), take(dim * dim), take(kvd * dim), take(kvd * dim), take(dim * dim), take(dim)
w1, w2, w3 = take(hid * dim), take(dim * hid), take(hid * dim)
fin = b[o:o + f(dim)]
for layers, out in ((L, sys.argv[2] + ".ok"), (L - 1, sys.argv[2])):  # the right n_layers, then one short
    hdr = struct.pack("<Ii7iB", 0x616b3432, 1, dim, hid, layers, H, KV, V, S, 1).ljust(256, b"\0")
    open(out, "wb").write(hdr + att + ffn + fin + emb + wq + wk + wv + wo + w1 + w2 + w3)
PY
"$G" inspect "$TMP/v1.bin.ok" >/dev/null 2>"$TMP/err" || fail "the v1 checkpoint with the right header does not load: $(cat "$TMP/err")"
expect_error "$TMP/v1.bin: header n_layers = 4, but the file's" "$G" inspect "$TMP/v1.bin"
grep -q "hold 5 layers" "$TMP/err" || fail "v1: $(cat "$TMP/err")"
# a v2 file (Q8_0 matrices, group size 64; zero weights: only the sizes matter here)
"$PY" - "$STORIES" "$TMP/v2.bin" <<'PY' || fail "writing the v2 checkpoint"
import struct, sys
dim, hid, L, H, KV, V, S = struct.unpack_from("<7i", open(sys.argv[1], "rb").read(28))
kvd, gs = dim // H * KV, 64
q8 = lambda n: bytes(n) + struct.pack("<f", 1.0) * (n // gs)
body = bytes(4 * dim * (2 * L + 1))  # the norms, float32
body += q8(V * dim) + b"".join(q8(n) for n in [dim * dim] * L + [kvd * dim] * (2 * L) + [dim * dim] * L +
                               [hid * dim] * L + [dim * hid] * L + [hid * dim] * L)
for layers, out in ((L, sys.argv[2] + ".ok"), (L + 1, sys.argv[2])):
    hdr = struct.pack("<Ii7iBi", 0x616b3432, 2, dim, hid, layers, H, KV, V, S, 1, gs).ljust(256, b"\0")
    open(out, "wb").write(hdr + body)
PY
"$G" inspect "$TMP/v2.bin.ok" >/dev/null 2>"$TMP/err" || fail "the v2 checkpoint with the right header does not load: $(cat "$TMP/err")"
expect_error "$TMP/v2.bin: header n_layers = 6, but the file's" "$G" inspect "$TMP/v2.bin"
grep -q "hold 5 layers" "$TMP/err" || fail "v2: $(cat "$TMP/err")"
exit 0
