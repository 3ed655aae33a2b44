#!/usr/bin/env python3
"""Independent reference for Stage 1 (METHOD.md section 5) and the GDN layer
(section 3), written from METHOD.md, on the qwen2 fixture (tests/fixtures/hf/qwen2:
D 40, 5 query heads, 1 KV head, head_dim 8, q/k/v biases, 2 layers).

Everything is float64 PyTorch on CPU:
  1. a Qwen2 teacher forward (RMSNorm, half-split RoPE, GQA, q/k/v bias, SwiGLU)
     read from the safetensors; for every layer it keeps x = input_layernorm
     output, the causal attention probabilities, the per-head outputs tc (P V,
     v bias included, before o_proj); its logits are checked against the
     fixture's transformers golden (golden.json) before anything is written;
  2. METHOD.md section 4 statistics (d, H, c, tc RMS), and the mean distance
     without the first key and the share on it (graft's no-sink statistics);
  3. the default init of section 3 drawn with graft's documented generator
     (docs/method.md: splitmix64, stream per layer, Box-Muller; draw order Wa,
     Wb, Wg, A_log, dt), weight transfer with GQA expansion, biases dropped;
  4. Stage 1 in both write-gate modes (reference, mean-logit), with the OLS on
     the GDN core output computed by the token-by-token recurrence
         S_t = exp(g_t) S_{t-1} (I - beta_t k_t k_t^T) + beta_t v_t k_t^T,
         o_t = S_t (dk^-1/2 q_t);
  5. the full GDN layer output y (after o_norm, output gate and Wo) of each
     layer after Stage 1 (reference mode).

Output: tests/fixtures/method/stage1_qwen2.json (token ids, per-head
quantities, Wb after Stage 1, y). The C test (tests/unit/test_calibrate.c)
recomputes all of it in float32 and compares with stated tolerances.

    /tmp/hfenv/bin/python tests/ref/method_reference.py

(torch's Linux wheel needs its CUDA libraries importable even on CPU; see
tests/ref/README.md.)
"""

import json
import math
import os

import torch
import torch.nn.functional as F
from safetensors.torch import load_file

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIX = os.path.join(ROOT, "tests", "fixtures", "hf", "qwen2")
OUT = os.path.join(ROOT, "tests", "fixtures", "method", "stage1_qwen2.json")
SEQS, T, SEED = 2, 40, 7
M64 = (1 << 64) - 1
torch.set_default_dtype(torch.float64)


# ---------------------------------------------------------------- generator
class Rng:
    """splitmix64; uniform = (top 53 bits + 0.5) / 2^53; Box-Muller, cos first then sin."""

    def __init__(self, seed, stream):
        t = (seed ^ ((stream * 0xD1B54A32D192ED03) & M64)) & M64
        self.state = t
        self.state = self.next()
        self.spare = None

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & M64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        return z ^ (z >> 31)

    def uniform(self):
        return ((self.next() >> 11) + 0.5) / 9007199254740992.0

    def normal(self):
        if self.spare is not None:
            s, self.spare = self.spare, None
            return s
        u1, u2 = self.uniform(), self.uniform()
        r, th = math.sqrt(-2.0 * math.log(u1)), 2.0 * math.pi * u2
        self.spare = r * math.sin(th)
        return r * math.cos(th)


def f32(x):
    return float(torch.tensor(x, dtype=torch.float32))


def default_init(seed, layer, H, D, dv):
    r = Rng(seed, layer)
    wa = [f32(0.02 * r.normal()) for _ in range(H * D)]
    wb = [f32(0.02 * r.normal()) for _ in range(H * D)]
    wg = [f32(0.02 * r.normal()) for _ in range(H * dv * D)]
    a_log = [f32(math.log(16.0 * r.uniform())) for _ in range(H)]
    dt_bias = []
    for _ in range(H):
        dt = math.exp(math.log(1e-3) + r.uniform() * (math.log(0.1) - math.log(1e-3)))
        dt = max(dt, 1e-4)
        dt_bias.append(f32(dt + math.log(-math.expm1(-dt))))
    t = torch.tensor
    return dict(wa=t(wa).reshape(H, D), wb=t(wb).reshape(H, D), wg=t(wg).reshape(H * dv, D),
                a_log=t(a_log), dt_bias=t(dt_bias))


