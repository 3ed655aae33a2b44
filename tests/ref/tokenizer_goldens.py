#!/usr/bin/env python3
"""Golden ids for graft's tokenizer.json tokenizers, from the Hugging Face
`tokenizers` library, written to tests/fixtures/tokenizers/goldens.json.

graft's C API takes raw bytes; the library takes a str. The rule that links
them (and that engine/tokenizer/utf8.c implements): the bytes are decoded as
bytes.decode("utf-8", errors="replace"), i.e. every maximal ill-formed
subsequence becomes one U+FFFD, before tokenizing. Every case here is stored
as raw bytes (hex) and encoded through exactly that rule, with
add_special_tokens=False. "decoded" is tokenizer.decode(ids,
skip_special_tokens=False) as UTF-8 hex.

A large check: ids of a slice of $GRAFT_SHARED/data/gutenberg-60.txt (only the
offset and length are stored, never the text).

Usage: GRAFT_SHARED=/work/shared python3 tests/ref/tokenizer_goldens.py
"""
import json
import os

import tokenizers
from tokenizers import Tokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED = os.environ.get("GRAFT_SHARED", os.path.join(os.path.dirname(ROOT), "shared"))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "tokenizers")

TOKENIZERS = {
    # name: (path as the C test finds it, path here)
    "qwen3": ("$GRAFT_SHARED/tokenizers/qwen3/tokenizer.json", os.path.join(SHARED, "tokenizers/qwen3/tokenizer.json")),
    "llama3": ("$GRAFT_SHARED/tokenizers/llama3/tokenizer.json", os.path.join(SHARED, "tokenizers/llama3/tokenizer.json")),
    "sp-legacy": ("$GRAFT_ROOT/tests/fixtures/tokenizers/sp-legacy/tokenizer.json",
                  os.path.join(FIXTURES, "sp-legacy/tokenizer.json")),
    "sp-metaspace": ("$GRAFT_ROOT/tests/fixtures/tokenizers/sp-metaspace/tokenizer.json",
                     os.path.join(FIXTURES, "sp-metaspace/tokenizer.json")),
    "sp-metaspace-always": ("$GRAFT_ROOT/tests/fixtures/tokenizers/sp-metaspace-always/tokenizer.json",
                            os.path.join(FIXTURES, "sp-metaspace-always/tokenizer.json")),
}

# Random strings over code points where NFC does something (marks of several
# classes, precomposed letters, singletons, exclusions, Hangul jamo and
# syllables), with their NFC by Python's unicodedata: checks nfc.c broadly.
NFC_ALPHABET = [
    0x41, 0x61, 0x65, 0x6F, 0x55, 0x20, 0xC5, 0xE9, 0x212B, 0x2126, 0x1E0A, 0x1EA1, 0x0958, 0x0915, 0x093C,
    0x0300, 0x0301, 0x0302, 0x0303, 0x0307, 0x0308, 0x030A, 0x0323, 0x0327, 0x0328, 0x0345, 0x0344, 0x05B0,
    0x0F71, 0x0F72, 0x0F74, 0x1100, 0x1112, 0x1161, 0x1175, 0x11A8, 0x11C2, 0xAC00, 0xAC01, 0xD7A3, 0x3099,
    0x304B, 0x30AB, 0x0B47, 0x0B3E, 0x0B57, 0x1025, 0x102E, 0x0CC6, 0x0CC2, 0x0CD5, 0x1F00, 0x0391, 0x03B1,
    0x0313, 0x0314, 0x0342, 0x1D15E, 0x1D165, 0x1D16E, 0xFB2C, 0x05C1, 0x05BC, 0x05E9, 0x2ADC, 0x0338,
]


def nfc_cases(count=400, seed=1234):
    import random
    import unicodedata
    rnd = random.Random(seed)
    out = []
    for _ in range(count):
        s = "".join(chr(rnd.choice(NFC_ALPHABET)) for _ in range(rnd.randint(1, 10)))
        out.append([s.encode("utf-8").hex(), unicodedata.normalize("NFC", s).encode("utf-8").hex()])
    return out


