#!/usr/bin/env python3
"""Golden outputs for the fixtures under tests/fixtures/hf/ (see make_hf_fixtures.py).

For each fixture the saved checkpoint is loaded with transformers in float64
(from the saved files, so the bf16 / f16 rounding is exactly what the C loader
reads), two sequences of 29 seeded random token ids are run with eager
attention, and tests/fixtures/hf/<name>/golden.json receives:

  token_ids        [2][29]
  logits           [2][29][vocab]    9 significant digits
  attention_stats  per layer, per query head (METHOD.md section 4), over both
                   sequences and all query positions:
                     mean_distance  mean_i sum_j A[i,j] max(i-j, 0.5), clamped >= 0.5
                     entropy        mean_i -sum_j A[i,j] log(max(A[i,j], 1e-10))
                     concentration  1 - (H - min H) / max(max H - min H, 1e-3) in the layer
                     output_rms     mean over (sequence, position) of the RMS over
                                    head_dim of the head's output (P V, v bias
                                    included, before o_proj; read by a pre-hook on o_proj)
  rope_inv_freq    the rope frequencies used (after llama3 scaling, if any)

transformers keeps a few float32 islands even in a float64 model (RMSNorm
upcasts to float32, rope cos/sin are computed in float32, eager softmax asks
for float32).  They are patched to float64 for the golden run, so the goldens
are float64 throughout; the unpatched run's distance from them is recorded in
meta.  An independent float64 forward pass written from the architecture
(reading the safetensors directly) must agree with the patched transformers
run to 1e-9, and every parameter tensor must receive a non-zero gradient.

    python3 tests/ref/hf_reference.py [--fixtures tests/fixtures/hf] [--only llama ...]
"""

import argparse
import contextlib
import glob
import json
import math
import os
import sys
import types

import torch
import torch.nn.functional as F
import transformers
from safetensors.torch import load_file
from transformers import AutoModelForCausalLM

SEQS, SEQ_LEN = 2, 29
TOKEN_SEED = {"llama": 2001, "qwen2": 2002, "qwen3": 2003}
SIG = 9  # significant digits kept in the JSON


# ----------------------------------------------------------------------------- rope

def rope_params(cfg):
    """(theta, scaling dict or None) from config.json in either layout."""
    if "rope_parameters" in cfg and cfg["rope_parameters"]:
        rp = dict(cfg["rope_parameters"])
        theta = rp.pop("rope_theta")
        return theta, (rp if rp.get("rope_type", "default") != "default" else None)
    sc = cfg.get("rope_scaling")
    if sc and sc.get("rope_type", sc.get("type")) == "default":
        sc = None
    return cfg["rope_theta"], sc


