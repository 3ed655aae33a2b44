"""Shared by the PyTorch peers of make bench-gpu (tests/gpu/peers/peer_*.py):
configs from ../shared/configs, models with random bf16 weights made on the
GPU, CUDA-event timing (median), the FLOP counts of docs/cuda.md, and one
JSON line per figure for tests/gpu/bench/table.py."""
import json
import math
import os
import sys
import time

import torch

SHARED = os.environ.get("GRAFT_SHARED") or os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "shared")
# GRAFT_PEER_SMOKE=1: the same code on the CPU at toy sizes (a check of the scripts where there is no GPU;
# its figures mean nothing).
SMOKE = os.environ.get("GRAFT_PEER_SMOKE") == "1"
DEVICE = "cpu" if SMOKE else "cuda"


def load_config(name):
    """A transformers config from ../shared/configs/NAME.json."""
    from transformers import AutoConfig

    path = os.path.join(SHARED, "configs", name + ".json")
    with open(path) as f:
        d = json.load(f)
    if SMOKE:  # a toy of the same family
        d.update(hidden_size=64, intermediate_size=96, num_hidden_layers=4, num_attention_heads=4,
                 num_key_value_heads=2, vocab_size=512)
        if "head_dim" in d:
            d["head_dim"] = 16
    mt = d.pop("model_type")
    return AutoConfig.for_model(mt, **d)


def dims(cfg):
    hd = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    return dict(D=cfg.hidden_size, F=cfg.intermediate_size, L=cfg.num_hidden_layers, H=cfg.num_attention_heads,
                KV=cfg.num_key_value_heads, hd=hd, V=cfg.vocab_size)


def random_model(cfg, attn="sdpa", dtype=torch.bfloat16, device=DEVICE):
    """A causal LM with random weights (initialized on the device, not copied there)."""
    from transformers import AutoModelForCausalLM

    cfg._attn_implementation = attn
    with torch.device(device):
        try:
            m = AutoModelForCausalLM.from_config(cfg, dtype=dtype, attn_implementation=attn)
        except TypeError:  # older transformers
            m = AutoModelForCausalLM.from_config(cfg, torch_dtype=dtype, attn_implementation=attn)
    return m


# ------------------------------------------------------------- FLOPs (docs/cuda.md)

def layer_matmul_flops(d, gdn=False):
    """Forward FLOPs per token of one layer's projections (2 per multiply-add)."""
    D, F, H, KV, hd = d["D"], d["F"], d["H"], d["KV"], d["hd"]
    mlp = 2 * 3 * D * F
    if gdn:  # q, k, v (KV heads expanded to H), g, o: H*hd wide; a, b: H wide
        return 2 * (4 * D * H * hd + H * hd * D + 2 * D * H) + mlp
    return 2 * (D * (H + 2 * KV) * hd + H * hd * D) + mlp


def attn_fwd_flops_per_token(d, T):
    """Causal attention, forward, per token of a T-token sequence: 4 hd per visible (query, key) pair and head."""
    return 4 * d["hd"] * d["H"] * (T + 1) / 2


def gdn_fwd_flops_per_token(d, chunk=64):
    """The chunked gated delta rule, forward, per token and layer (docs/cuda.md): per head and token,
    multiply-adds 3 dk dv (W h, Q h, K^T V') + chunk (3 dk + 2 dv) (K K^T, A K, A V, Q K^T, (Q K^T) V')
    + chunk^2 / 3 (the triangular solve); 2 FLOPs each."""
    dk = dv = d["hd"]
    return 2 * d["H"] * (3 * dk * dv + chunk * (3 * dk + 2 * dv) + chunk * chunk / 3)


def forward_flops_per_token(d, T, gdn_layers=0):
    L = d["L"]
    a = L - gdn_layers
    return (a * (layer_matmul_flops(d) + attn_fwd_flops_per_token(d, T))
            + gdn_layers * (layer_matmul_flops(d, gdn=True) + gdn_fwd_flops_per_token(d))
            + 2 * d["D"] * d["V"])


