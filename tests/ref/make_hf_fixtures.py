#!/usr/bin/env python3
"""Make the tiny random Hugging Face checkpoints under tests/fixtures/hf/.

Each fixture is built with transformers' own model class (its own weight init,
then a few tensors widened so every tensor visibly matters), converted to the
storage dtype and written with save_pretrained (safetensors).  Only config.json,
the *.safetensors files and, where sharded, model.safetensors.index.json are
kept: no tokenizer, no generation_config.json.

    llama  LlamaForCausalLM  bf16, tied embeddings, llama3 rope scaling,
                             config.json in the hub's rope_theta/rope_scaling layout
    qwen2  Qwen2ForCausalLM  f16, untied, q/k/v biases, sharded (index.json),
                             config.json in the hub's rope_theta/rope_scaling layout
    qwen3  Qwen3ForCausalLM  f32, untied, q_norm/k_norm, head_dim 16 != 36/4,
                             config.json exactly as transformers 5 writes it
                             (rope_parameters, dtype)

Deterministic: fixed seeds, CPU only.  Needs torch + transformers; run
tests/ref/hf_reference.py afterwards to write the golden outputs.

    python3 tests/ref/make_hf_fixtures.py [--out tests/fixtures/hf]
"""

import argparse
import glob
import inspect
import json
import os
import shutil
import sys

import torch
import transformers
from transformers import (LlamaConfig, LlamaForCausalLM, Qwen2Config,
                          Qwen2ForCausalLM, Qwen3Config, Qwen3ForCausalLM)

LINEAR_STD = 0.2  # initializer_range: std of every Linear / Embedding weight
NORM_SPREAD = 0.2  # RMSNorm weights ~ U(1 - spread, 1 + spread)
BIAS_STD = 0.1  # q/k/v biases (Qwen2)

LLAMA3_ROPE = {
    "rope_type": "llama3",
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    # 128, not Meta's 8192: with head_dim 8 and theta 5e4 the wavelengths are
    # 6.3, 94, 1405 and 21010 tokens, so the three llama3 branches (keep,
    # smooth interpolation, divide by factor) are each taken at least once.
    "original_max_position_embeddings": 128,
}

COMMON = dict(
    hidden_act="silu",
    initializer_range=LINEAR_STD,
    use_cache=False,
    bos_token_id=1,
    eos_token_id=2,
    pad_token_id=None,
    attention_dropout=0.0,
)


def rope_kwargs(theta, scaling=None):
    """Config kwargs for rope in whichever layout this transformers takes."""
    if "rope_parameters" in inspect.signature(LlamaConfig.__init__).parameters or \
            hasattr(LlamaConfig(), "rope_parameters"):
        params = {"rope_type": "default", "rope_theta": float(theta)}
        if scaling:
            params = dict(scaling, rope_theta=float(theta))
        return {"rope_parameters": params}
    return {"rope_theta": float(theta), "rope_scaling": scaling}


FIXTURES = {
    "llama": dict(
        cls=LlamaForCausalLM, config_cls=LlamaConfig, seed=1001,
        save_dtype=torch.bfloat16, layout="hub", shard=False,
        config=dict(
            vocab_size=131, hidden_size=48, num_attention_heads=6,
            num_key_value_heads=2, head_dim=8, intermediate_size=72,
            num_hidden_layers=3, max_position_embeddings=256,
            rms_norm_eps=1e-5, tie_word_embeddings=True,
            attention_bias=False, mlp_bias=False, pretraining_tp=1,
            **rope_kwargs(50000.0, LLAMA3_ROPE), **COMMON),
    ),
    "qwen2": dict(
        cls=Qwen2ForCausalLM, config_cls=Qwen2Config, seed=1002,
        save_dtype=torch.float16, layout="hub", shard=True,
        config=dict(
            vocab_size=143, hidden_size=40, num_attention_heads=5,
            num_key_value_heads=1, intermediate_size=88,
            num_hidden_layers=2, max_position_embeddings=256,
            rms_norm_eps=1e-6, tie_word_embeddings=False,
            use_sliding_window=False, sliding_window=None,
            max_window_layers=2,
            **rope_kwargs(10000.0), **COMMON),
    ),
    "qwen3": dict(
        cls=Qwen3ForCausalLM, config_cls=Qwen3Config, seed=1003,
        save_dtype=torch.float32, layout="transformers5", shard=False,
        config=dict(
            vocab_size=120, hidden_size=36, num_attention_heads=4,
            num_key_value_heads=2, head_dim=16, intermediate_size=60,
            num_hidden_layers=2, max_position_embeddings=256,
            rms_norm_eps=1e-6, tie_word_embeddings=False,
            attention_bias=False,
            use_sliding_window=False, sliding_window=None,
            max_window_layers=2,
            **rope_kwargs(1000000.0), **COMMON),
    ),
}


