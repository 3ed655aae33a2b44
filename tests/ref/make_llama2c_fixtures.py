#!/usr/bin/env python3
"""Writes tiny llama2.c checkpoints of ONE set of random weights in the three
layouts of karpathy/llama2.c export.py (legacy v0, v1 float32, v2 Q8_0), so
the C loader can be checked against a writer that is not itself:

    tests/fixtures/llama2c/tiny_legacy.bin   int32 header (vocab negative: separate classifier)
    tests/fixtures/llama2c/tiny_v1.bin       256-byte "ak42" header, float32
    tests/fixtures/llama2c/tiny_v2.bin       256-byte header + group size, Q8_0

Quantization follows export.py's quantize_q80: per group of GS values,
scale = max|w| / 127 (float32), q = round-half-to-even(w / scale) as int8,
stored per tensor as the int8 values followed by that tensor's scales.

Usage: python3 tests/ref/make_llama2c_fixtures.py [OUT_DIR]   (needs numpy)
"""
import os
import struct
import sys

import numpy as np

DIM, HIDDEN, LAYERS, HEADS, KV_HEADS, VOCAB, SEQ = 8, 16, 2, 2, 1, 16, 4
HEAD = DIM // HEADS
KVD = KV_HEADS * HEAD
GS = 8  # export.py halves 64 until it divides dim


def weights():
    rng = np.random.default_rng(20240601)
    r = lambda *shape: (rng.standard_normal(shape) * 0.5).astype(np.float32)
    return {
        "emb": r(VOCAB, DIM),
        "att_norm": [r(DIM) for _ in range(LAYERS)],
        "wq": [r(DIM, DIM) for _ in range(LAYERS)],
        "wk": [r(KVD, DIM) for _ in range(LAYERS)],
        "wv": [r(KVD, DIM) for _ in range(LAYERS)],
        "wo": [r(DIM, DIM) for _ in range(LAYERS)],
        "ffn_norm": [r(DIM) for _ in range(LAYERS)],
        "w1": [r(HIDDEN, DIM) for _ in range(LAYERS)],
        "w2": [r(DIM, HIDDEN) for _ in range(LAYERS)],
        "w3": [r(HIDDEN, DIM) for _ in range(LAYERS)],
        "norm": r(DIM),
        "wcls": r(VOCAB, DIM),
    }


def f32(f, a):
    f.write(np.ascontiguousarray(a, dtype="<f4").tobytes())


def params(vocab):
    return struct.pack("<7i", DIM, HIDDEN, LAYERS, HEADS, KV_HEADS, vocab, SEQ)


def legacy(path, w):
    with open(path, "wb") as f:
        f.write(params(-VOCAB))  # negative vocab: the classifier is stored
        f32(f, w["emb"])
        for k in ("att_norm", "wq", "wk", "wv", "wo", "ffn_norm", "w1", "w2", "w3"):
            for t in w[k]:
                f32(f, t)
        f32(f, w["norm"])
        freqs = 1.0 / (10000.0 ** (np.arange(0, HEAD, 2, dtype=np.float32) / HEAD))
        ang = np.outer(np.arange(SEQ, dtype=np.float32), freqs)
        f32(f, np.cos(ang))
        f32(f, np.sin(ang))
        f32(f, w["wcls"])


def header(f, version, extra=b""):
    f.write(struct.pack("<I", 0x616B3432))
    f.write(struct.pack("<i", version))
    f.write(params(VOCAB))
    f.write(struct.pack("<B", 0))  # shared_classifier: no
    f.write(extra)
    f.write(b"\0" * (256 - f.tell()))


def matrices(w):
    out = [w["emb"]]
    for k in ("wq", "wk", "wv", "wo", "w1", "w2", "w3"):
        out += w[k]
    return out + [w["wcls"]]


def v1(path, w):
    with open(path, "wb") as f:
        header(f, 1)
        for t in w["att_norm"] + w["ffn_norm"] + [w["norm"]]:
            f32(f, t)
        for t in matrices(w):
            f32(f, t)


def v2(path, w):
    with open(path, "wb") as f:
        header(f, 2, struct.pack("<i", GS))
        for t in w["att_norm"] + w["ffn_norm"] + [w["norm"]]:
            f32(f, t)
        for t in matrices(w):
            g = t.reshape(-1, GS).astype(np.float32)
            scale = (np.abs(g).max(axis=1) / np.float32(127.0)).astype(np.float32)
            q = np.round(g / scale[:, None]).astype(np.int8)
            f.write(q.tobytes())
            f32(f, scale)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "fixtures", "llama2c")
    os.makedirs(out, exist_ok=True)
    w = weights()
    legacy(os.path.join(out, "tiny_legacy.bin"), w)
    v1(os.path.join(out, "tiny_v1.bin"), w)
    v2(os.path.join(out, "tiny_v2.bin"), w)


if __name__ == "__main__":
    main()