def train_flops_per_token(d, T, gdn_layers=0):
    """Forward + backward: 3x the products, 3.5x attention (its backward is 2.5x), 3x the GDN core."""
    L = d["L"]
    a = L - gdn_layers
    return (3 * (a * layer_matmul_flops(d) + gdn_layers * (layer_matmul_flops(d, gdn=True) + gdn_fwd_flops_per_token(d))
                 + 2 * d["D"] * d["V"])
            + 3.5 * a * attn_fwd_flops_per_token(d, T))


# ------------------------------------------------------------- timing, output

def time_ms(fn, warmup=3, reps=10):
    """Median milliseconds of fn() (CUDA events around each call, after warm-up)."""
    if SMOKE:
        fn()
        t = time.perf_counter()
        fn()
        return (time.perf_counter() - t) * 1e3
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        ts.append(a.elapsed_time(b))
    # every rep to stderr: a peer that runs at two speeds from one process start to the next (the
    # hybrid step's 198 vs 208 ms on one H200) shows whether the reps of a run agree among themselves
    log("reps ms: " + " ".join(f"{t:.3f}" for t in ts))
    ts.sort()
    return ts[len(ts) // 2]


_roof = None


def roofline_tflops():
    """bf16 8192^3 torch.matmul on random data, measured once per process."""
    global _roof
    if SMOKE:
        return 1.0
    if _roof is None:
        n = 8192
        a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        ms = time_ms(lambda: a @ b, warmup=5, reps=20)
        _roof = 2 * n ** 3 / (ms * 1e-3) / 1e12
        del a, b
        torch.cuda.empty_cache()
    return _roof


def emit(bench, what, ms=None, tok_s=None, flops=None, **extra):
    r = {"bench": bench, "what": what}
    if ms is not None:
        r["ms"] = round(ms, 4)
    if tok_s is not None:
        r["tok_s"] = round(tok_s)
    if flops is not None and ms:
        tf = flops / (ms * 1e-3) / 1e12
        r["tflops"] = round(tf, 1)
        r["of_roofline"] = round(tf / roofline_tflops(), 4)
    r.update(extra)
    print(json.dumps(r), flush=True)


def skip(bench, what, why):
    print(json.dumps({"bench": bench, "what": what, "skipped": why}), flush=True)


def import_fla():
    """flash-linear-attention from GRAFT_FLA_PATH, else <repo>/.peers/fla (where the lead carries it): a
    checkout (holding fla/) or the package folder itself. Sets fla.ops.common.chunk_o.TRITON_ABOVE_3_7_1 = True
    (Triton below 3.7.1 on Hopper: FLA refuses its gated backward otherwise; for the speed comparison) and says
    so on stderr and as a JSON note. Raises ImportError with the reason when it is not there."""
    import importlib

    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
    path = os.environ.get("GRAFT_FLA_PATH") or os.path.join(root, ".peers", "fla")
    path = os.path.abspath(path)
    if os.path.isfile(os.path.join(path, "__init__.py")) and os.path.basename(path) == "fla":
        path = os.path.dirname(path)  # the package folder itself
    if not os.path.isdir(os.path.join(path, "fla")):
        raise ImportError(f"flash-linear-attention not found at {path} (GRAFT_FLA_PATH)")
    if path not in sys.path:
        sys.path.insert(0, path)
    fla = importlib.import_module("fla")
    importlib.import_module("fla.ops.gated_delta_rule")
    chunk_o = importlib.import_module("fla.ops.common.chunk_o")
    chunk_o.TRITON_ABOVE_3_7_1 = True
    import triton

    msg = ("set fla.ops.common.chunk_o.TRITON_ABOVE_3_7_1 = True (Triton " + triton.__version__ +
           "): FLA's gated backward runs on Hopper for the speed comparison")
    log(msg)
    print(json.dumps({"note": msg, "fla_path": path}), flush=True)
    return fla


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def free():
    import gc

    gc.collect()
    if not SMOKE:
        torch.cuda.empty_cache()
