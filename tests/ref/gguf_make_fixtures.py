#!/usr/bin/env python3
"""Write the tiny GGUF fixtures under tests/fixtures/gguf/ with the gguf package.

    llama.gguf   tests/fixtures/hf/llama (bf16 -> f32, tied, llama3 RoPE) the way
                 llama.cpp's convert_hf_to_gguf.py writes a Llama: q/k rows
                 permuted inside each head (HF row p*hd/2 + i -> row 2i + p) and
                 the llama3 scaling as rope_freqs.weight; no output.weight.
    qwen2.gguf   tests/fixtures/hf/qwen2 (f16 kept as f16, q/k/v biases, untied),
                 not permuted (qwen2 uses NEOX RoPE).
    qwen3.gguf   tests/fixtures/hf/qwen3 (f32, q/k norms, key_length 16).
    dequant.gguf for each quantized type, random blocks (scales made finite) and
                 "<type>.expected": what gguf.quants.dequantize makes of them.

graft's tests load the three models and compare with the fixtures' golden.json
(the transformers float64 logits), and the dequantized blocks with the
expected values. Deterministic (seeded). Needs torch, safetensors, gguf:
    /tmp/hfenv/bin/python tests/ref/gguf_make_fixtures.py
"""
import json
import math
import os

import numpy as np
import gguf
from safetensors.torch import load_file

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
HF = os.path.join(ROOT, "tests", "fixtures", "hf")
OUT = os.path.join(ROOT, "tests", "fixtures", "gguf")


def hf_tensors(name):
    d = os.path.join(HF, name)
    t = {}
    for f in sorted(os.listdir(d)):
        if f.endswith(".safetensors"):
            t.update(load_file(os.path.join(d, f)))
    return json.load(open(os.path.join(d, "config.json"))), t