TORTURE = (
    "The quick brown fox jumps over the lazy dog. It's what they're doing; we've seen I'm sure you'll "
    "agree he'd go. SHOUTING: IT'S THEY'RE WE'VE I'M YOU'LL HE'D DON'T. O'Neil's 'quoted' text.\n"
    "Numbers: 0 7 42 1234 12345 3.14159 1,000,000 2024-06-01 123456789012345678901234567890 v1.2.3\n"
    "Spaces:    four   three  two one.  \t\ttabs\tand\t \t mixed \n\n\nthree newlines\r\nCRLF\r\n\r\n"
    "   leading and trailing   \n"
    "中文测试：你好，世界！这是一个句子。 日本語のテキスト、カタカナとひらがな。 한국어 텍스트입니다. "
    "مرحبا بالعالم، هذا نص عربي. Ελληνικά. Русский текст. हिन्दी पाठ।\n"
    "Emoji: 😀 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 🇯🇵🇺🇸 ❤️ 🧑🏿‍🚀\n"
    # decomposed (NFD) input, so that NFC matters
    "Cafe\u0301 re\u0301sume\u0301 n\u0303 A\u030a o\u0308 a\u0323\u0307 a\u0307\u0323 "
    "\u1100\u1161\u11a8 \u0915\u093c \u212b \u2126 e\u0301\u0301 \u0301leading-mark\n"
    "Odd spaces:\u00a0nbsp\u3000ideographic\u2009thin\u0085nel\u2028ls\u000bvt\u000cff.\n"
    "Special text: <|endoftext|> and <|im_start|>user\nhi<|im_end|> <think>x</think> "
    "<|begin_of_text|><|end_of_text|> <|im_start|<|endoftext|>> <<|endoftext|>\n"
    "Code: def f(x):\n    return x**2  # comment\n\tif (a && b) { c[i] = \"s\\n\"; }\n"
).encode("utf-8")

INVALID = (
    b"invalid: \xff \xfe\xfe \x80 tail \xc3\x28 \xe2\x82 \xe2\x82x \xf0\x9f\x98 \xed\xa0\x80 \xc0\xaf "
    b"\xf4\x90\x80\x80 \xf8\x88\x80\x80\x80 ok \xe6\x97\xa5\xe6\x9c end\xf0\x9f"
)

CASES = {
    "torture": TORTURE + INVALID,
    "empty": b"",
    "space": b" ",
    "only-invalid": b"\xff\xfe\x80\xc3\xe2\x82\xf0\x9f\x98",
    "added-sp": b"ok<s>x </s> y<unk>z</s>",
    "leading-spaces": b"  two leading, trailing  ",
    "newlines": b"\n\n\r\n \n\t\n",
    "added-flags": ("a <mask> b  <mask>c\t<mask> [SEP]  d [SEP]\n e <mask>[SEP] [SEP]"
                    " dog dogs hotdog dog. _dog dog_ \u00e9dog dog\u00e9 1dog"
                    " Caf\u00e9 Cafe\u0301 xCaf\u00e9 \u00e9! e\u0301! \u00e9!").encode("utf-8"),
    "nfd": "A\u030a\u0301 \u1100\u1161 \u0958".encode("utf-8"),
}

SLICE = (810000, 16384)  # gutenberg-60.txt byte offset and length (it holds non-ASCII text)


def encode(tok, raw):
    return tok.encode(raw.decode("utf-8", errors="replace"), add_special_tokens=False).ids


def main():
    with open(os.path.join(SHARED, "data", "gutenberg-60.txt"), "rb") as f:
        f.seek(SLICE[0])
        gut = f.read(SLICE[1])
    out = {"generator": "tests/ref/tokenizer_goldens.py with tokenizers %s" % tokenizers.__version__,
           "rule": "bytes.decode('utf-8', errors='replace'), then encode(add_special_tokens=False)",
           "cases": {k: v.hex() for k, v in CASES.items()},
           "gutenberg_slice": {"file": "$GRAFT_SHARED/data/gutenberg-60.txt", "offset": SLICE[0], "length": SLICE[1]},
           "nfc": nfc_cases(),
           "tokenizers": {}}
    for name, (c_path, path) in TOKENIZERS.items():
        tok = Tokenizer.from_file(path)
        entry = {"path": c_path, "cases": {}}
        for case, raw in CASES.items():
            ids = encode(tok, raw)
            entry["cases"][case] = {"ids": ids, "decoded": tok.decode(ids, skip_special_tokens=False).encode("utf-8").hex()}
        entry["gutenberg_ids"] = encode(tok, gut)
        out["tokenizers"][name] = entry
    with open(os.path.join(FIXTURES, "goldens.json"), "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
