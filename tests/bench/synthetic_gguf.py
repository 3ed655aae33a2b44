#!/usr/bin/env python3
"""A GGUF teacher of random weights with a real model's shape, for timing
GGUF loads where no real one can be fetched (the GPU machine reaches nothing).

Usage: python3 tests/bench/synthetic_gguf.py CONFIG.json OUT.gguf
           [--type q4_k_m|q4_k|q6_k|q8_0|bf16|f16] [--untied] [--seed N]
           [--manifest OUT.json]

CONFIG.json is a Hugging Face config (e.g. ../shared/configs/qwen2.5-1.5b.json):
llama, qwen2 and qwen3 shapes (llama's q/k rows are not permuted as the
converter does: the weights are random), vocab_size at least 300. Needs numpy
only: GGUF v3 is written here by hand (the layout of ggml's docs/gguf.md, the
one engine/formats/gguf_reader.h reads), so nothing has to be carried to a
machine without the gguf package.

What a converted Hugging Face model holds, as llama.cpp's converter names it:
token_embd, blk.N.{attn_norm, attn_q, attn_k, attn_v, attn_output,
[attn_{q,k,v}.bias], [attn_{q,k}_norm], ffn_norm, ffn_gate, ffn_up, ffn_down},
output_norm, output (only when untied). Matrices have the chosen type; vectors
(norms, biases) are f32, as the converter keeps them.

--type q4_k_m follows llama.cpp's Q4_K_M rule: q6_k for output.weight (or
token_embd.weight when there is no output), and for attn_v and ffn_down in the
layers where use_more_bits holds (the first and last eighth, and every third
in between); q4_k elsewhere. With --untied at the Qwen2.5-1.5B shape this gives
the counts of the real Qwen2.5-Coder-1.5B-Instruct Q4_K_M download (169 q4_k,
29 q6_k, 141 f32; docs/gguf.md). K-quants need rows of a multiple of 256
values, q8_0 of 32.

Values (seed fixed, default 0): quantized blocks are random bytes (every
4/6/8-bit code and sub-scale is valid) with finite float16 scales chosen so
that the weights have a standard deviation of roughly 0.02; f16/bf16 matrices are
N(0, 0.02); norm weights 1 + N(0, 0.02); biases N(0, 0.02). Written tensor
by tensor in chunks of at most 64 MiB (never the whole model in memory; 0.3 GB
peak at 1.5B), to OUT.gguf.tmp, renamed when complete.

Tokenizer (synthetic, byte-level BPE "gpt2" with pre-tokenizer "qwen2", the
kind Qwen2 GGUF files carry): the 256 byte symbols, then tokens each made by
a merge of an existing token with a byte symbol (7 in 10) or one of the first
4096 tokens, at most 16 characters (so every merge "a b" names tokens of the
vocabulary, and a merged string is new), up to
the config's bos_token_id (default vocab - 293, Qwen2's 151643); there
<|endoftext|>, <|im_start|>, <|im_end|> and further control tokens (22 as
Qwen2.5 has), then [PADn] tokens (type unused) up to vocab_size: the same
counts as a Qwen2.5 GGUF (151387 merges at 151936). BOS/EOS ids from the
config; add_bos_token false.

--manifest writes what was written: the metadata that matters and every
tensor's name, shape (PyTorch order [rows, cols]) and ggml type name."""
import json
import os
import random
import struct
import sys

import numpy as np

# ggml types: (id, elements per block, bytes per block, byte offsets of the
# float16 scales inside a block, base scale for weights of std ~0.02)
TYPES = {
    "f32": (0, 1, 4, [], 0),
    "f16": (1, 1, 2, [], 0),
    "bf16": (30, 1, 2, [], 0),
    # d * q, q int8 (std ~74)
    "q8_0": (8, 32, 34, [0], 0.02 / 74),
    # d * sc * q - dmin * m, sc and m 6-bit (0..63), q 4-bit: std ~250 d with dmin = 7.5 d
    "q4_k": (12, 256, 144, [0, 2], 0.02 / 250),
    # d * scale * (q - 32), scale int8, q 6-bit: std ~1370 d
    "q6_k": (14, 256, 210, [208], 0.02 / 1370),
}
FILE_TYPE = {"f16": 1, "bf16": 32, "q8_0": 7, "q4_k": 15, "q4_k_m": 15, "q6_k": 18}  # llama_ftype
ALIGN = 32
CHUNK = 64 << 20
T_U32, T_I32, T_F32, T_BOOL, T_STR, T_ARR = 4, 5, 6, 7, 8, 9


