#!/usr/bin/env python3
"""Trains two small SentencePiece-style BPE tokenizers (byte fallback, "▁" for
spaces) on TinyStories with the Hugging Face `tokenizers` library and writes
them as test fixtures:

  tests/fixtures/tokenizers/sp-legacy/tokenizer.json
      the Llama 2 layout: normalizer Sequence[Prepend("▁"), Replace(" ", "▁")],
      no pre-tokenizer, decoder Sequence[Replace("▁", " "), ByteFallback, Fuse,
      Strip(" ", 1, 0)]
  tests/fixtures/tokenizers/sp-metaspace/tokenizer.json
      the newer layout: Metaspace pre-tokenizer (prepend_scheme "first",
      split true) and decoder Sequence[ByteFallback, Metaspace]
  tests/fixtures/tokenizers/sp-metaspace-always/tokenizer.json
      the same with prepend_scheme "always", split false, an NFC normalizer,
      and added tokens with lstrip, rstrip, single_word and normalized set

Both share one trained model. Like Llama 2, ids 0..2 are <unk> <s> </s> and
3..258 the byte tokens <0x00>..<0xFF>; only the first three are added tokens
(the byte tokens are plain vocabulary, reached through byte fallback).

Usage: GRAFT_SHARED=/work/shared python3 tests/ref/make_sp_tokenizers.py
"""
import json
import os

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED = os.environ.get("GRAFT_SHARED", os.path.join(os.path.dirname(ROOT), "shared"))
OUT = os.path.join(ROOT, "tests", "fixtures", "tokenizers")
SPECIALS = ["<unk>", "<s>", "</s>"]
BYTES = ["<0x%02X>" % b for b in range(256)]


def train():
    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="first", split=True)
    trainer = trainers.BpeTrainer(
        vocab_size=800,
        special_tokens=SPECIALS + BYTES,
        limit_alphabet=64,  # rare characters are left to byte fallback
        show_progress=False,
    )
    tok.train([os.path.join(SHARED, "data", "tinystories.txt")], trainer)
    return json.loads(tok.to_str())


def added(i, content, **flags):
    t = {"id": i, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": True}
    t.update(flags)
    return t


def write(name, spec):
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    text = json.dumps(spec, ensure_ascii=False, indent=1)
    Tokenizer.from_str(text)  # the library must accept what we wrote
    with open(os.path.join(d, "tokenizer.json"), "w", encoding="utf-8") as f:
        f.write(text + "\n")


def main():
    spec = train()
    # byte tokens stay in the vocabulary but are not added tokens
    spec["added_tokens"] = [t for t in spec["added_tokens"] if t["content"] in SPECIALS]
    for t in spec["added_tokens"]:
        t["normalized"] = False
    meta = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": True}

    legacy = dict(spec)
    legacy["normalizer"] = {
        "type": "Sequence",
        "normalizers": [
            {"type": "Prepend", "prepend": "\u2581"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"},
        ],
    }
    legacy["pre_tokenizer"] = None
    legacy["decoder"] = {
        "type": "Sequence",
        "decoders": [
            {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
            {"type": "ByteFallback"},
            {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0},
        ],
    }
    write("sp-legacy", legacy)

    newer = dict(spec)
    newer["normalizer"] = None
    newer["pre_tokenizer"] = meta
    newer["decoder"] = {"type": "Sequence", "decoders": [{"type": "ByteFallback"}, dict(meta)]}
    write("sp-metaspace", newer)

    always = dict(newer)
    meta_always = dict(meta, prepend_scheme="always", split=False)
    always["normalizer"] = {"type": "NFC"}
    always["added_tokens"] = spec["added_tokens"] + [
        added(800, "<mask>", lstrip=True),
        added(801, "[SEP]", rstrip=True),
        added(802, "dog", single_word=True, normalized=True, special=False),
        added(803, "Cafe\u0301", normalized=True, special=False),  # matched in its NFC form
        added(804, "\u00e9!", special=False),
    ]
    always["pre_tokenizer"] = meta_always
    always["decoder"] = {"type": "Sequence", "decoders": [{"type": "ByteFallback"}, dict(meta_always)]}
    write("sp-metaspace-always", always)


if __name__ == "__main__":
    main()
