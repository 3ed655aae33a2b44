#!/usr/bin/env python3
"""Writes tests/fixtures/safetensors/: small .safetensors files at the edges of
the format's layout rules, and verdicts.json with what the reference library
(the `safetensors` package, Rust inside) says of each: "ok" or its error.
tests/unit/test_formats.c checks that graft accepts exactly the files the
library accepts. Deterministic; needs `pip install safetensors numpy`.

    python3 tests/ref/safetensors_rules.py
"""
import json
import os
import struct

import safetensors
from safetensors import safe_open

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "safetensors")


def f32(shape, begin, end):
    return {"dtype": "F32", "shape": shape, "data_offsets": [begin, end]}


def file(header, data, pad=b" "):
    h = json.dumps(header).encode()
    h += pad * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + data


CASES = {
    "ok": file({"a": f32([2], 0, 8), "b": f32([2], 8, 16)}, bytes(16)),
    "ok_header_out_of_order": file({"b": f32([2], 8, 16), "a": f32([2], 0, 8)}, bytes(16)),
    "ok_empty_tensor": file({"e": f32([0], 0, 0), "a": f32([2], 0, 8)}, bytes(8)),
    "ok_scalar": file({"s": f32([], 0, 4)}, bytes(4)),
    "ok_metadata_only": file({"__metadata__": {"format": "pt"}}, b""),
    "overlap": file({"a": f32([2], 0, 8), "b": f32([2], 4, 12)}, bytes(16)),
    "same_bytes_twice": file({"a": f32([2], 0, 8), "b": f32([2], 0, 8)}, bytes(8)),
    "gap": file({"a": f32([2], 0, 8), "b": f32([2], 12, 20)}, bytes(20)),
    "first_not_at_0": file({"a": f32([2], 4, 12)}, bytes(12)),
    "trailing_bytes": file({"a": f32([2], 0, 8)}, bytes(12)),
    "metadata_only_trailing": file({"__metadata__": {"format": "pt"}}, b"abc"),
    "truncated": file({"a": f32([4], 0, 16)}, bytes(8)),
    "size_mismatch": file({"a": f32([3], 0, 8)}, bytes(8)),
    "nul_padding": file({"a": f32([2], 0, 8)}, bytes(8), b"\0"),
    "header_not_object": struct.pack("<Q", 8) + b"[1,2,3] ",
}


def main():
    os.makedirs(OUT, exist_ok=True)
    verdicts = {}
    for name, data in CASES.items():
        path = os.path.join(OUT, name + ".safetensors")
        with open(path, "wb") as f:
            f.write(data)
        try:
            with safe_open(path, "np") as f:
                list(f.keys())
            verdicts[name] = "ok"
        except Exception as e:  # the library's SafetensorError
            verdicts[name] = "error: " + str(e)
    with open(os.path.join(OUT, "verdicts.json"), "w") as f:
        json.dump({"library": "safetensors " + safetensors.__version__, "verdicts": verdicts}, f, indent=1)
        f.write("\n")
    for k, v in verdicts.items():
        print(f"{k:28s} {v}")


if __name__ == "__main__":
    main()
