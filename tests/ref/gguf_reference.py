#!/usr/bin/env python3
"""Goldens for the real GGUF teachers, computed independently of graft.

Usage: gguf_reference.py GGUF_FILE OUT.json [--tokenizer-json FILE] [--text FILE]
                         [--bytes N] [--tokens T] [--last K] [--topk N]

- ids: the tokenizers library (Rust) on the first N bytes of the text, with a
  tokenizer rebuilt from the GGUF metadata the way the model's own
  tokenizer.json is built (SmolLM2: Digits(individual) + ByteLevel; Qwen2:
  NFC + Split(regex) + ByteLevel), or --tokenizer-json (the original file,
  e.g. $GRAFT_SHARED/tokenizers/qwen3/tokenizer.json for Qwen2.5).
- logits: transformers loading the GGUF itself (gguf_file=..., float32): its
  own dequantization (the gguf package) and its own undoing of llama's q/k
  permutation; teacher-forced on the first T ids, no BOS added (both files say
  add_bos_token false).
Written: the ids, per position the argmax and the log-probability of the next
token, and for the last K positions the top-N ids with their logits plus the
logsumexp. Run with a Python that has torch, transformers and gguf (here
/tmp/hfenv/bin/python).
"""
import argparse
import hashlib
import json
import time

import numpy as np


def gguf_tokenizer(path):
    from gguf import GGUFReader
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, Regex, AddedToken

    r = GGUFReader(path)
    f = r.fields
    model = f["tokenizer.ggml.model"].contents()
    pre = f["tokenizer.ggml.pre"].contents() if "tokenizer.ggml.pre" in f else "default"
    assert model == "gpt2", model
    toks = f["tokenizer.ggml.tokens"].contents()
    types = f["tokenizer.ggml.token_type"].contents()
    merges = [tuple(m.split(" ", 1)) for m in f["tokenizer.ggml.merges"].contents()]
    vocab = {t: i for i, t in enumerate(toks) if types[i] not in (3, 4)}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, ignore_merges=pre in ("llama-bpe", "llama3")))
    if pre == "smollm":
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False)])
    elif pre in ("qwen2", "llama-bpe", "llama3"):
        digits = r"\p{N}" if pre == "qwen2" else r"\p{N}{1,3}"
        rx = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|" + digits +
              r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
        if pre == "qwen2":
            tok.normalizer = normalizers.NFC()
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(rx), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    else:
        raise SystemExit(f"pre-tokenizer {pre} not handled by this script")
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken(toks[i], special=True, normalized=False)
                            for i in range(len(toks)) if types[i] in (3, 4)])
    return tok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gguf")
    ap.add_argument("out")
    ap.add_argument("--tokenizer-json")
    ap.add_argument("--text", default="/work/shared/data/gutenberg-60.txt")
    ap.add_argument("--bytes", type=int, default=1400)
    ap.add_argument("--tokens", type=int, default=256)
    ap.add_argument("--last", type=int, default=4)
    ap.add_argument("--topk", type=int, default=20)
    a = ap.parse_args()

    raw = open(a.text, "rb").read(a.bytes)
    text = raw.decode("utf-8")
    if a.tokenizer_json:
        from tokenizers import Tokenizer
        tok = Tokenizer.from_file(a.tokenizer_json)
        tok_src = "tokenizer.json"
    else:
        tok = gguf_tokenizer(a.gguf)
        tok_src = "gguf metadata rebuilt with the tokenizers library"
    ids = tok.encode(text, add_special_tokens=False).ids
    print(f"{len(ids)} ids from {a.bytes} bytes")

    import torch
    from transformers import AutoModelForCausalLM
    import os
    torch.set_num_threads(os.cpu_count())
    t0 = time.time()
    model = AutoModelForCausalLM.from_pretrained(os.path.dirname(os.path.abspath(a.gguf)),
                                                 gguf_file=os.path.basename(a.gguf), dtype=torch.float32)
    model.eval()
    print(f"loaded in {time.time() - t0:.1f}s")
    T = min(a.tokens, len(ids))
    with torch.no_grad():
        t0 = time.time()
        logits = model(torch.tensor([ids[:T]])).logits[0].double().numpy()
        print(f"forward {T} tokens in {time.time() - t0:.1f}s")
    lse = np.log(np.exp(logits - logits.max(1, keepdims=True)).sum(1)) + logits.max(1)
    next_logprob = [float(logits[t, ids[t + 1]] - lse[t]) for t in range(T - 1)]
    last = []
    for t in range(T - a.last, T):
        top = np.argsort(-logits[t])[:a.topk]
        last.append({"pos": t, "top_ids": [int(i) for i in top], "top_logits": [float(logits[t, i]) for i in top],
                     "logsumexp": float(lse[t])})
    sha = hashlib.sha256(open(a.gguf, "rb").read()).hexdigest()
    out = {
        "gguf_sha256": sha,
        "text": os.path.basename(a.text), "text_bytes": a.bytes,
        "tokenizer_reference": tok_src,
        "ids": ids,
        "n_forward": T,
        "argmax": [int(i) for i in logits.argmax(1)],
        "next_logprob": next_logprob,
        "last": last,
        "reference": "transformers %s, torch %s, float32, gguf_file" % (__import__("transformers").__version__,
                                                                        torch.__version__),
    }
    json.dump(out, open(a.out, "w"), indent=None, separators=(",", ":"))
    print("wrote", a.out)


if __name__ == "__main__":
    main()
