#!/usr/bin/env python3
"""A Hugging Face folder with random bf16 weights of a real model's shape, for
timing loads where no real teacher can be fetched (the GPU machine):
config.json copied from ../shared/configs, model.safetensors written tensor by
tensor (never the whole model in memory), no tokenizer.

Usage: python3 tests/bench/synthetic_teacher.py CONFIG.json OUT_DIR
Needs numpy. Values: N(0, 0.02) rounded to bf16 by truncation, seed 0."""
import json
import os
import shutil
import sys

import numpy as np


def tensors(c):
    D, F, L = c["hidden_size"], c["intermediate_size"], c["num_hidden_layers"]
    H, KV, V = c["num_attention_heads"], c.get("num_key_value_heads", c["num_attention_heads"]), c["vocab_size"]
    hd = c.get("head_dim", D // H)
    bias = c.get("model_type") == "qwen2"
    out = [("model.embed_tokens.weight", (V, D))]
    for l in range(L):
        p = f"model.layers.{l}."
        out += [(p + "input_layernorm.weight", (D,)), (p + "post_attention_layernorm.weight", (D,))]
        for name, rows in (("q", H * hd), ("k", KV * hd), ("v", KV * hd)):
            out.append((p + f"self_attn.{name}_proj.weight", (rows, D)))
            if bias:
                out.append((p + f"self_attn.{name}_proj.bias", (rows,)))
        if c.get("model_type") == "qwen3":
            out += [(p + "self_attn.q_norm.weight", (hd,)), (p + "self_attn.k_norm.weight", (hd,))]
        out += [(p + "self_attn.o_proj.weight", (D, H * hd)), (p + "mlp.gate_proj.weight", (F, D)),
                (p + "mlp.up_proj.weight", (F, D)), (p + "mlp.down_proj.weight", (D, F))]
    out.append(("model.norm.weight", (D,)))
    if not c.get("tie_word_embeddings", False):
        out.append(("lm_head.weight", (V, D)))
    return out


def main():
    cfg_path, out = sys.argv[1], sys.argv[2]
    c = json.load(open(cfg_path))
    os.makedirs(out, exist_ok=True)
    shutil.copy(cfg_path, os.path.join(out, "config.json"))
    ts = tensors(c)
    header, off = {}, 0
    for name, shape in ts:
        n = int(np.prod(shape)) * 2
        header[name] = {"dtype": "BF16", "shape": list(shape), "data_offsets": [off, off + n]}
        off += n
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    rng = np.random.default_rng(0)
    with open(os.path.join(out, "model.safetensors.tmp"), "wb") as f:
        f.write(len(h).to_bytes(8, "little"))
        f.write(h)
        for name, shape in ts:
            n = int(np.prod(shape))
            for s in range(0, n, 1 << 24):  # 16M values at a time
                k = min(1 << 24, n - s)
                x = (rng.standard_normal(k, dtype=np.float32) * 0.02).view(np.uint32) >> 16
                f.write(x.astype(np.uint16).tobytes())
    os.replace(os.path.join(out, "model.safetensors.tmp"), os.path.join(out, "model.safetensors"))
    print(f"{out}: {len(ts)} tensors, {off / 1e9:.2f} GB")


if __name__ == "__main__":
    main()