def inv_freq64(cfg):
    """Rope inverse frequencies in float64, llama3 scaling applied if configured.
    Returns (inv_freq, unscaled, branch per frequency)."""
    theta, sc = rope_params(cfg)
    hd = cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]
    base = torch.tensor([theta ** (-(2.0 * i) / hd) for i in range(hd // 2)], dtype=torch.float64)
    if sc is None:
        return base, base, ["plain"] * len(base)
    assert sc["rope_type"] == "llama3", sc
    factor, lo, hi = sc["factor"], sc["low_freq_factor"], sc["high_freq_factor"]
    old = sc["original_max_position_embeddings"]
    out, branch = [], []
    for f in base.tolist():
        wavelen = 2 * math.pi / f
        if wavelen < old / hi:
            out.append(f); branch.append("keep")
        elif wavelen > old / lo:
            out.append(f / factor); branch.append("divide")
        else:
            s = (old / wavelen - lo) / (hi - lo)
            out.append((1 - s) * f / factor + s * f); branch.append("smooth")
    return torch.tensor(out, dtype=torch.float64), base, branch


# ------------------------------------------------------------------ float64 patches

def _rmsnorm64(self, x):
    eps = getattr(self, "variance_epsilon", getattr(self, "eps", None))
    return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def _rotary64(inv):
    def forward(self, x, position_ids, *args, **kwargs):
        freqs = position_ids.to(torch.float64)[:, :, None] * inv[None, None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        scale = float(getattr(self, "attention_scaling", 1.0))
        return (emb.cos() * scale).to(x.dtype), (emb.sin() * scale).to(x.dtype)
    return forward


@contextlib.contextmanager
def float64_softmax():
    """eager attention calls softmax(..., dtype=torch.float32); keep float64 inputs float64."""
    orig = F.softmax

    def softmax(input, dim=None, _stacklevel=3, dtype=None):
        if dtype == torch.float32 and input.dtype == torch.float64:
            dtype = torch.float64
        return orig(input, dim=dim, dtype=dtype)
    F.softmax = softmax
    try:
        yield
    finally:
        F.softmax = orig


def patch_float64(model, inv):
    n = 0
    for m in model.modules():
        if "RMSNorm" in type(m).__name__:
            m.forward = types.MethodType(_rmsnorm64, m)
            n += 1
    rot = model.model.rotary_emb
    rot.forward = types.MethodType(_rotary64(inv), rot)
    return n


# ------------------------------------------------------------------------ HF runs

def run_hf(model, ids, nheads, head_dim):
    """Logits, attention probabilities per layer, per-head outputs per layer."""
    tcs = {}
    hooks = []
    for li, layer in enumerate(model.model.layers):
        def pre(mod, args, kwargs, li=li):
            x = args[0] if args else kwargs["input"]
            tcs[li] = x.detach().clone()
        hooks.append(layer.self_attn.o_proj.register_forward_pre_hook(pre, with_kwargs=True))
    try:
        with torch.no_grad():
            out = model(input_ids=ids, output_attentions=True, use_cache=False)
    finally:
        for h in hooks:
            h.remove()
    L = len(model.model.layers)
    B, T = ids.shape
    heads = [tcs[li].reshape(B, T, nheads, head_dim) for li in range(L)]
    return out.logits, [a.detach() for a in out.attentions], heads


def attention_stats(attns, heads):
    """METHOD.md section 4, from probabilities [B,H,T,T] and head outputs [B,T,H,hd]."""
    stats = {"mean_distance": [], "entropy": [], "concentration": [], "output_rms": []}
    for A, tc in zip(attns, heads):
        T = A.shape[-1]
        i = torch.arange(T, dtype=torch.float64)
        dist = (i[:, None] - i[None, :]).clamp(min=0.5)
        d = (A * dist).sum(-1).mean(dim=(0, 2)).clamp(min=0.5)  # [H]
        H = (-(A * torch.log(A.clamp(min=1e-10))).sum(-1)).mean(dim=(0, 2))
        c = 1.0 - (H - H.min()) / max((H.max() - H.min()).item(), 1e-3)
        rms = tc.pow(2).mean(-1).sqrt().mean(dim=(0, 1))
        for key, v in (("mean_distance", d), ("entropy", H), ("concentration", c),
                       ("output_rms", rms)):
            stats[key].append(v.tolist())
    return stats


# ------------------------------------------------- independent float64 forward

def load_tensors(fdir):
    t = {}
    for f in sorted(glob.glob(os.path.join(fdir, "*.safetensors"))):
        t.update(load_file(f))
    return t


def independent_forward(cfg, W, ids, inv, dt=torch.float64):
    """Llama / Qwen2 / Qwen3 decoder written out from the architecture, computed
    in dt (float32 only to show the error a float32 engine should expect)."""
    W = {k: v.to(dt) for k, v in W.items()}
    inv = inv.to(dt)
    D, nh, nkv = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd = cfg.get("head_dim") or D // nh
    eps = cfg["rms_norm_eps"]
    B, T = ids.shape

    def norm(x, w):
        return w * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)

    def lin(x, name):
        y = x @ W[name + ".weight"].T
        return y + W[name + ".bias"] if name + ".bias" in W else y

    def rope(x):  # x [B,T,h,hd]; rotate-half pairing (i, i + hd/2)
        ang = torch.arange(T, dtype=torch.float64)[:, None] * inv.double()[None, :]
        ang = ang.to(dt)  # angles from float64 products, as a careful engine would
        cos = torch.cat((ang.cos(), ang.cos()), -1)[None, :, None, :]
        sin = torch.cat((ang.sin(), ang.sin()), -1)[None, :, None, :]
        x1, x2 = x[..., :hd // 2], x[..., hd // 2:]
        return x * cos + torch.cat((-x2, x1), -1) * sin

    x = W["model.embed_tokens.weight"][ids]
    mask = torch.full((T, T), float("-inf"), dtype=dt).triu(1)
    attns, heads = [], []
    for li in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{li}."
        h = norm(x, W[p + "input_layernorm.weight"])
        q = lin(h, p + "self_attn.q_proj").reshape(B, T, nh, hd)
        k = lin(h, p + "self_attn.k_proj").reshape(B, T, nkv, hd)
        v = lin(h, p + "self_attn.v_proj").reshape(B, T, nkv, hd)
        if p + "self_attn.q_norm.weight" in W:  # Qwen3: per-head RMSNorm before rope
            q = norm(q, W[p + "self_attn.q_norm.weight"])
            k = norm(k, W[p + "self_attn.k_norm.weight"])
        q, k = rope(q), rope(k)
        rep = nh // nkv  # query head j reads kv head j // rep
        k = k.repeat_interleave(rep, dim=2)
        v = v.repeat_interleave(rep, dim=2)
        s = torch.einsum("bihd,bjhd->bhij", q, k) / math.sqrt(hd) + mask
        a = torch.softmax(s, dim=-1)
        o = torch.einsum("bhij,bjhd->bihd", a, v)
        attns.append(a)
        heads.append(o)
        x = x + lin(o.reshape(B, T, nh * hd), p + "self_attn.o_proj")
        h = norm(x, W[p + "post_attention_layernorm.weight"])
        x = x + lin(F.silu(lin(h, p + "mlp.gate_proj")) * lin(h, p + "mlp.up_proj"),
                    p + "mlp.down_proj")
    x = norm(x, W["model.norm.weight"])
    head = W.get("lm_head.weight", W["model.embed_tokens.weight"])
    return x @ head.T, attns, heads


# ------------------------------------------------------------------------ output

def rnd(x):
    if isinstance(x, list):
        return [rnd(v) for v in x]
    return float(f"{x:.{SIG}g}")


def dump(obj, f, indent=0):
    """JSON with lists of numbers kept on one line."""
    pad = " " * indent
    if isinstance(obj, dict):
        f.write("{\n")
        items = list(obj.items())
        for n, (k, v) in enumerate(items):
            f.write(f"{pad} {json.dumps(k)}: ")
            dump(v, f, indent + 1)
            f.write(",\n" if n + 1 < len(items) else "\n")
        f.write(pad + "}")
    elif isinstance(obj, list) and obj and isinstance(obj[0], list):
        f.write("[\n")
        for n, v in enumerate(obj):
            f.write(pad + " ")
            dump(v, f, indent + 1)
            f.write(",\n" if n + 1 < len(obj) else "\n")
        f.write(pad + "]")
    else:
        f.write(json.dumps(obj, separators=(",", ":")))


def max_abs(a, b):
    return (a - b).abs().max().item()


def process(name, fdir):
    with open(os.path.join(fdir, "config.json")) as f:
        cfg = json.load(f)
    D, nh = cfg["hidden_size"], cfg["num_attention_heads"]
    hd = cfg.get("head_dim") or D // nh
    V = cfg["vocab_size"]
    gen = torch.Generator().manual_seed(TOKEN_SEED[name])
    ids = torch.randint(0, V, (SEQS, SEQ_LEN), generator=gen)

    model = AutoModelForCausalLM.from_pretrained(fdir, dtype=torch.float64,
                                                 attn_implementation="eager")
    model.eval()

    # The float64 model must hold exactly the stored (rounded) values.
    W = load_tensors(fdir)
    sd = model.state_dict()
    for k, v in W.items():
        if not torch.equal(sd[k], v.to(torch.float64)):
            sys.exit(f"{name}: {k} in the float64 model differs from the file")
    tied = "lm_head.weight" not in W
    if tied and not torch.equal(sd["lm_head.weight"], sd["model.embed_tokens.weight"]):
        sys.exit(f"{name}: lm_head is not the tied embedding")
    file_dtypes = sorted({str(v.dtype).replace("torch.", "") for v in W.values()})

    inv, unscaled, branch = inv_freq64(cfg)
    hf_inv = model.model.rotary_emb.inv_freq.to(torch.float64)
    if not torch.allclose(hf_inv, inv, rtol=1e-6, atol=0):
        sys.exit(f"{name}: rope frequencies {hf_inv.tolist()} != {inv.tolist()}")

    if rope_params(cfg)[1] is not None and branch.count("keep") == len(branch):
        sys.exit(f"{name}: rope scaling is configured but changes no frequency")

    # transformers as it is (float32 islands), then float64 throughout.
    logits_hf, _, _ = run_hf(model, ids, nh, hd)
    npatched = patch_float64(model, inv)
    with float64_softmax():
        logits, attns, heads = run_hf(model, ids, nh, hd)
    stats = attention_stats(attns, heads)

    # Independent check.
    logits_ind, attns_ind, heads_ind = independent_forward(cfg, W, ids, inv)
    stats_ind = attention_stats(attns_ind, heads_ind)
    d_ind = max_abs(logits, logits_ind)
    d_stats = max(max_abs(torch.tensor(stats[k], dtype=torch.float64), torch.tensor(stats_ind[k], dtype=torch.float64)) for k in stats)
    if d_ind > 1e-9 or d_stats > 1e-9:
        sys.exit(f"{name}: independent float64 forward differs: logits {d_ind:.3g}, "
                 f"stats {d_stats:.3g}")

    # What float32 arithmetic costs (guidance for the C tests' tolerances).
    logits32, attns32, heads32 = independent_forward(cfg, W, ids, inv, torch.float32)
    stats32 = attention_stats([a.double() for a in attns32], [h.double() for h in heads32])
    d32 = max_abs(logits, logits32.double())
    d32_stats = {k: max_abs(torch.tensor(stats[k], dtype=torch.float64), torch.tensor(stats32[k], dtype=torch.float64)) for k in stats}

    # Every stored tensor must matter: each gets a non-zero gradient.
    model.zero_grad()
    with torch.enable_grad(), float64_softmax():
        out = model(input_ids=ids, use_cache=False).logits
        w = torch.randn(out.shape, generator=torch.Generator().manual_seed(7), dtype=torch.float64)
        (out * w).sum().backward()
    for pname, p in model.named_parameters():
        if p.grad is None or p.grad.abs().max().item() == 0.0:
            sys.exit(f"{name}: parameter {pname} gets no gradient")
    nparams_grad = sum(1 for _ in model.named_parameters())

    probs = torch.softmax(logits, -1)
    golden = {
        "meta": {
            "script": "tests/ref/hf_reference.py",
            "fixtures_script": "tests/ref/make_hf_fixtures.py",
            "fixture": name,
            "architecture": cfg["architectures"][0],
            "transformers": transformers.__version__,
            "torch": torch.__version__,
            "dtype": "float64",
            "file_dtypes": file_dtypes,
            "safetensors_files": len(glob.glob(os.path.join(fdir, "*.safetensors"))),
            "config_layout": "rope_parameters" if "rope_parameters" in cfg else "rope_theta+rope_scaling",
            "tied_embeddings": tied,
            "attn_implementation": "eager",
            "token_seed": TOKEN_SEED[name],
            "float64_patches": f"{npatched} RMSNorm modules, rotary cos/sin, eager softmax",
            "max_abs_logit_diff_unpatched_transformers": rnd(max_abs(logits, logits_hf)),
            "max_abs_logit_diff_independent_forward": rnd(d_ind),
            "max_abs_stat_diff_independent_forward": rnd(d_stats),
            "float32_reference_max_abs_logit_diff": rnd(d32),
            "float32_reference_max_abs_stat_diff": {k: rnd(v) for k, v in d32_stats.items()},
            "parameters_with_nonzero_gradient": nparams_grad,
            "logit_rms": rnd(logits.pow(2).mean().sqrt().item()),
            "logit_max_abs": rnd(logits.abs().max().item()),
            "mean_max_prob": rnd(probs.max(-1).values.mean().item()),
            "significant_digits": SIG,
        },
        "config": {
            "vocab_size": V, "hidden_size": D, "num_hidden_layers": cfg["num_hidden_layers"],
            "num_attention_heads": nh, "num_key_value_heads": cfg["num_key_value_heads"],
            "head_dim": hd, "intermediate_size": cfg["intermediate_size"],
            "rms_norm_eps": cfg["rms_norm_eps"],
        },
        "rope_inv_freq": rnd(inv.tolist()),
        "rope_inv_freq_unscaled": rnd(unscaled.tolist()),
        "rope_branch": branch,
        "token_ids": ids.tolist(),
        "attention_stats": {k: rnd(v) for k, v in stats.items()},
        "logits": rnd(logits.tolist()),
    }
    path = os.path.join(fdir, "golden.json")
    with open(path, "w") as f:
        dump(golden, f)
        f.write("\n")
    m = golden["meta"]
    print(f"{name}: {os.path.getsize(path)} bytes golden; logit rms {m['logit_rms']}, "
          f"max {m['logit_max_abs']}; unpatched-vs-float64 {m['max_abs_logit_diff_unpatched_transformers']:.3g}; "
          f"independent {d_ind:.3g}; float32 {d32:.3g} "
          f"(stats {max(d32_stats.values()):.3g}); rope {branch}")
    for key in ("mean_distance", "entropy", "output_rms"):
        print(f"  {key}: " + " | ".join(" ".join(f"{x:.3f}" for x in row) for row in stats[key]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fixtures", default=os.path.join(os.path.dirname(__file__), "..", "fixtures", "hf"))
    ap.add_argument("--only", nargs="*", default=None)
    args = ap.parse_args()
    torch.use_deterministic_algorithms(True)
    transformers.utils.logging.disable_progress_bar()
    print(f"torch {torch.__version__}, transformers {transformers.__version__}")
    for name in TOKEN_SEED:
        if args.only and name not in args.only:
            continue
        process(name, os.path.join(args.fixtures, name))


if __name__ == "__main__":
    main()