def permute(w, n_head):
    """llama.cpp's permutation of q/k rows for its NORM (adjacent-pair) RoPE."""
    shape = w.shape
    return w.reshape(n_head, 2, shape[0] // n_head // 2, *shape[1:]).swapaxes(1, 2).reshape(shape)


def llama3_factors(theta, hd, s):
    freqs = 1.0 / (theta ** (np.arange(0, hd, 2, dtype=np.float64) / hd))
    lo = s["original_max_position_embeddings"] / s["low_freq_factor"]
    hi = s["original_max_position_embeddings"] / s["high_freq_factor"]
    out = []
    for f in freqs:
        wl = 2 * math.pi / f
        if wl < hi:
            out.append(1.0)
        elif wl > lo:
            out.append(s["factor"])
        else:
            smooth = (s["original_max_position_embeddings"] / wl - s["low_freq_factor"]) / (
                s["high_freq_factor"] - s["low_freq_factor"])
            out.append(1.0 / ((1 - smooth) / s["factor"] + smooth))
    return np.array(out, dtype=np.float32)


def write_model(name, arch, dtype, permute_qk):
    cfg, t = hf_tensors(name)
    D, H = cfg["hidden_size"], cfg["num_attention_heads"]
    KV = cfg["num_key_value_heads"]
    hd = cfg.get("head_dim") or D // H
    rope = cfg.get("rope_parameters") or {}
    theta = cfg.get("rope_theta") or rope.get("rope_theta")
    w = gguf.GGUFWriter(os.path.join(OUT, name + ".gguf"), arch)
    w.add_block_count(cfg["num_hidden_layers"])
    w.add_context_length(cfg["max_position_embeddings"])
    w.add_embedding_length(D)
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_head_count(H)
    w.add_head_count_kv(KV)
    w.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
    w.add_rope_freq_base(theta)
    w.add_rope_dimension_count(hd)
    if hd != D // H:
        w.add_key_length(hd)
        w.add_value_length(hd)
    w.add_vocab_size(cfg["vocab_size"])
    qtype = {"f32": gguf.GGMLQuantizationType.F32, "f16": gguf.GGMLQuantizationType.F16}[dtype]
    npdt = np.float32 if dtype == "f32" else np.float16

    def put(gname, tensor, vector=False):
        a = tensor.float().numpy()
        if vector:  # norms and biases stay f32, as the converter keeps 1-D tensors
            w.add_tensor(gname, a.astype(np.float32))
        else:
            w.add_tensor(gname, a.astype(npdt), raw_dtype=qtype)

    rs = cfg.get("rope_scaling")
    if rs and rs.get("rope_type") == "llama3":
        w.add_tensor("rope_freqs.weight", llama3_factors(theta, hd, rs))
    put("token_embd.weight", t["model.embed_tokens.weight"])
    for l in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{l}."
        b = f"blk.{l}."
        q, k = t[p + "self_attn.q_proj.weight"], t[p + "self_attn.k_proj.weight"]
        if permute_qk:
            q, k = permute(q, H), permute(k, KV)
        put(b + "attn_norm.weight", t[p + "input_layernorm.weight"], True)
        put(b + "attn_q.weight", q)
        put(b + "attn_k.weight", k)
        put(b + "attn_v.weight", t[p + "self_attn.v_proj.weight"])
        put(b + "attn_output.weight", t[p + "self_attn.o_proj.weight"])
        for x in "qkv":
            key = p + f"self_attn.{x}_proj.bias"
            if key in t:
                put(b + f"attn_{x}.bias", t[key], True)
        if p + "self_attn.q_norm.weight" in t:
            put(b + "attn_q_norm.weight", t[p + "self_attn.q_norm.weight"], True)
            put(b + "attn_k_norm.weight", t[p + "self_attn.k_norm.weight"], True)
        put(b + "ffn_norm.weight", t[p + "post_attention_layernorm.weight"], True)
        put(b + "ffn_gate.weight", t[p + "mlp.gate_proj.weight"])
        put(b + "ffn_up.weight", t[p + "mlp.up_proj.weight"])
        put(b + "ffn_down.weight", t[p + "mlp.down_proj.weight"])
    put("output_norm.weight", t["model.norm.weight"], True)
    if not cfg.get("tie_word_embeddings", False):
        put("output.weight", t["lm_head.weight"])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


# byte offsets of the float16 scale fields in each block
F16_FIELDS = {"Q4_0": [0], "Q4_1": [0, 2], "Q5_0": [0], "Q5_1": [0, 2], "Q8_0": [0],
              "Q4_K": [0, 2], "Q5_K": [0, 2], "Q6_K": [208]}


def write_dequant():
    rng = np.random.default_rng(7)
    w = gguf.GGUFWriter(os.path.join(OUT, "dequant.gguf"), "graft-dequant-test")
    rows = 3
    for name, fields in F16_FIELDS.items():
        qt = gguf.GGMLQuantizationType[name]
        be, bb = gguf.GGML_QUANT_SIZES[qt]
        cols = 2 * 256
        nblk = cols // be
        raw = rng.integers(0, 256, size=(rows, nblk, bb), dtype=np.uint8)
        for off in fields:
            scale = rng.uniform(-0.05, 0.05, size=(rows, nblk)).astype(np.float16)
            raw[:, :, off:off + 2] = scale.view(np.uint8).reshape(rows, nblk, 2)
        raw = raw.reshape(rows, nblk * bb)
        w.add_tensor(name.lower(), raw, raw_shape=raw.shape, raw_dtype=qt)
        exp = gguf.quants.dequantize(raw, qt).astype(np.float32)
        assert exp.shape == (rows, cols), exp.shape
        w.add_tensor(name.lower() + ".expected", exp)
    # the plain float types through the same path
    x = rng.standard_normal((rows, 64)).astype(np.float32)
    w.add_tensor("f16", x.astype(np.float16), raw_dtype=gguf.GGMLQuantizationType.F16)
    w.add_tensor("f16.expected", x.astype(np.float16).astype(np.float32))
    bf = gguf.quants.quantize(x, gguf.GGMLQuantizationType.BF16)
    w.add_tensor("bf16", bf, raw_shape=bf.shape, raw_dtype=gguf.GGMLQuantizationType.BF16)
    w.add_tensor("bf16.expected", gguf.quants.dequantize(bf, gguf.GGMLQuantizationType.BF16).astype(np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main():
    os.makedirs(OUT, exist_ok=True)
    write_model("llama", "llama", "f32", True)
    write_model("qwen2", "qwen2", "f16", False)
    write_model("qwen3", "qwen3", "f32", False)
    write_dequant()
    for f in sorted(os.listdir(OUT)):
        if f.endswith(".gguf"):
            print(f, os.path.getsize(os.path.join(OUT, f)))


if __name__ == "__main__":
    main()
