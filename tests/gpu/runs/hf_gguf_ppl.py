#!/usr/bin/env python3
"""The reference for `graft ppl MODEL.gguf --text FILE --ctx N --json`: transformers
loads the same GGUF (dequantized to float32 by the `gguf` package), the text is
encoded by the tokenizer transformers builds from the GGUF (BOS first when the
GGUF says to add it, as graft does), and
scored teacher-forced in graft's windows (engine/eval/perplexity.c): each holds
at most N tokens, the next one starts on the last token of the one before
(windows start every N - 1 tokens), so every token after the first is
predicted exactly once, and each window starts a fresh context. (Windows of
N + 1 tokens starting every N differ from graft's after the first: on 12,000
bytes of held-out Gutenberg at N = 512, Qwen2.5-Coder-1.5B Q4_K_M, 28.5488
against graft's 28.3655; with these windows 28.365481 against 28.365478.) Prints one JSON
object: {"tokens", "nll", "ppl", "ctx", "ids_sha256"} (tokens = predicted
tokens), so the two outputs compare key by key.

  hf_gguf_ppl.py MODEL.gguf TEXT [--ctx N] [--device cpu|cuda]

Test and reference tooling only (torch, transformers, gguf); graft never runs it.
"""
import argparse
import hashlib
import json
import math
import os
import sys


def windows(n, ctx):
    """[start, end) of each window over n ids, as graft's eval_nll_tf: starts
    every ctx - 1 ids, each at most ctx ids, the last ending at n; a window
    predicts end - start - 1 tokens."""
    if ctx < 2:
        raise ValueError(f"--ctx must be at least 2, got {ctx}")
    return [(s, min(s + ctx, n)) for s in range(0, n - 1, ctx - 1)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gguf")
    ap.add_argument("text")
    ap.add_argument("--ctx", type=int, default=512)
    ap.add_argument("--device", default="cpu")
    a = ap.parse_args()
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    d, f = os.path.split(os.path.abspath(a.gguf))
    tok = AutoTokenizer.from_pretrained(d, gguf_file=f)
    model = AutoModelForCausalLM.from_pretrained(d, gguf_file=f, torch_dtype=torch.float32).to(a.device).eval()
    text = open(a.text, "rb").read().decode("utf-8", errors="replace")
    ids = tok.encode(text)  # BOS first when the GGUF asks for it (tokenizer.ggml.add_bos_token), as graft does
    nll, n = 0.0, 0
    with torch.no_grad():
        for s, e in windows(len(ids), a.ctx):
            w = ids[s:e]  # the first len(w) - 1 tokens predict the last len(w) - 1
            x = torch.tensor([w[:-1]], device=a.device)
            logp = torch.log_softmax(model(x).logits[0].double(), dim=-1)
            y = torch.tensor(w[1:], device=a.device)
            nll -= logp.gather(1, y[:, None]).sum().item()
            n += len(w) - 1
    out = {"tokens": n, "nll": nll, "ppl": math.exp(nll / n), "ctx": a.ctx,
           "ids_sha256": hashlib.sha256(json.dumps(ids).encode()).hexdigest()}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