def fail(msg):
    sys.stderr.write(f"synthetic_gguf.py: {msg}\n")
    sys.exit(1)


def gguf_str(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def kv(key, t, v):
    out = gguf_str(key) + struct.pack("<I", t)
    if t == T_U32:
        return out + struct.pack("<I", v)
    if t == T_I32:
        return out + struct.pack("<i", v)
    if t == T_F32:
        return out + struct.pack("<f", v)
    if t == T_BOOL:
        return out + struct.pack("<B", 1 if v else 0)
    if t == T_STR:
        return out + gguf_str(v)
    elem, items = v
    out += struct.pack("<IQ", elem, len(items))
    if elem == T_STR:
        return out + b"".join(gguf_str(s) for s in items)
    if elem == T_I32:
        return out + np.asarray(items, dtype="<i4").tobytes()
    fail(f"array of type {elem} not written here")


def byte_symbols():
    """GPT-2's byte-level alphabet: printable bytes stand for themselves, the
    rest map to U+0100 onwards, in byte order."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    out, extra = {}, 0
    for b in range(256):
        if b in keep:
            out[b] = chr(b)
        else:
            out[b] = chr(0x100 + extra)
            extra += 1
    return [out[b] for b in range(256)]


def tokenizer(c, rnd):
    V = c["vocab_size"]
    bos = c.get("bos_token_id")
    bos = bos if isinstance(bos, int) and 256 < bos < V else max(257, V - 293)
    eos = c.get("eos_token_id")
    eos = eos if isinstance(eos, int) and bos <= eos < V else bos
    n_control = min(22, V - bos)
    tokens = byte_symbols()
    seen = set(tokens)
    merges = []
    while len(tokens) < bos:
        a = tokens[rnd.randrange(len(tokens))]
        b = tokens[rnd.randrange(256)] if rnd.random() < 0.7 else tokens[rnd.randrange(min(len(tokens), 4096))]
        if a + b in seen or len(a) + len(b) > 16:
            continue
        seen.add(a + b)
        merges.append(a + " " + b)
        tokens.append(a + b)
    types = [1] * len(tokens)  # normal
    names = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    for i in range(n_control):
        tokens.append(names[i] if i < len(names) else f"<|control_{i}|>")
        types.append(3)  # control
    while len(tokens) < V:
        tokens.append(f"[PAD{len(tokens)}]")
        types.append(5)  # unused
    return tokens, types, merges, bos, eos


def tensor_list(c, qtype, untied):
    """(name, [rows, cols] or [n], ggml type name) as llama.cpp's converter writes them."""
    arch = c["model_type"]
    D, F, L = c["hidden_size"], c["intermediate_size"], c["num_hidden_layers"]
    H = c["num_attention_heads"]
    KV = c.get("num_key_value_heads") or H
    hd = c.get("head_dim") or D // H
    V = c["vocab_size"]
    tied = c.get("tie_word_embeddings", False) and not untied

    def more_bits(l):  # llama.cpp's use_more_bits
        return l < L // 8 or l >= 7 * L // 8 or (l - L // 8) % 3 == 2

    def mat(name, l=None):
        if qtype != "q4_k_m":
            return qtype
        if name == "output" or (name == "token_embd" and tied):
            return "q6_k"
        if name in ("attn_v", "ffn_down") and more_bits(l):
            return "q6_k"
        return "q4_k"

    out = [("token_embd.weight", [V, D], mat("token_embd"))]
    for l in range(L):
        b = f"blk.{l}."
        out.append((b + "attn_norm.weight", [D], "f32"))
        out.append((b + "attn_q.weight", [H * hd, D], mat("attn_q", l)))
        out.append((b + "attn_k.weight", [KV * hd, D], mat("attn_k", l)))
        out.append((b + "attn_v.weight", [KV * hd, D], mat("attn_v", l)))
        out.append((b + "attn_output.weight", [D, H * hd], mat("attn_output", l)))
        if arch == "qwen2":
            out += [(b + "attn_q.bias", [H * hd], "f32"), (b + "attn_k.bias", [KV * hd], "f32"),
                    (b + "attn_v.bias", [KV * hd], "f32")]
        if arch == "qwen3":
            out += [(b + "attn_q_norm.weight", [hd], "f32"), (b + "attn_k_norm.weight", [hd], "f32")]
        out.append((b + "ffn_norm.weight", [D], "f32"))
        out.append((b + "ffn_gate.weight", [F, D], mat("ffn_gate", l)))
        out.append((b + "ffn_up.weight", [F, D], mat("ffn_up", l)))
        out.append((b + "ffn_down.weight", [D, F], mat("ffn_down", l)))
    out.append(("output_norm.weight", [D], "f32"))
    if not tied:
        out.append(("output.weight", [V, D], mat("output")))
    for name, shape, t in out:
        be = TYPES[t][1]
        if shape[-1] % be:
            fail(f"{name}: rows of {shape[-1]} values are not whole {t} blocks of {be}; choose another --type")
    return out


def nbytes(shape, t):
    _, be, bb, _, _ = TYPES[t]
    return int(np.prod(shape)) // be * bb


def write_data(f, name, shape, t, rng):
    """Writes one tensor's data, at most CHUNK bytes generated at a time."""
    _, be, bb, f16_fields, base = TYPES[t]
    if t == "f32":  # vectors only
        n = shape[0]
        x = rng.standard_normal(n, dtype=np.float32) * np.float32(0.02)
        if name.endswith("norm.weight"):
            x += np.float32(1)
        f.write(x.astype("<f4").tobytes())
        return
    cols = shape[-1]
    rows = int(np.prod(shape[:-1]))
    row_bytes = cols // be * bb
    step = max(1, CHUNK // row_bytes)
    for r in range(0, rows, step):
        k = min(step, rows - r)
        if t in ("f16", "bf16"):
            x = rng.standard_normal(k * cols, dtype=np.float32) * np.float32(0.02)
            if t == "f16":
                f.write(x.astype("<f2").tobytes())
            else:  # bf16 by truncation
                f.write((x.view(np.uint32) >> 16).astype("<u2").tobytes())
            continue
        nblk = k * cols // be
        raw = np.frombuffer(rng.bytes(nblk * bb), dtype=np.uint8).reshape(nblk, bb).copy()
        d = (rng.uniform(0.5, 1.5, nblk) * base).astype("<f2")
        raw[:, f16_fields[0]:f16_fields[0] + 2] = d.view(np.uint8).reshape(nblk, 2)
        if len(f16_fields) > 1:  # q4_k's dmin: 7.5 d centres d * sc * q - dmin * m roughly on zero
            dmin = (d.astype(np.float32) * np.float32(7.5)).astype("<f2")
            raw[:, f16_fields[1]:f16_fields[1] + 2] = dmin.view(np.uint8).reshape(nblk, 2)
        f.write(raw.tobytes())


def pad(f):
    n = (-f.tell()) % ALIGN
    if n:
        f.write(b"\0" * n)


def main():
    args = sys.argv[1:]
    opts = {"--type": "q4_k_m", "--seed": "0", "--manifest": None}
    untied = False
    pos = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--untied":
            untied = True
        elif a in opts:
            if i + 1 >= len(args):
                fail(f"{a} needs a value")
            opts[a] = args[i + 1]
            i += 1
        else:
            pos.append(a)
        i += 1
    if len(pos) != 2:
        fail("usage: synthetic_gguf.py CONFIG.json OUT.gguf [--type q4_k_m|q4_k|q6_k|q8_0|bf16|f16] "
             "[--untied] [--seed N] [--manifest OUT.json]")
    cfg_path, out = pos
    qtype = opts["--type"]
    if qtype not in FILE_TYPE:
        fail(f"--type {qtype} is not one of {' '.join(FILE_TYPE)}")
    try:
        c = json.load(open(cfg_path))
    except (OSError, ValueError) as e:
        fail(f"{cfg_path}: {e}")
    arch = c.get("model_type")
    if arch not in ("llama", "qwen2", "qwen3"):
        fail(f"{cfg_path}: model_type {arch} is not llama, qwen2 or qwen3")
    if not isinstance(c.get("vocab_size"), int) or c["vocab_size"] < 300:
        fail(f"{cfg_path}: vocab_size must be at least 300 (256 byte tokens, merges and control tokens)")
    seed = int(opts["--seed"])
    rng = np.random.default_rng(seed)
    tokens, types, merges, bos, eos = tokenizer(c, random.Random(seed))
    ts = tensor_list(c, qtype, untied)

    D, H = c["hidden_size"], c["num_attention_heads"]
    hd = c.get("head_dim") or D // H
    meta = [
        kv("general.architecture", T_STR, arch),
        kv("general.name", T_STR, f"synthetic {os.path.basename(cfg_path)} {qtype}"),
        kv("general.file_type", T_U32, FILE_TYPE[qtype]),
        kv("general.quantization_version", T_U32, 2),
        kv(arch + ".block_count", T_U32, c["num_hidden_layers"]),
        kv(arch + ".context_length", T_U32, c.get("max_position_embeddings", 2048)),
        kv(arch + ".embedding_length", T_U32, D),
        kv(arch + ".feed_forward_length", T_U32, c["intermediate_size"]),
        kv(arch + ".attention.head_count", T_U32, H),
        kv(arch + ".attention.head_count_kv", T_U32, c.get("num_key_value_heads") or H),
        kv(arch + ".rope.freq_base", T_F32, c.get("rope_theta", 10000.0)),
        kv(arch + ".attention.layer_norm_rms_epsilon", T_F32, c.get("rms_norm_eps", 1e-6)),
        kv("tokenizer.ggml.model", T_STR, "gpt2"),
        kv("tokenizer.ggml.pre", T_STR, "qwen2"),
        kv("tokenizer.ggml.tokens", T_ARR, (T_STR, tokens)),
        kv("tokenizer.ggml.token_type", T_ARR, (T_I32, types)),
        kv("tokenizer.ggml.merges", T_ARR, (T_STR, merges)),
        kv("tokenizer.ggml.bos_token_id", T_U32, bos),
        kv("tokenizer.ggml.eos_token_id", T_U32, eos),
        kv("tokenizer.ggml.padding_token_id", T_U32, bos),
        kv("tokenizer.ggml.add_bos_token", T_BOOL, False),
    ]
    if hd != D // H:
        meta += [kv(arch + ".attention.key_length", T_U32, hd), kv(arch + ".attention.value_length", T_U32, hd)]

    infos, off = [], 0
    for name, shape, t in ts:
        off += (-off) % ALIGN
        infos.append(gguf_str(name) + struct.pack("<I", len(shape)) +
                     b"".join(struct.pack("<Q", n) for n in reversed(shape)) +  # ne[0] = row length
                     struct.pack("<IQ", TYPES[t][0], off))
        off += nbytes(shape, t)

    tmp = out + ".tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(b"GGUF" + struct.pack("<IQQ", 3, len(ts), len(meta)))
            f.write(b"".join(meta))
            f.write(b"".join(infos))
            pad(f)
            start = f.tell()
            for name, shape, t in ts:
                pad(f)
                write_data(f, name, shape, t, rng)
            if f.tell() - start != off:
                fail(f"internal: wrote {f.tell() - start} data bytes, the tensor infos say {off}")
        os.replace(tmp, out)
    except OSError as e:
        try:
            os.remove(tmp)
        except OSError:
            pass
        fail(f"{out}: {e}")

    counts = {}
    for _, _, t in ts:
        counts[t] = counts.get(t, 0) + 1
    if opts["--manifest"]:
        man = {"arch": arch, "type": qtype, "untied": untied, "seed": seed, "vocab_size": len(tokens),
               "merges": len(merges), "bos": bos, "eos": eos, "tied": not any(n == "output.weight" for n, _, _ in ts),
               "parameters": sum(int(np.prod(s)) for _, s, _ in ts), "type_counts": counts,
               "tensors": [{"name": n, "shape": s, "type": t} for n, s, t in ts]}
        with open(opts["--manifest"], "w") as f:
            json.dump(man, f, indent=1)
    size = os.path.getsize(out)
    print(f"{out}: {len(ts)} tensors ({', '.join(f'{n} {t}' for t, n in sorted(counts.items()))}), "
          f"{len(tokens)} tokens, {len(merges)} merges, {size / 1e9:.2f} GB")


if __name__ == "__main__":
    try:
        main()
    except KeyError as e:  # a config without a key the shape needs
        fail(f"the config has no {e}")