def build_model(spec):
    torch.manual_seed(spec["seed"])
    config = spec["config_cls"](**spec["config"])
    config._attn_implementation = "eager"
    model = spec["cls"](config)  # the model's own _init_weights: N(0, LINEAR_STD)
    model.eval()
    gen = torch.Generator().manual_seed(spec["seed"] + 500)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1.0 + NORM_SPREAD * (2.0 * torch.rand(p.shape, generator=gen,
                                                              dtype=torch.float64) - 1.0))
            elif name.endswith(".bias"):
                p.copy_(BIAS_STD * torch.randn(p.shape, generator=gen, dtype=torch.float64))
    return model


def check_init(name, model):
    """Linear weights must have the intended spread (guards a silent init change)."""
    for pname, p in model.named_parameters():
        if p.dim() == 2:
            std = p.detach().double().std().item()
            if not 0.5 * LINEAR_STD < std < 1.5 * LINEAR_STD:
                sys.exit(f"{name}: {pname} has std {std:.4f}, expected about {LINEAR_STD}")


def save(model, out_dir, dtype, shard):
    kwargs = {}
    if "safe_serialization" in inspect.signature(model.save_pretrained).parameters:
        kwargs["safe_serialization"] = True
    model = model.to(dtype)
    shutil.rmtree(out_dir, ignore_errors=True)
    if not shard:
        model.save_pretrained(out_dir, **kwargs)
        return
    for size in ("32KB", "24KB", "16KB", "8KB"):
        shutil.rmtree(out_dir, ignore_errors=True)
        model.save_pretrained(out_dir, max_shard_size=size, **kwargs)
        if len(glob.glob(os.path.join(out_dir, "*.safetensors"))) >= 2:
            return
    sys.exit(f"{out_dir}: save_pretrained would not shard")


def prune(out_dir):
    keep = {"config.json", "model.safetensors.index.json"}
    for f in os.listdir(out_dir):
        if f not in keep and not f.endswith(".safetensors"):
            path = os.path.join(out_dir, f)
            shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)


def to_hub_layout(out_dir):
    """Rewrite config.json the way checkpoints on the hub (transformers 4) spell it:
    top-level rope_theta, rope_scaling (null when plain rope), torch_dtype."""
    path = os.path.join(out_dir, "config.json")
    with open(path) as f:
        cfg = json.load(f)
    if "rope_parameters" in cfg:
        rp = dict(cfg.pop("rope_parameters"))
        cfg["rope_theta"] = rp.pop("rope_theta")
        cfg["rope_scaling"] = None if rp.get("rope_type", "default") == "default" and \
            set(rp) <= {"rope_type"} else rp
    if "dtype" in cfg:
        cfg["torch_dtype"] = cfg.pop("dtype")
    with open(path, "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
        f.write("\n")


def reload_matches(spec, out_dir, saved, inv_freq):
    """The saved directory must load back (float64) to exactly the stored weights
    and the same rope frequencies (inv_freq: taken before the dtype cast, which
    also rounds that buffer)."""
    kw = {"dtype": torch.float64}
    m = spec["cls"].from_pretrained(out_dir, attn_implementation="eager", **kw)
    sd = m.state_dict()
    for k, v in saved.state_dict().items():
        if k not in sd or not torch.equal(sd[k], v.double()):
            return f"tensor {k} differs after reload"
    a = m.model.rotary_emb.inv_freq.double()
    b = inv_freq.double()
    if not torch.allclose(a, b, rtol=1e-6, atol=0):
        return f"rope inv_freq differs after reload: {a.tolist()} vs {b.tolist()}"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "fixtures", "hf"))
    ap.add_argument("--only", nargs="*", default=None)
    args = ap.parse_args()
    torch.use_deterministic_algorithms(True)
    transformers.utils.logging.disable_progress_bar()
    print(f"torch {torch.__version__}, transformers {transformers.__version__}")
    for name, spec in FIXTURES.items():
        if args.only and name not in args.only:
            continue
        out_dir = os.path.join(args.out, name)
        model = build_model(spec)
        check_init(name, model)
        inv_freq = model.model.rotary_emb.inv_freq.detach().clone()
        save(model, out_dir, spec["save_dtype"], spec["shard"])
        prune(out_dir)
        if spec["layout"] == "hub":
            with open(os.path.join(out_dir, "config.json")) as f:
                v5_text = f.read()
            to_hub_layout(out_dir)
            err = reload_matches(spec, out_dir, model, inv_freq)
            if err:  # keep what transformers wrote rather than a config it misreads
                print(f"{name}: hub layout rejected ({err}); keeping transformers' layout")
                with open(os.path.join(out_dir, "config.json"), "w") as f:
                    f.write(v5_text)
        err = reload_matches(spec, out_dir, model, inv_freq)
        if err:
            sys.exit(f"{name}: {err}")
        files = sorted(os.listdir(out_dir))
        total = sum(os.path.getsize(os.path.join(out_dir, f)) for f in files)
        nparams = sum(p.numel() for p in model.parameters())
        print(f"{name}: {nparams} parameters, {spec['save_dtype']}, {total} bytes: {files}")
        print(f"  inv_freq {[float(f'{x:.6g}') for x in inv_freq.tolist()]}")


if __name__ == "__main__":
    main()
