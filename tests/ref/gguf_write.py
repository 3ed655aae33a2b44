"""Small GGUF v3 files for the tokenizer export checks, written with the
standard library only (no gguf / numpy), so tests/integration/export_tokenizers.sh
runs with nothing but python3:

    gguf_write.py stories STORIES.bin TOK.bin OUT.gguf
        stories260K as a llama GGUF teacher: the llama2.c weights (llama.cpp keeps
        llama's q/k rows in adjacent-pair order, which is llama2.c's) and its
        tokenizer as tokenizer.ggml model "llama" (SentencePiece: tokens with
        U+2581 for spaces, scores, token types)
    gguf_write.py bpe TOKENIZER.json PRE OUT.gguf [--model-dim D]
        a byte-level BPE tokenizer ("gpt2": tokens, merges, token types,
        tokenizer.ggml.pre = PRE) taken from a Hugging Face tokenizer.json; with
        --model-dim, also a random one-layer qwen2 teacher of that width over
        the whole vocabulary (seeded), so that `graft convert` can run on it

Formats read from the GGUF specification (ggml docs/gguf.md): little-endian
header "GGUF", version 3, tensor count, metadata count; key/value pairs;
tensor infos (name, n_dims, ne[] fastest first, type, offset); data aligned
to 32 bytes. Tensor type 0 is F32.
"""
import array
import json
import random
import struct
import sys

T_U32, T_I32, T_F32, T_BOOL, T_STR, T_ARR = 4, 5, 6, 7, 8, 9
ALIGN = 32
META = "\u2581"


def _str(s):
    b = s.encode("utf-8") if isinstance(s, str) else s
    return struct.pack("<Q", len(b)) + b


def _value(t, v):
    if t == T_U32:
        return struct.pack("<I", v)
    if t == T_I32:
        return struct.pack("<i", v)
    if t == T_F32:
        return struct.pack("<f", v)
    if t == T_BOOL:
        return struct.pack("<?", v)
    if t == T_STR:
        return _str(v)
    raise ValueError(t)


