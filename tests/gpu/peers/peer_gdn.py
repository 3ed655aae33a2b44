#!/usr/bin/env python3
"""Peers of bench_gdn: the same GDN layer (METHOD.md section 3; width 1536 =
12 heads x 128, no conv, bf16 weights and activations) forward + backward in
PyTorch, its core either

  naive : a plain chunked implementation written here from METHOD.md (chunk 64,
          WY / UT transform with a batched triangular solve, a Python loop over
          chunks for the state, autograd for the backward), or
  fla   : flash-linear-attention's Triton chunk_gated_delta_rule, imported from
          the folder GRAFT_FLA_PATH names, or .peers/fla (peer_common.import_fla;
          never committed here).

Timing: peer_common.time_ms (CUDA events, 3 warm-ups, the median of 15 runs of
y = layer(x); y.backward(dy)). One JSON line per figure
(tests/gpu/bench/table.py), named as bench_gdn's lines name their peers; FLOPs
counted as bench_gdn counts them. GRAFT_PEER_SMOKE=1: toy sizes on the CPU, the
naive peer only (a check of the script). GRAFT_BENCH_GDN_NAIVE_TOKENS (16384): the
naive peer's tokens a shape; 0 leaves it out.

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

from peer_common import DEVICE, SMOKE, emit, import_fla, log, time_ms

DEV = DEVICE
DTYPE = torch.float32 if SMOKE else torch.bfloat16


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
    x = torch.randn(B, T, layer.D, device=DEV, dtype=DTYPE, requires_grad=True)
    dy = torch.randn(B, T, layer.D, device=DEV, dtype=DTYPE)

    def step():
        layer.zero_grad(set_to_none=True)
        x.grad = None
        layer(x).backward(dy)

    return time_ms(step, warmup=3, reps=15)


def layer_flops_per_token(D, H, d, C=64):
    """As bench_gdn counts them: the core forward and backward as implemented,
    and the layer's projections (forward, and twice that backward)."""
    core_f = 2 * (5 * C * d + 3 * d * d) * H
    core_b = 2 * (16 * C * d + 7 * d * d + 2 * C * C) * H
    gemm_f = 2.0 * D * (4 * H * d + 2 * H + H * d)
    return core_f + core_b + 3 * gemm_f


def report(kind, D, H, d, B, T, ms):
    N = B * T
    emit("gdn", f"{kind} GDN layer fwd+bwd D {D} ({H}x{d}) T {T}", ms=ms, tok_s=N / (ms * 1e-3),
         flops=N * layer_flops_per_token(D, H, d), B=B, T=T)


def rel(a, b):
    return ((a.float() - b.float()).norm() / b.float().norm()).item()


def main():
    if not SMOKE and not torch.cuda.is_available():
        print("SKIP: no CUDA GPU")
        return 77
    torch.manual_seed(0)
    D, H, d = (64, 4, 16) if SMOKE else (1536, 12, 128)
    tokens = int(os.environ.get("GRAFT_BENCH_GDN_TOKENS", "32768"))
    shapes = [(2, 64), (1, 256)] if SMOKE else [(max(1, tokens // 2048), 2048), (max(1, tokens // 8192), 8192)]
    naive_tokens = int(os.environ.get("GRAFT_BENCH_GDN_NAIVE_TOKENS", "16384"))

    fla_chunk = None
    if not SMOKE:  # fla's Triton kernels need the GPU
        try:
            fla = import_fla()
            fla_chunk = fla.ops.gated_delta_rule.chunk_gated_delta_rule
        except Exception as e:  # report, keep going with the naive peer
            print(json.dumps({"note": f"no FLA peer: {e!r}"}), flush=True)

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
        line = {"note": "FLA vs the naive core on a small input (relative L2)", "o_rel": rel(outs[1], outs[0])}
        for name, a, b in zip(("dq", "dk", "dv", "dg", "dbeta"), grads[1], grads[0]):
            line[name + "_rel"] = rel(a, b)
        line["ok_forward"] = line["o_rel"] < 2e-2
        print(json.dumps(line), flush=True)

    for B, T in shapes:
        if fla_chunk is not None:
            layer = Layer(D, H, d, fla_core_fn(fla_chunk)).to(DEV, DTYPE)
            report("fla chunk", D, H, d, B, T, time_layer(layer, B, T))
            del layer
        if naive_tokens <= 0:  # GRAFT_BENCH_GDN_NAIVE_TOKENS=0: FLA only
            continue
        Bn = max(1, min(B, naive_tokens // T))
        layer = Layer(D, H, d, naive_core).to(DEV, DTYPE)
        try:
            report("torch naive", D, H, d, Bn, T, time_layer(layer, Bn, T))
        except torch.cuda.OutOfMemoryError:
            print(json.dumps({"note": f"naive layer out of memory at B {Bn} T {T}"}), flush=True)
        del layer
        if not SMOKE:
            torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
