#!/usr/bin/env python3
"""Peers of bench_gdn: the same GDN layer (METHOD.md section 3; width 1536 =
12 heads x 128, no conv, bf16 weights and activations) forward + backward in
PyTorch, its core either

  naive : a plain chunked implementation written here from METHOD.md (chunk 64,
          WY / UT transform with a batched triangular solve, a Python loop over
          chunks for the state, autograd for the backward), or
  fla   : flash-linear-attention's Triton chunk_gated_delta_rule, imported from
          the folder GRAFT_FLA_PATH names (never committed here).

Timing: torch.cuda events, 3 warm-ups, the median of 15 runs of y = layer(x);
y.backward(dy). One JSON line per figure, the format of bench_gdn.

FLA on the GPU machine's Triton 3.6 refuses its gated backward on Hopper (wrong
results below Triton 3.7.1); for a speed comparison this script sets
fla.ops.common.chunk_o.TRITON_ABOVE_3_7_1 = True and says so. A sanity line
compares FLA's forward output (and, for information, its gradients) with the
naive reference on a small input."""
import json
import math
import os
import sys

import torch
import torch.nn.functional as F

DEV = "cuda"


def core_naive(q, k, v, g, beta, scale, C=64):
    """q, k [B, T, H, dk] (L2-normalized), v [B, T, H, dv], g, beta [B, T, H] -> o."""
    B, T, H, dk = q.shape
    dv = v.shape[-1]
    pad = (C - T % C) % C
    q, k, v, g, beta = (x.float() for x in (q, k, v, g, beta))
    if pad:
        q, k, v = (F.pad(x, (0, 0, 0, 0, 0, pad)) for x in (q, k, v))
        g, beta = (F.pad(x, (0, 0, 0, pad)) for x in (g, beta))
    NC = (T + pad) // C
    # [B, H, NC, C, .]
    q, k, v = (x.permute(0, 2, 1, 3).reshape(B, H, NC, C, -1) for x in (q, k, v))
    g, beta = (x.permute(0, 2, 1).reshape(B, H, NC, C) for x in (g, beta))
    gam = g.cumsum(-1)
    diff = gam[..., :, None] - gam[..., None, :]
    idx = torch.arange(C, device=q.device)
    lower_incl = idx[:, None] >= idx[None, :]
    lower_strict = idx[:, None] > idx[None, :]
    dec_incl = torch.where(lower_incl, diff, torch.full_like(diff, -math.inf)).exp()
    dec_strict = torch.where(lower_strict, diff, torch.full_like(diff, -math.inf)).exp()
    M = beta[..., :, None] * (k @ k.transpose(-1, -2)) * dec_strict
    eye = torch.eye(C, device=q.device).expand_as(M)
    A = torch.linalg.solve_triangular(eye + M, eye, upper=False, unitriangular=True)
    W = A @ ((beta * gam.exp())[..., None] * k)
    U = A @ (beta[..., None] * v)
    h = torch.zeros(B, H, dv, dk, device=q.device)
    outs = []
    for c in range(NC):
        qc, kc, gc = q[:, :, c], k[:, :, c], gam[:, :, c]
        vp = U[:, :, c] - W[:, :, c] @ h.transpose(-1, -2)
        o = (qc * gc.exp()[..., None]) @ h.transpose(-1, -2) + ((qc @ kc.transpose(-1, -2)) * dec_incl[:, :, c]) @ vp
        outs.append(scale * o)
        gl = gc[..., -1:]
        h = gl.exp()[..., None] * h + vp.transpose(-1, -2) @ (kc * (gl - gc).exp()[..., None])
    o = torch.stack(outs, 2).reshape(B, H, NC * C, dv)[:, :, :T]
    return o.permute(0, 2, 1, 3)


class Layer(torch.nn.Module):
    def __init__(self, D, H, d, core):
        super().__init__()
        self.D, self.H, self.d, self.core = D, H, d, core
        W = 4 * H * d + 2 * H
        self.w_in = torch.nn.Parameter(torch.randn(W, D) / math.sqrt(D))
        self.w_o = torch.nn.Parameter(torch.randn(D, H * d) / math.sqrt(H * d))
        self.a_log = torch.nn.Parameter(torch.log(torch.rand(H) * 15 + 1))
        dt = torch.exp(torch.rand(H) * (math.log(0.1) - math.log(1e-3)) + math.log(1e-3))
        self.dt_bias = torch.nn.Parameter(dt + torch.log(-torch.expm1(-dt)))
        self.w_norm = torch.nn.Parameter(torch.ones(d))

    def forward(self, x):
        B, T, _ = x.shape
        H, d = self.H, self.d
        p = x @ self.w_in.t()
        q, k, v, gp, a, b = p.split([H * d, H * d, H * d, H * d, H, H], -1)
        q, k, v = (F.silu(t).view(B, T, H, d) for t in (q, k, v))
        g = -self.a_log.float().exp() * F.softplus(a.float() + self.dt_bias.float())
        beta = torch.sigmoid(b.float())
        o = self.core(q, k, v, g, beta)
        o = o.float()
        z = o * torch.rsqrt(o.pow(2).mean(-1, keepdim=True) + 1e-5) * self.w_norm.float()
        z = (z * F.silu(gp.float().view(B, T, H, d))).to(x.dtype).reshape(B, T, H * d)
        return z @ self.w_o.t()


