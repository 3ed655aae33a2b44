#!/usr/bin/env python3
"""Writes the hand-made regression inputs into tests/fuzz/regress/<harness>/:
one per defect the issue reported before fuzzing found it (inputs that
libFuzzer found are copied there as they came, named after the defect).
They replay in `make test` (tests/integration/fuzz_regress.sh); each must be
refused with a one-line error or load cleanly, never crash.

    python3 tests/fuzz/make_regress.py
"""
import os
import re
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_seeds as ms  # noqa: E402

REGRESS = os.path.join(ms.ROOT, "tests", "fuzz", "regress")


def out(harness, name, data):
    d = os.path.join(REGRESS, harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def seed(harness, name):
    return open(os.path.join(ms.CORPUS, harness, name), "rb").read()


def gguf_huge_header():
    """A 1 KB GGUF whose metadata claims 4096 layers with an MLP of 4M: the
    weights (terabytes) used to be allocated before any tensor was checked."""
    g = ms.Gguf()
    g.add("general.architecture", "str", "llama")
    for k, v in [("embedding_length", 16), ("feed_forward_length", 1 << 22), ("block_count", 4096),
                 ("attention.head_count", 4), ("context_length", 16)]:
        g.add(f"llama.{k}", "u32", v)
    g.tensor("token_embd.weight", ms.np.zeros((4, 16), ms.np.float32), 0)
    return g.bytes()


def gguf_aliased_tensors():
    """A valid tiny model of 64 layers whose tensors all point at the same
    bytes: without a no-overlap rule the weights grow with the square of the
    file size."""
    layers = ms.L
    ms.L = 64
    try:
        return ms.gguf_model("llama", "gpt2", alias=True)
    finally:
        ms.L = layers


def main():
    # GGUF: an added token holding a NUL byte (heap over-read when matching it)
    d = seed("gguf", "llama_gpt2.gguf")
    i = d.index(b"<|endoftext|>")
    out("gguf", "added_token_with_nul.gguf", d[:i] + b"<|endo\0text|>" + d[i + 13:])
    out("gguf", "header_claims_824gb.gguf", gguf_huge_header())
    out("gguf", "aliased_tensors.gguf", gguf_aliased_tensors())
    # llama.c: a tokenizer with fewer tokens than the byte fallback's ids 3..258
    small = ms.llama2c_legacy(64)
    out("llama2c", "tokenizer_below_byte_fallback", small + ms.SEP + ms.llama2c_tokenizer(64))
    # llama.c: a 100-byte tokenizer.bin for a 272-token model (checked before allocating)
    out("llama2c", "tokenizer_shorter_than_vocab", ms.llama2c_legacy(272) + ms.SEP + ms.llama2c_tokenizer(272)[:100])
    # tokenizer.json: one token with id 2^24 - 1 (a table slot per id: 300 MB for a 5 KB file)
    tj = ms.json.loads(seed("tokenizer_json", "bytelevel_nfc.json"))
    tj["added_tokens"][0]["id"] = (1 << 24) - 1
    out("tokenizer_json", "id_far_beyond_vocab.json", ms.json.dumps(tj, ensure_ascii=False))
    # student config.json: numbers that overflow the int / uint64 they become
    d = seed("student", "taylor_only")
    cfg, rest = d.split(ms.SEP, 1)
    out("student", "seed_1e30", re.sub(rb'"seed":\s*[0-9]+', b'"seed": 1e30', cfg) + ms.SEP + rest)
    out("student", "chunk_size_huge", re.sub(rb'"chunk_size":\s*[0-9]+', b'"chunk_size": -3e10', cfg) + ms.SEP + rest)
    # Hub model info: a size beyond long long
    out("hub_json", "size_1e30.json", '{"sha":"' + "f" * 40 + '","siblings":[{"rfilename":"a","size":1e30}]}')
    # tokenizer.json: Replace normalizers that double the text 40 times
    norms = [{"type": "Replace", "pattern": {"String": "a"}, "content": "aa"}] * 40
    tj = ms.json.loads(seed("tokenizer_json", "bytelevel_nfc.json"))
    tj["normalizer"] = {"type": "Sequence", "normalizers": norms}
    out("tokenizer_json", "normalizers_grow_2_pow_40.json", ms.json.dumps(tj, ensure_ascii=False))
    # safetensors: two tensors sharing bytes, a gap, and bytes after the last tensor
    st = ms.safetensors({"a": ms.np.zeros(4, ms.np.float32), "b": ms.np.zeros(4, ms.np.float32)}, "F32")
    n = struct.unpack("<Q", st[:8])[0]
    h = ms.json.loads(st[8:8 + n])
    for name, mutate in [("overlap", lambda h: h["b"].update(data_offsets=[8, 24])),
                         ("gap", lambda h: h["b"].update(data_offsets=[20, 36]))]:
        hh = ms.json.loads(ms.json.dumps(h))
        mutate(hh)
        body = ms.json.dumps(hh).encode()
        body += b" " * (-len(body) % 8)
        out("safetensors", f"tensors_{name}", struct.pack("<Q", len(body)) + body + st[8 + n:] + b"\0" * 8)
    out("safetensors", "trailing_bytes", st + b"\0" * 4)


if __name__ == "__main__":
    main()
