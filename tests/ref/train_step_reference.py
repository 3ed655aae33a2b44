#!/usr/bin/env python3
"""Golden of one recovery-training step for the fixtures under tests/fixtures/hf/.

For each fixture (llama: tied, GQA, llama3 rope, bf16; qwen2: q/k/v biases,
f16; qwen3: q/k norm, f32) the student is the saved checkpoint, run by
transformers in float64 (the float32 islands patched as in hf_reference.py).
Two sequences of T = 13 seeded token ids, and for each:
  - teacher logits: seeded N(0, 2^2), rounded to float32 (what graft reads);
  - an alignment target for layer 0's output: seeded N(0, 1), float32.
Loss (the mean over the 26 tokens of each term):
  L = tau^2 KL(softmax(zt/tau) || softmax(zs/tau)), tau = 2
    + 0.5 * ||h0 - target||_2 / sqrt(D)      (h0 = residual after layer 0)
Then every gradient, the global gradient norm, clipping to half that norm and
one torch.optim.AdamW step (lr 1e-2, betas (0.9, 0.95), eps 1e-3 so the first
update is not a sign function of near-zero gradients, weight decay 0.1).

tests/fixtures/train/<name>.json receives, per parameter tensor (graft's names):
first 8 gradient values, the gradient's L2 norm and its dot product with the
probe r_i = ((i * 2654435761 + 12345) mod 2^32) / 2^32 - 0.5, and the same
three for the parameters after the AdamW step. Small, yet every element
enters a probe.

    /tmp/hfenv/bin/python tests/ref/train_step_reference.py
"""

import json
import os
import sys

import torch
from transformers import AutoModelForCausalLM

sys.path.insert(0, os.path.dirname(__file__))
from hf_reference import float64_softmax, inv_freq64, patch_float64  # noqa: E402

T, SEQS, TAU, ALIGN_W = 13, 2, 2.0, 0.5
LR, BETAS, EPS, WD = 1e-2, (0.9, 0.95), 1e-3, 0.1
SEED = {"llama": 3001, "qwen2": 3002, "qwen3": 3003}


def graft_name(hf):
    n = hf.replace("model.", "", 1) if hf.startswith("model.") else hf
    if n == "embed_tokens.weight": return "tok_embed"
    if n == "norm.weight": return "final_norm"
    if n == "lm_head.weight": return "lm_head"
    parts = n.split(".")  # layers.i.<mod>.<name>.weight|bias
    i, rest = parts[1], ".".join(parts[2:])
    table = {
        "self_attn.q_proj.weight": "wq", "self_attn.k_proj.weight": "wk", "self_attn.v_proj.weight": "wv",
        "self_attn.o_proj.weight": "wo", "self_attn.q_proj.bias": "bq", "self_attn.k_proj.bias": "bk",
        "self_attn.v_proj.bias": "bv", "self_attn.q_norm.weight": "q_norm", "self_attn.k_norm.weight": "k_norm",
        "input_layernorm.weight": "attn_norm", "post_attention_layernorm.weight": "ffn_norm",
        "mlp.gate_proj.weight": "w_gate", "mlp.up_proj.weight": "w_up", "mlp.down_proj.weight": "w_down",
    }
    return f"layers.{i}.{table[rest]}"


def probe(n):
    i = torch.arange(n, dtype=torch.int64)
    return ((i * 2654435761 + 12345) % (1 << 32)).to(torch.float64) / 2.0**32 - 0.5


def summary(x):
    x = x.detach().reshape(-1).to(torch.float64)
    return {"first": [float(f"{v:.12g}") for v in x[:8].tolist()], "norm": float(x.norm()),
            "probe": float(x @ probe(x.numel()))}


def process(name, fdir, out_dir):
    with open(os.path.join(fdir, "config.json")) as f:
        cfg = json.load(f)
    model = AutoModelForCausalLM.from_pretrained(fdir, dtype=torch.float64, attn_implementation="eager")
    model.train()
    patch_float64(model, inv_freq64(cfg)[0])
    D, V = cfg["hidden_size"], cfg["vocab_size"]
    g = torch.Generator().manual_seed(SEED[name])
    ids = torch.randint(0, V, (SEQS, T), generator=g)
    zt = (2.0 * torch.randn(SEQS, T, V, generator=g)).to(torch.float32).to(torch.float64)
    tgt = torch.randn(SEQS, T, D, generator=g).to(torch.float32).to(torch.float64)

    with float64_softmax():
        out = model(input_ids=ids, output_hidden_states=True)
    zs = out.logits
    ls, lt = torch.log_softmax(zs / TAU, -1), torch.log_softmax(zt / TAU, -1)
    kl = TAU * TAU * (lt.exp() * (lt - ls)).sum(-1).mean()
    h0 = out.hidden_states[1]  # residual after layer 0
    align = ((h0 - tgt).norm(dim=-1) / D**0.5).mean()
    loss = kl + ALIGN_W * align
    loss.backward()

    params = [(n, p) for n, p in model.named_parameters()]
    grads = {graft_name(n): summary(p.grad) for n, p in params}
    gnorm = float(torch.sqrt(sum((p.grad.double() ** 2).sum() for _, p in params)))
    torch.nn.utils.clip_grad_norm_([p for _, p in params], max_norm=0.5 * gnorm)
    opt = torch.optim.AdamW([p for _, p in params], lr=LR, betas=BETAS, eps=EPS, weight_decay=WD)
    opt.step()
    after = {graft_name(n): summary(p) for n, p in params}

    gold = {"fixture": name, "T": T, "seqs": SEQS, "tau": TAU, "align_weight": ALIGN_W, "align_layer": 0,
            "adamw": {"lr": LR, "beta1": BETAS[0], "beta2": BETAS[1], "eps": EPS, "weight_decay": WD,
                      "clip": 0.5 * gnorm},
            "token_ids": ids.tolist(),
            "teacher_logits": [float(f"{v:.9g}") for v in zt.reshape(-1).tolist()],
            "align_target": [float(f"{v:.9g}") for v in tgt.reshape(-1).tolist()],
            "loss": float(loss), "kl": float(kl), "align": float(align), "grad_norm": gnorm,
            "grads": grads, "params_after": after}
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, f"{name}.json"), "w") as f:
        json.dump(gold, f, separators=(",", ":"))
    print(f"{name}: loss {float(loss):.6f} (kl {float(kl):.6f}, align {float(align):.6f}), |g| {gnorm:.4f}, "
          f"{len(grads)} tensors")


def main():
    root = os.path.join(os.path.dirname(__file__), "..", "fixtures")
    for name in ("llama", "qwen2", "qwen3"):
        process(name, os.path.join(root, "hf", name), os.path.join(root, "train"))


if __name__ == "__main__":
    main()