def naive_core(q, k, v, g, beta):
    qn, kn = F.normalize(q.float(), dim=-1, eps=1e-6), F.normalize(k.float(), dim=-1, eps=1e-6)
    return core_naive(qn, kn, v, g, beta, q.shape[-1] ** -0.5).to(q.dtype)


def fla_core_fn(fla_chunk):
    def core(q, k, v, g, beta):
        o, _ = fla_chunk(q, k, v, g, beta.to(q.dtype), scale=q.shape[-1] ** -0.5, use_qk_l2norm_in_kernel=True)
        return o
    return core


def time_layer(layer, B, T):
    x = torch.randn(B, T, layer.D, device=DEV, dtype=torch.bfloat16, requires_grad=True)
    dy = torch.randn(B, T, layer.D, device=DEV, dtype=torch.bfloat16)

    def step():
        layer.zero_grad(set_to_none=True)
        x.grad = None
        layer(x).backward(dy)

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    ms = []
    for _ in range(15):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        step()
        b.record()
        b.synchronize()
        ms.append(a.elapsed_time(b))
    ms.sort()
    return ms[len(ms) // 2]


def emit(name, B, T, D, ms):
    N = B * T
    print(json.dumps({"bench": name, "B": B, "T": T, "D": D, "conv": False, "ms": round(ms, 4),
                      "tok_s": round(N / (ms * 1e-3))}), flush=True)


def rel(a, b):
    return ((a.float() - b.float()).norm() / b.float().norm()).item()


def main():
    if not torch.cuda.is_available():
        print("SKIP: no CUDA GPU")
        return 77
    torch.manual_seed(0)
    D, H, d = 1536, 12, 128
    tokens = int(os.environ.get("GRAFT_BENCH_GDN_TOKENS", "32768"))
    shapes = [(max(1, tokens // 2048), 2048), (max(1, tokens // 8192), 8192)]
    naive_tokens = int(os.environ.get("GRAFT_BENCH_GDN_NAIVE_TOKENS", "16384"))

    fla_chunk = None
    path = os.environ.get("GRAFT_FLA_PATH")
    if path:
        sys.path.insert(0, path)
        try:
            import fla.ops.common.chunk_o as chunk_o
            chunk_o.TRITON_ABOVE_3_7_1 = True
            print(json.dumps({"note": "set fla.ops.common.chunk_o.TRITON_ABOVE_3_7_1 = True (Triton "
                              + __import__("triton").__version__ + "): FLA's gated backward runs on Hopper for "
                              "the speed comparison; its results are checked below"}), flush=True)
            from fla.ops.gated_delta_rule import chunk_gated_delta_rule as fla_chunk
        except Exception as e:  # report, keep going with the naive peer
            print(json.dumps({"note": f"flash-linear-attention not importable from {path}: {e!r}"}), flush=True)
            fla_chunk = None
    else:
        print(json.dumps({"note": "GRAFT_FLA_PATH not set: no FLA peer"}), flush=True)

    if fla_chunk is not None:  # sanity: FLA against the naive reference on a small input
        B, T, h, dd = 2, 200, 2, 64
        q = F.silu(torch.randn(B, T, h, dd, device=DEV)).bfloat16().requires_grad_()
        k = F.silu(torch.randn(B, T, h, dd, device=DEV)).bfloat16().requires_grad_()
        v = F.silu(torch.randn(B, T, h, dd, device=DEV)).bfloat16().requires_grad_()
        g = (-F.softplus(torch.randn(B, T, h, device=DEV)) * 0.5).requires_grad_()
        beta = torch.sigmoid(torch.randn(B, T, h, device=DEV)).requires_grad_()
        do = torch.randn(B, T, h, dd, device=DEV).bfloat16()
        grads = []
        outs = []
        for core in (naive_core, fla_core_fn(fla_chunk)):
            o = core(q, k, v, g, beta)
            (gq, gk, gv, gg, gb) = torch.autograd.grad(o, (q, k, v, g, beta), do)
            outs.append(o)
            grads.append((gq, gk, gv, gg, gb))
        line = {"sanity": "fla_vs_naive", "o_rel": rel(outs[1], outs[0])}
        for name, a, b in zip(("dq", "dk", "dv", "dg", "dbeta"), grads[1], grads[0]):
            line[name + "_rel"] = rel(a, b)
        line["ok_forward"] = line["o_rel"] < 2e-2
        print(json.dumps(line), flush=True)

    for B, T in shapes:
        if fla_chunk is not None:
            layer = Layer(D, H, d, fla_core_fn(fla_chunk)).to(DEV, torch.bfloat16)
            emit("fla_gdn_layer_fwd_bwd", B, T, D, time_layer(layer, B, T))
            del layer
        Bn = max(1, min(B, naive_tokens // T))
        layer = Layer(D, H, d, naive_core).to(DEV, torch.bfloat16)
        try:
            emit("torch_naive_gdn_layer_fwd_bwd", Bn, T, D, time_layer(layer, Bn, T))
        except torch.cuda.OutOfMemoryError:
            print(json.dumps({"note": f"naive layer out of memory at B {Bn} T {T}"}), flush=True)
        del layer
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