def write_gguf(path, kvs, tensors):
    """kvs: [(key, type, value)] with type T_ARR values as (elem_type, list);
    tensors: [(name, shape_pytorch, array('f'))]."""
    out = bytearray(b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs)))
    for key, t, v in kvs:
        out += _str(key) + struct.pack("<I", t)
        if t == T_ARR:
            et, items = v
            out += struct.pack("<IQ", et, len(items))
            out += b"".join(_value(et, x) for x in items)
        else:
            out += _value(t, v)
    offset = 0
    datas = []
    for name, shape, data in tensors:
        ne = list(reversed(shape))  # ggml: fastest dimension first
        out += _str(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", n) for n in ne)
        out += struct.pack("<IQ", 0, offset)
        raw = data.tobytes()
        datas.append(raw)
        offset += (len(raw) + ALIGN - 1) // ALIGN * ALIGN
    out += b"\0" * ((-len(out)) % ALIGN)
    for raw in datas:
        out += raw + b"\0" * ((-len(raw)) % ALIGN)
    with open(path, "wb") as f:
        f.write(out)


def read_llama2c_tokenizer(path, vocab):
    b = open(path, "rb").read()
    off, toks = 4, []
    for _ in range(vocab):
        score, n = struct.unpack_from("<fi", b, off)
        off += 8
        toks.append((b[off:off + n], score))
        off += n
    return toks


def spm_tokenizer_kvs(toks):
    """llama2.c's vocabulary as llama.cpp's converter spells a SentencePiece one."""
    names, scores, types = [], [], []
    for i, (piece, score) in enumerate(toks):
        if i == 0:
            names.append("<unk>"), types.append(2)
        elif i in (1, 2):
            names.append("<s>" if i == 1 else "</s>"), types.append(3)
        elif 3 <= i < 259:
            names.append(piece.decode()), types.append(6)
        else:
            names.append(piece.decode("utf-8").replace(" ", META)), types.append(1)
        scores.append(score)
    return [
        ("tokenizer.ggml.model", T_STR, "llama"),
        ("tokenizer.ggml.tokens", T_ARR, (T_STR, names)),
        ("tokenizer.ggml.scores", T_ARR, (T_F32, scores)),
        ("tokenizer.ggml.token_type", T_ARR, (T_I32, types)),
        ("tokenizer.ggml.bos_token_id", T_U32, 1),
        ("tokenizer.ggml.eos_token_id", T_U32, 2),
        ("tokenizer.ggml.unknown_token_id", T_U32, 0),
        ("tokenizer.ggml.add_bos_token", T_BOOL, True),
        ("tokenizer.ggml.add_space_prefix", T_BOOL, True),
    ]


def stories(bin_path, tok_path, out):
    b = open(bin_path, "rb").read()
    D, F, L, H, KV, V, S = struct.unpack_from("<7i", b, 0)
    shared = V > 0
    V = abs(V)
    hd = D // H
    floats = array.array("f")
    floats.frombytes(b[28:])
    pos = 0

    def take(n):
        nonlocal pos
        a = floats[pos:pos + n]
        pos += n
        return a

    emb = take(V * D)
    att_norm = [take(D) for _ in range(L)]
    wq = [take(D * H * hd) for _ in range(L)]
    wk = [take(D * KV * hd) for _ in range(L)]
    wv = [take(D * KV * hd) for _ in range(L)]
    wo = [take(H * hd * D) for _ in range(L)]
    ffn_norm = [take(D) for _ in range(L)]
    w1 = [take(F * D) for _ in range(L)]
    w2 = [take(D * F) for _ in range(L)]
    w3 = [take(F * D) for _ in range(L)]
    final = take(D)
    take(S * hd // 2 * 2)  # freq_cis (unused)
    tensors = [("token_embd.weight", [V, D], emb), ("output_norm.weight", [D], final)]
    if not shared:
        tensors.append(("output.weight", [V, D], take(V * D)))
    for i in range(L):
        p = f"blk.{i}."
        tensors += [
            (p + "attn_norm.weight", [D], att_norm[i]),
            (p + "attn_q.weight", [H * hd, D], wq[i]),
            (p + "attn_k.weight", [KV * hd, D], wk[i]),
            (p + "attn_v.weight", [KV * hd, D], wv[i]),
            (p + "attn_output.weight", [D, H * hd], wo[i]),
            (p + "ffn_norm.weight", [D], ffn_norm[i]),
            (p + "ffn_gate.weight", [F, D], w1[i]),
            (p + "ffn_down.weight", [D, F], w2[i]),
            (p + "ffn_up.weight", [F, D], w3[i]),
        ]
    kvs = [
        ("general.architecture", T_STR, "llama"),
        ("llama.embedding_length", T_U32, D),
        ("llama.feed_forward_length", T_U32, F),
        ("llama.block_count", T_U32, L),
        ("llama.attention.head_count", T_U32, H),
        ("llama.attention.head_count_kv", T_U32, KV),
        ("llama.context_length", T_U32, S),
        ("llama.attention.layer_norm_rms_epsilon", T_F32, 1e-5),
        ("llama.rope.freq_base", T_F32, 10000.0),
    ] + spm_tokenizer_kvs(read_llama2c_tokenizer(tok_path, V))
    write_gguf(out, kvs, tensors)


def bpe(tok_json, pre, out, model_dim=0):
    t = json.load(open(tok_json, encoding="utf-8"))
    vocab = dict(t["model"]["vocab"])
    added = {a["id"]: a for a in t.get("added_tokens", [])}
    n = max(list(vocab.values()) + list(added)) + 1
    names, types = [""] * n, [5] * n  # holes: unused
    for s, i in vocab.items():
        names[i], types[i] = s, 1
    for i, a in added.items():
        names[i], types[i] = a["content"], 3 if a.get("special") else 4
    merges = [m if isinstance(m, str) else " ".join(m) for m in t["model"]["merges"]]
    eos = next((i for i, a in added.items() if a["content"] in ("<|endoftext|>", "<|end_of_text|>")), None)
    kvs = [
        ("general.architecture", T_STR, "qwen2"),
        ("tokenizer.ggml.model", T_STR, "gpt2"),
        ("tokenizer.ggml.pre", T_STR, pre),
        ("tokenizer.ggml.tokens", T_ARR, (T_STR, names)),
        ("tokenizer.ggml.token_type", T_ARR, (T_I32, types)),
        ("tokenizer.ggml.merges", T_ARR, (T_STR, merges)),
        ("tokenizer.ggml.add_bos_token", T_BOOL, False),
    ]
    if eos is not None:
        kvs.append(("tokenizer.ggml.eos_token_id", T_U32, eos))
    tensors = []
    if model_dim:
        D, F, H, hd = model_dim, 2 * model_dim, 2, model_dim // 2
        rng = random.Random(5)

        def rnd(count, std=0.2):
            return array.array("f", (rng.gauss(0.0, std) for _ in range(count)))

        def ones(count):
            return array.array("f", [1.0] * count)

        tensors = [
            ("token_embd.weight", [n, D], rnd(n * D)),
            ("output_norm.weight", [D], ones(D)),
            ("blk.0.attn_norm.weight", [D], ones(D)),
            ("blk.0.attn_q.weight", [H * hd, D], rnd(H * hd * D)),
            ("blk.0.attn_k.weight", [hd, D], rnd(hd * D)),
            ("blk.0.attn_v.weight", [hd, D], rnd(hd * D)),
            ("blk.0.attn_q.bias", [H * hd], rnd(H * hd, 0.1)),
            ("blk.0.attn_k.bias", [hd], rnd(hd, 0.1)),
            ("blk.0.attn_v.bias", [hd], rnd(hd, 0.1)),
            ("blk.0.attn_output.weight", [D, H * hd], rnd(D * H * hd)),
            ("blk.0.ffn_norm.weight", [D], ones(D)),
            ("blk.0.ffn_gate.weight", [F, D], rnd(F * D)),
            ("blk.0.ffn_up.weight", [F, D], rnd(F * D)),
            ("blk.0.ffn_down.weight", [D, F], rnd(D * F)),
        ]
        kvs += [
            ("qwen2.embedding_length", T_U32, D),
            ("qwen2.feed_forward_length", T_U32, F),
            ("qwen2.block_count", T_U32, 1),
            ("qwen2.attention.head_count", T_U32, H),
            ("qwen2.attention.head_count_kv", T_U32, 1),
            ("qwen2.context_length", T_U32, 512),
            ("qwen2.attention.layer_norm_rms_epsilon", T_F32, 1e-6),
            ("qwen2.rope.freq_base", T_F32, 1e6),
        ]
    write_gguf(out, kvs, tensors)


if __name__ == "__main__":
    a = sys.argv[1:]
    if a[:1] == ["stories"] and len(a) == 4:
        stories(a[1], a[2], a[3])
    elif a[:1] == ["bpe"] and len(a) in (4, 6):
        bpe(a[1], a[2], a[3], int(a[5]) if len(a) == 6 and a[4] == "--model-dim" else 0)
    else:
        sys.exit(__doc__)