# ------------------------------------------------------------------ teacher
def teacher(cfg, W, ids):
    D, nh, nkv = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd = D // nh
    eps = cfg["rms_norm_eps"]
    B, TT = ids.shape
    inv = torch.tensor([cfg["rope_theta"] ** (-2.0 * i / hd) for i in range(hd // 2)])
    ang = torch.arange(TT)[:, None] * inv[None, :]
    cos = torch.cat((ang.cos(), ang.cos()), -1)[None, :, None, :]
    sin = torch.cat((ang.sin(), ang.sin()), -1)[None, :, None, :]

    def norm(x, w):
        return w * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)

    def lin(x, n):
        y = x @ W[n + ".weight"].T
        return y + W[n + ".bias"] if n + ".bias" in W else y

    def rope(x):
        a, b = x[..., : hd // 2], x[..., hd // 2:]
        return x * cos + torch.cat((-b, a), -1) * sin

    x = W["model.embed_tokens.weight"][ids]
    causal = torch.full((TT, TT), float("-inf")).triu(1)
    layers = []
    for li in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{li}."
        xn = norm(x, W[p + "input_layernorm.weight"])
        q = rope(lin(xn, p + "self_attn.q_proj").reshape(B, TT, nh, hd))
        k = rope(lin(xn, p + "self_attn.k_proj").reshape(B, TT, nkv, hd)).repeat_interleave(nh // nkv, 2)
        v = lin(xn, p + "self_attn.v_proj").reshape(B, TT, nkv, hd).repeat_interleave(nh // nkv, 2)
        A = torch.softmax(torch.einsum("bihd,bjhd->bhij", q, k) / math.sqrt(hd) + causal, -1)
        tc = torch.einsum("bhij,bjhd->bihd", A, v)  # [B,T,H,hd]
        out = lin(tc.reshape(B, TT, nh * hd), p + "self_attn.o_proj")
        layers.append(dict(xn=xn, A=A, tc=tc, out=out))
        x = x + out
        h = norm(x, W[p + "post_attention_layernorm.weight"])
        x = x + lin(F.silu(lin(h, p + "mlp.gate_proj")) * lin(h, p + "mlp.up_proj"), p + "mlp.down_proj")
    logits = norm(x, W["model.norm.weight"]) @ W["lm_head.weight"].T
    return logits, layers


def stats(A, tc):
    TT = A.shape[-1]
    i = torch.arange(TT, dtype=torch.float64)
    dist = (i[:, None] - i[None, :]).clamp(min=0.5)
    d = (A * dist).sum(-1).mean(dim=(0, 2)).clamp(min=0.5)
    Hn = -(A * torch.log(A.clamp(min=1e-10))).sum(-1).mean(dim=(0, 2))
    c = 1 - (Hn - Hn.min()) / max(float(Hn.max() - Hn.min()), 1e-3)
    rms = tc.pow(2).mean(-1).sqrt().mean(dim=(0, 1))
    return d, Hn, c, rms


def sink_stats(A):
    """Without the first key: per row i >= 1, sum_{j>=1} A[i,j] dist / sum_{j>=1} A[i,j]
    (0.5 for row 0), averaged over rows, clamped >= 0.5; and the share A[i,0]."""
    TT = A.shape[-1]
    i = torch.arange(TT, dtype=torch.float64)
    dist = (i[:, None] - i[None, :]).clamp(min=0.5)
    rest = A[..., 1:]
    row = (rest * dist[:, 1:]).sum(-1) / rest.sum(-1).clamp(min=1e-300)
    row[..., 0] = 0.5
    d0 = row.mean(dim=(0, 2)).clamp(min=0.5)
    sink = A[..., 0].mean(dim=(0, 2))
    return d0, sink


# ---------------------------------------------------------------------- GDN
def gdn(P, x, H, dk, dv, eps_norm=1e-5):
    """Token-by-token recurrence. Returns core output o [B,T,H,dv] and y [B,T,D]."""
    B, TT, D = x.shape
    q = F.silu(x @ P["wq"].T).reshape(B, TT, H, dk)
    k = F.silu(x @ P["wk"].T).reshape(B, TT, H, dk)
    v = F.silu(x @ P["wv"].T).reshape(B, TT, H, dv)
    q = q / torch.sqrt(q.pow(2).sum(-1, keepdim=True) + 1e-6)
    k = k / torch.sqrt(k.pow(2).sum(-1, keepdim=True) + 1e-6)
    beta = torch.sigmoid(x @ P["wb"].T)
    g = -torch.exp(P["a_log"]) * F.softplus(x @ P["wa"].T + P["dt_bias"])
    scale = dk ** -0.5
    o = torch.zeros(B, TT, H, dv)
    for b in range(B):
        for h in range(H):
            S = torch.zeros(dv, dk)
            for t in range(TT):
                kt, vt = k[b, t, h], v[b, t, h]
                S = torch.exp(g[b, t, h]) * (S - beta[b, t, h] * torch.outer(S @ kt, kt)) \
                    + beta[b, t, h] * torch.outer(vt, kt)
                o[b, t, h] = S @ (scale * q[b, t, h])
    on = o * torch.rsqrt(o.pow(2).mean(-1, keepdim=True) + eps_norm) * P["w_norm"]
    z = on * F.silu(x @ P["wg"].T).reshape(B, TT, H, dv)
    return o, z.reshape(B, TT, H * dv) @ P["wo"].T


def logit(p):
    return math.log(p / (1 - p))


def stage1(P, lay, H, dk, dv, D, mode, damping=0.01):
    P = {k: v.clone() for k, v in P.items()}
    d, Hn, c, rms = stats(lay["A"], lay["tc"])
    x = lay["xn"]
    tg = (math.log(2) / d).clamp(1e-3, 5)
    dtb = tg + torch.log(-torch.expm1(-tg))
    P["a_log"] = torch.zeros(H)
    P["dt_bias"] = dtb
    bstar = 0.3 + 0.4 * c
    for h in range(H):
        want = logit(float(bstar[h]))
        row = P["wb"][h]
        if mode == "reference":
            P["wb"][h] = want / math.sqrt(D) * row / row.abs().mean()
        else:
            cur = float((x.reshape(-1, D) @ row).mean())
            P["wb"][h] = row * (want / cur)
    o, _ = gdn(P, x, H, dk, dv)
    tc = lay["tc"]
    sig_raw = (tc * o).sum(dim=(0, 1, 3)) / (o * o).sum(dim=(0, 1, 3))
    sig = sig_raw.clamp(0.1, 10)
    P["wv"] = P["wv"] * sig.repeat_interleave(dv)[:, None]
    rms_tc = float(rms.mean())
    rms_v = float(F.silu(x @ P["wv"].T).pow(2).mean().sqrt())
    alpha = damping * rms_tc / rms_v
    P["wg"] = alpha * P["wv"]
    logit_mean = (x.reshape(-1, D) @ P["wb"].T).mean(0)
    d0, sink = sink_stats(lay["A"])
    res = dict(mean_distance=d, mean_distance_no_sink=d0, sink_share=sink, entropy=Hn, concentration=c, output_rms=rms, target_g=tg, dt_bias=dtb,
               beta_star=bstar, sigma_unclamped=sig_raw, sigma_star=sig, write_logit_mean=logit_mean,
               alpha_star=alpha, rms_tc=rms_tc, rms_v=rms_v, wb=P["wb"].reshape(-1))
    return P, res


def main():
    cfg = json.load(open(os.path.join(FIX, "config.json")))
    W = {k: v.double() for k, v in load_file(os.path.join(FIX, "model.safetensors")).items()} \
        if os.path.exists(os.path.join(FIX, "model.safetensors")) else {}
    if not W:
        for f in sorted(os.listdir(FIX)):
            if f.endswith(".safetensors"):
                W.update({k: v.double() for k, v in load_file(os.path.join(FIX, f)).items()})
    g = torch.Generator().manual_seed(SEED)
    ids = torch.randint(3, cfg["vocab_size"], (SEQS, T), generator=g)
    # check the teacher against the fixture's transformers golden on its own ids
    gold = json.load(open(os.path.join(FIX, "golden.json")))
    lg, _ = teacher(cfg, W, torch.tensor(gold["token_ids"]))
    err = float((lg - torch.tensor(gold["logits"])).abs().max())
    assert err < 1e-6, f"teacher forward disagrees with transformers golden: {err}"

    _, layers = teacher(cfg, W, ids)
    D, H, nkv = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd = D // H
    out = {"meta": {"script": "tests/ref/method_reference.py", "torch": torch.__version__, "dtype": "float64",
                    "fixture": "tests/fixtures/hf/qwen2", "seqs": SEQS, "seq_len": T, "seed": 1,
                    "query_scale": "dk^-1/2", "teacher_logit_check_max_abs": err},
           "token_ids": ids.tolist(), "layers": []}
    for li, lay in enumerate(layers):
        p = f"model.layers.{li}.self_attn."
        rep = H // nkv
        P = default_init(1, li, H, D, hd)
        P.update(wq=W[p + "q_proj.weight"].clone(),
                 wk=W[p + "k_proj.weight"].reshape(nkv, hd, D).repeat_interleave(rep, 0).reshape(H * hd, D),
                 wv=W[p + "v_proj.weight"].reshape(nkv, hd, D).repeat_interleave(rep, 0).reshape(H * hd, D),
                 wo=W[p + "o_proj.weight"].clone(), w_norm=torch.ones(hd))
        entry = {"layer": li}
        for mode in ("reference", "mean-logit"):
            P1, res = stage1(P, lay, H, hd, hd, D, mode)
            r = {k: (v.tolist() if torch.is_tensor(v) else v) for k, v in res.items()}
            if mode == "reference":
                _, y = gdn(P1, lay["xn"], H, hd, hd)
                r["y"] = y.reshape(-1).tolist()
                if li == 0:  # the same layer with the default (random) init only, no Stage 1
                    _, y0 = gdn(P, lay["xn"], H, hd, hd)
                    entry["y_random_init"] = y0.reshape(-1).tolist()
            entry[mode] = r
        out["layers"].append(entry)

    def rnd(o):
        if isinstance(o, dict):
            return {k: rnd(v) for k, v in o.items()}
        if isinstance(o, list):
            return [rnd(v) for v in o]
        if isinstance(o, float):
            return float(f"{o:.9g}")
        return o
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(rnd(out), f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {OUT} ({os.path.getsize(OUT)} bytes); teacher check max |dlogit| {err:.2e}")


if __name__ == "__main__":
    main()
