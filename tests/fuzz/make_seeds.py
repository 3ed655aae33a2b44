#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz harnesses into tests/fuzz/corpus/<harness>/.

Every seed is a small, valid input (a few KB) so that libFuzzer starts from
files graft loads and then mutates them. The tiny teacher everywhere is a
llama with dim 8, MLP 16, 2 layers, 2 query heads, 1 KV head and a vocabulary
of VOCAB ids (>= 259, so a llama2.c byte fallback fits). Deterministic; needs
only numpy. Student seeds are made by graft itself (GRAFT_BIN, default
./build/graft) converting the tiny llama2.c teacher.

    python3 tests/fuzz/make_seeds.py
"""
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus")
SEP = b"\n--graft-fuzz-file--\n"  # FUZZ_SEP in tests/fuzz/harness.h
D, F, L, H, KV, HD, SEQ = 8, 16, 2, 2, 1, 4, 16
rng = np.random.default_rng(17)


def out(harness, name, data):
    d = os.path.join(CORPUS, harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def weights(vocab):
    """HF-named float32 tensors of the tiny llama ([out, in] like PyTorch)."""
    r = lambda *s: (rng.standard_normal(s) * 0.2).astype(np.float32)
    t = {"model.embed_tokens.weight": r(vocab, D), "model.norm.weight": np.ones(D, np.float32)}
    for l in range(L):
        p = f"model.layers.{l}."
        t[p + "input_layernorm.weight"] = np.ones(D, np.float32)
        t[p + "post_attention_layernorm.weight"] = np.ones(D, np.float32)
        t[p + "self_attn.q_proj.weight"] = r(H * HD, D)
        t[p + "self_attn.k_proj.weight"] = r(KV * HD, D)
        t[p + "self_attn.v_proj.weight"] = r(KV * HD, D)
        t[p + "self_attn.o_proj.weight"] = r(D, H * HD)
        t[p + "mlp.gate_proj.weight"] = r(F, D)
        t[p + "mlp.up_proj.weight"] = r(F, D)
        t[p + "mlp.down_proj.weight"] = r(D, F)
    return t


def safetensors(tensors, dtype="F16"):
    np_dtype = {"F16": np.float16, "F32": np.float32}[dtype]
    header, blobs, off = {"__metadata__": {"format": "pt"}}, [], 0
    for name, a in tensors.items():
        b = a.astype(np_dtype).tobytes()
        header[name] = {"dtype": dtype, "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + b"".join(blobs)


def hf_config(vocab, **extra):
    c = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_act": "silu",
         "hidden_size": D, "intermediate_size": F, "num_hidden_layers": L, "num_attention_heads": H,
         "num_key_value_heads": KV, "head_dim": HD, "vocab_size": vocab, "max_position_embeddings": SEQ,
         "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "tie_word_embeddings": True, "bos_token_id": 1,
         "eos_token_id": 2}
    c.update(extra)
    return json.dumps(c, indent=1)


# ---- tokenizers -------------------------------------------------------------

def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


BYTE_CHARS = bytes_to_unicode()
GPT2_MERGES = [("Ġ", "t"), ("h", "e"), ("Ġt", "he"), ("i", "n"), ("Ġ", "a"), ("o", "n"), ("e", "r"),
               ("Ġ", "s"), ("Ġa", "n"), ("Ġ", "w"), ("Ã", "©")]
SPM_PIECES = ["▁", "▁t", "he", "▁the", "o", "n", "▁o", "▁on", "c", "e", "▁a", "a", "t", "h"]


def gpt2_vocab():
    vocab = [BYTE_CHARS[b] for b in range(256)]
    for a, b in GPT2_MERGES:
        vocab.append(a + b)
    return vocab


def bytelevel_tokenizer_json(nfc=True):
    vocab = gpt2_vocab()
    added = [{"id": len(vocab), "content": "<|endoftext|>", "single_word": False, "lstrip": False,
              "rstrip": False, "normalized": False, "special": True},
             {"id": len(vocab) + 1, "content": "<|im_start|>", "single_word": False, "lstrip": True,
              "rstrip": False, "normalized": True, "special": False}]
    split = {"type": "Split", "pattern": {"Regex": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
                                                   "\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
             "behavior": "Isolated", "invert": False}
    return json.dumps({
        "version": "1.0", "added_tokens": added,
        "normalizer": {"type": "NFC"} if nfc else None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            split, {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}]},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": {p: i for i, p in enumerate(vocab)},
                  "merges": [f"{a} {b}" for a, b in GPT2_MERGES]},
    }, ensure_ascii=False, indent=1)


def spm_vocab():
    return ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)] + SPM_PIECES


def spm_merges():
    vocab, merges = set(spm_vocab()), []
    for p in SPM_PIECES:
        for k in range(1, len(p)):
            if p[:k] in vocab and p[k:] in vocab:
                merges.append((p[:k], p[k:]))
    return merges


def sp_tokenizer_json():
    vocab = spm_vocab()
    added = [{"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for i, c in enumerate(vocab[:3])]
    return json.dumps({
        "version": "1.0", "added_tokens": added,
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
        "pre_tokenizer": None, "post_processor": None,
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"},
            {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
        "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True, "ignore_merges": False,
                  "vocab": {p: i for i, p in enumerate(vocab)},
                  "merges": [[a, b] for a, b in spm_merges()]},
    }, ensure_ascii=False, indent=1)


TOKENIZER_CONFIG = json.dumps({"add_bos_token": True, "bos_token": "<s>", "eos_token": "</s>"})


def llama2c_tokenizer(vocab_size):
    pieces = [b"<unk>", b"\n<s>\n", b"\n</s>\n"] + [f"<0x{b:02X}>".encode() for b in range(256)]
    extra = [b" ", b"e", b"t", b" t", b"he", b" the", b"a", b" a", b"n", b"o", b"on", b" on", b"ce"]
    pieces += extra
    pieces = pieces[:vocab_size]
    scores = [0.0] * 259 + [-float(i) for i in range(len(pieces) - 259)]
    body = b"".join(struct.pack("<fi", s, len(p)) + p for s, p in zip(scores, pieces))
    return struct.pack("<I", max(len(p) for p in pieces)) + body


# ---- model files ------------------------------------------------------------

def llama2c_legacy(vocab):
    t = weights(vocab)
    layer = lambda k: np.concatenate([t[f"model.layers.{l}.{k}"].ravel() for l in range(L)])
    parts = [t["model.embed_tokens.weight"].ravel(), layer("input_layernorm.weight"),
             layer("self_attn.q_proj.weight"), layer("self_attn.k_proj.weight"), layer("self_attn.v_proj.weight"),
             layer("self_attn.o_proj.weight"), layer("post_attention_layernorm.weight"), layer("mlp.gate_proj.weight"),
             layer("mlp.down_proj.weight"), layer("mlp.up_proj.weight"), t["model.norm.weight"].ravel(),
             np.zeros(SEQ * HD, np.float32)]  # freq_cis real + imag: SEQ * HD / 2 each
    return struct.pack("<7i", D, F, L, H, KV, vocab, SEQ) + np.concatenate(parts).astype("<f4").tobytes()


def llama2c_v1(vocab):
    t = weights(vocab)
    layer = lambda k: np.concatenate([t[f"model.layers.{l}.{k}"].ravel() for l in range(L)])
    hdr = struct.pack("<Ii7iB", 0x616b3432, 1, D, F, L, H, KV, vocab, SEQ, 1)
    hdr += b"\0" * (256 - len(hdr))
    parts = [layer("input_layernorm.weight"), layer("post_attention_layernorm.weight"), t["model.norm.weight"],
             t["model.embed_tokens.weight"].ravel(), layer("self_attn.q_proj.weight"),
             layer("self_attn.k_proj.weight"), layer("self_attn.v_proj.weight"), layer("self_attn.o_proj.weight"),
             layer("mlp.gate_proj.weight"), layer("mlp.down_proj.weight"), layer("mlp.up_proj.weight")]
    return hdr + np.concatenate(parts).astype("<f4").tobytes()


class Gguf:
    TYPES = {"u32": 4, "i32": 5, "f32": 6, "bool": 7, "str": 8, "arr": 9}

    def __init__(self):
        self.kv, self.tensors = [], []

    @staticmethod
    def s(x):
        b = x.encode() if isinstance(x, str) else x
        return struct.pack("<Q", len(b)) + b

    def add(self, key, kind, value):
        b = self.s(key) + struct.pack("<I", self.TYPES[kind])
        if kind == "str":
            b += self.s(value)
        elif kind == "u32":
            b += struct.pack("<I", value)
        elif kind == "i32":
            b += struct.pack("<i", value)
        elif kind == "f32":
            b += struct.pack("<f", value)
        elif kind == "bool":
            b += struct.pack("<B", value)
        self.kv.append(b)

    def add_array(self, key, kind, values):
        b = self.s(key) + struct.pack("<II", self.TYPES["arr"], self.TYPES[kind]) + struct.pack("<Q", len(values))
        for v in values:
            b += self.s(v) if kind == "str" else struct.pack({"i32": "<i", "f32": "<f"}[kind], v)
        self.kv.append(b)

    def tensor(self, name, a, ggml_type=1):  # 0 f32, 1 f16
        data = a.astype(np.float16 if ggml_type == 1 else np.float32).tobytes()
        self.tensors.append((name, list(reversed(a.shape)), ggml_type, data))

    def bytes(self, alias=False):
        """alias: every tensor points at the same bytes (which graft must refuse)."""
        head = b"GGUF" + struct.pack("<IQQ", 3, len(self.tensors), len(self.kv)) + b"".join(self.kv)
        infos, off, datas = b"", 0, b""
        for name, ne, ty, data in self.tensors:
            infos += self.s(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", n) for n in ne)
            infos += struct.pack("<IQ", ty, 0 if alias else off)
            pad = data + b"\0" * (-len(data) % 32)
            if alias:
                datas = max(datas, pad, key=len)
                continue
            datas += pad
            off += len(pad)
        head += infos
        return head + b"\0" * (-len(head) % 32) + datas


def gguf_model(arch, tok, alias=False):
    vocab = gpt2_vocab() + ["<|endoftext|>"] if tok == "gpt2" else spm_vocab()
    V = len(vocab)
    t = weights(V)
    g = Gguf()
    g.add("general.architecture", "str", arch)
    for k, v in [("embedding_length", D), ("feed_forward_length", F), ("block_count", L),
                 ("attention.head_count", H), ("attention.head_count_kv", KV), ("context_length", SEQ)]:
        g.add(f"{arch}.{k}", "u32", v)
    g.add(f"{arch}.attention.layer_norm_rms_epsilon", "f32", 1e-5)
    g.add(f"{arch}.rope.freq_base", "f32", 10000.0)
    g.add("tokenizer.ggml.model", "str", "gpt2" if tok == "gpt2" else "llama")
    g.add_array("tokenizer.ggml.tokens", "str", vocab)
    if tok == "gpt2":
        g.add_array("tokenizer.ggml.token_type", "i32", [1] * (V - 1) + [3])
        g.add_array("tokenizer.ggml.merges", "str", [f"{a} {b}" for a, b in GPT2_MERGES])
        g.add("tokenizer.ggml.pre", "str", "qwen2" if arch == "qwen2" else "default")
        g.add("tokenizer.ggml.eos_token_id", "u32", V - 1)
    else:
        g.add_array("tokenizer.ggml.token_type", "i32", [2, 3, 3] + [6] * 256 + [1] * len(SPM_PIECES))
        g.add_array("tokenizer.ggml.scores", "f32", [0.0] * 259 + [-float(i) for i in range(len(SPM_PIECES))])
        g.add("tokenizer.ggml.bos_token_id", "u32", 1)
        g.add("tokenizer.ggml.eos_token_id", "u32", 2)
    g.tensor("token_embd.weight", t["model.embed_tokens.weight"])
    g.tensor("output_norm.weight", t["model.norm.weight"], 0)
    for l in range(L):
        p, q = f"model.layers.{l}.", f"blk.{l}."
        g.tensor(q + "attn_norm.weight", t[p + "input_layernorm.weight"], 0)
        g.tensor(q + "ffn_norm.weight", t[p + "post_attention_layernorm.weight"], 0)
        for hf, gg in [("self_attn.q_proj", "attn_q"), ("self_attn.k_proj", "attn_k"), ("self_attn.v_proj", "attn_v"),
                       ("self_attn.o_proj", "attn_output"), ("mlp.gate_proj", "ffn_gate"), ("mlp.up_proj", "ffn_up"),
                       ("mlp.down_proj", "ffn_down")]:
            g.tensor(q + gg + ".weight", t[p + hf + ".weight"])
        if arch == "qwen2":
            for gg, n in [("attn_q", H * HD), ("attn_k", KV * HD), ("attn_v", KV * HD)]:
                g.tensor(q + gg + ".bias", np.zeros(n, np.float32), 0)
    return g.bytes(alias)


def checkpoint(sizes=(3, 5, 2)):
    """GRAFTCK3 (engine/train/checkpoint.h): the block's size, each tensor's offset and size, the curves,
    the header's SHA-256, the three blocks, each tensor slot's SHA-256 per block, and that table's SHA-256."""
    n = sum(sizes)
    b = b"GRAFTCK3" + struct.pack("<Qqqqq", 0x1234, 4, 64, 5, 7) + struct.pack("<IQ", len(sizes), n)
    offs = [sum(sizes[:i]) for i in range(len(sizes))]
    b += b"".join(struct.pack("<QQ", o, s) for o, s in zip(offs, sizes))
    b += struct.pack("<I", 2) + struct.pack("<4d", 16, 5.5, 32, 5.1)
    b += struct.pack("<I", 1) + struct.pack("<2d", 32, 120.0)
    b += hashlib.sha256(b).digest()
    blocks = [struct.pack("<f", -1 + 2 * i / (3 * n - 1)) for i in range(3 * n)]  # float32, -1 .. 1
    sums = b"".join(hashlib.sha256(b"".join(blocks[k * n + o:k * n + o + s])).digest()
                    for k in range(3) for o, s in zip(offs, sizes))
    return b + b"".join(blocks) + sums + hashlib.sha256(sums).digest()


def model_info():
    sha = "0123456789abcdef0123456789abcdef01234567"
    return json.dumps({"id": "org/tiny", "sha": sha, "siblings": [
        {"rfilename": "config.json", "size": 700, "blobId": "a" * 40},
        {"rfilename": "model.safetensors", "size": 5000, "blobId": "b" * 40,
         "lfs": {"sha256": "c" * 64, "size": 5000, "pointerSize": 134}},
        {"rfilename": "sub/dir/tokenizer.json", "size": 123456789012}]})


def student(graft, work):
    """A student folder converted by graft from the tiny llama2.c teacher."""
    vocab = 272
    with open(os.path.join(work, "tiny.bin"), "wb") as f:
        f.write(llama2c_legacy(vocab))
    with open(os.path.join(work, "tokenizer.bin"), "wb") as f:
        f.write(llama2c_tokenizer(vocab))
    with open(os.path.join(work, "calib.txt"), "w") as f:
        f.write("Once upon a time there was a cat. The cat sat on the mat. " * 8)
    sdir = os.path.join(work, "student")
    subprocess.run([graft, "convert", os.path.join(work, "tiny.bin"), "--keep", "0.5", "--strategy", "uniform",
                    "--init", "taylor-only", "--calib", os.path.join(work, "calib.txt"), "--ctx", "16",
                    "--calib-seqs", "2", "--out", sdir],
                   check=True, stdout=subprocess.DEVNULL)
    cfg = open(os.path.join(sdir, "config.json"), "rb").read()
    st = open(os.path.join(sdir, "model.safetensors"), "rb").read()
    tok = open(os.path.join(sdir, "tokenizer.bin"), "rb").read()
    return cfg + SEP + st + SEP + tok


def import_runs():
    """graft tui --import's inputs: small ablate, race, stats and halflife --json of a 2-layer teacher."""
    ablate = {"teacher_ppl": 12.5, "rows": [
        {"strategy": "uniform", "keep": 0.5, "kept_layers": [0], "init": "random", "stage1": [],
         "half_life_override": None, "sigma_fit": None, "ppl": 90.0,
         "half_life": {"mean": 40, "median": 12, "max": 400, "min": 1, "heads": 2}},
        {"strategy": "uniform", "keep": 0.5, "kept_layers": [0], "init": "taylor-calibrate",
         "stage1": ["decay", "beta", "sigma", "gate"], "half_life_override": None, "sigma_fit": "reference", "ppl": 77.4},
        {"strategy": "uniform", "keep": 0.5, "kept_layers": [0], "init": "taylor-calibrate",
         "stage1": ["decay", "beta", "gate"], "half_life_override": 32, "sigma_fit": None, "ppl": 54.1}],
        "meta": {"model": "/m/tiny.gguf", "calib": "/t/a.txt", "eval": "/t/a.txt",
                 "split": {"ctx": 16, "eval_begin": 100, "eval_end": 164}, "sigma_fits": ["reference"],
                 "stage2_steps": 3, "keep_best": "heldout", "decay_distance": "no-sink", "seed": 1},
        "memory": {"device": "cpu"}}
    race = {"model": "/m/tiny.gguf", "runs": [
        {"init": "random", "converted_layers": "1", "stage1": [], "sigma_fit": None,
         "curve": [[16, 3.0], [32, 2.5]], "eval_curve": [[32, 20.0]], "final_eval_ppl": 20.0},
        {"init": "taylor-calibrate[decay,beta,gate,no-sink]", "converted_layers": "1",
         "stage1": ["decay", "beta", "gate"], "sigma_fit": None, "curve": [[16, 2.0], [32, 1.9]],
         "eval_curve": [[32, 15.0]], "final_eval_ppl": 15.0}],
        "teacher_eval_ppl": 10.0, "eval_seqs": 2, "target_loss": 2.5,
        "tokens_to_target": {"random": 32, "taylor-calibrate[decay,beta,gate,no-sink]": 16}, "ratio": 2.0,
        "smoothing_window": 1, "converted_layers": "1", "strategy": "uniform", "keep": 0.5, "tokens_budget": 32,
        "lr_mixer": 0.001, "lr_rest": 0.0001, "ctx": 16, "batch": 1, "accum": 1, "data": "/t/a.txt"}
    head = {"head": 0, "mean_distance": 3.5, "entropy": 1.0, "concentration": 0.5, "output_rms": 0.1,
            "mean_distance_no_sink": 3.0, "sink_share": 0.2}
    stats = {"model": "/m/tiny.gguf", "sequences": 2, "ctx": 16,
             "layers": [{"layer": l, "heads": [dict(head, head=h) for h in range(2)]} for l in range(2)]}
    halflife = {"model": "/m/tiny.gguf", "student": "/s/tiny", "thresholds": {}, "init": "taylor-calibrate",
                "decay_distance": "all", "heads": [{"layer": 1, "head": h, "idle": 3.0 + h, "p50": None if h else 2.0}
                                                   for h in range(2)]}
    out("import_runs", "ablate.json", json.dumps(ablate))
    out("import_runs", "race.json", json.dumps(race))
    out("import_runs", "stats.json", json.dumps(stats))
    out("import_runs", "halflife_no_shape.json", json.dumps(halflife))
    out("import_runs", "stats_then_halflife", json.dumps(stats).encode() + SEP + json.dumps(halflife).encode())


def main():
    shutil.rmtree(CORPUS, ignore_errors=True)
    out("safetensors", "tiny_f16", safetensors(weights(16)))
    out("safetensors", "tiny_f32_config", safetensors(weights(16), "F32") + SEP + hf_config(16).encode())
    out("hf_config", "tiny_llama.json", hf_config(16))
    out("hf_config", "tiny_llama3_rope.json", hf_config(16, rope_scaling={
        "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8}))
    out("hf_config", "tiny_qwen3.json", hf_config(16, architectures=["Qwen3ForCausalLM"], model_type="qwen3"))
    for arch in ("llama", "qwen2", "qwen3"):
        shutil.copy(os.path.join(ROOT, "tests", "fixtures", "hf", arch, "config.json"),
                    os.path.join(CORPUS, "hf_config", f"fixture_{arch}.json"))
    out("tokenizer_json", "bytelevel_nfc.json", bytelevel_tokenizer_json())
    out("tokenizer_json", "sentencepiece.json", sp_tokenizer_json() + SEP.decode() + TOKENIZER_CONFIG)
    out("gguf", "llama_gpt2.gguf", gguf_model("llama", "gpt2"))
    out("gguf", "qwen2_gpt2.gguf", gguf_model("qwen2", "gpt2"))
    out("gguf", "llama_spm.gguf", gguf_model("llama", "spm"))
    out("llama2c", "legacy_with_tokenizer", llama2c_legacy(272) + SEP + llama2c_tokenizer(272))
    out("llama2c", "v1_with_tokenizer", llama2c_v1(272) + SEP + llama2c_tokenizer(272))
    for name in ("tiny_v2.bin",):
        shutil.copy(os.path.join(ROOT, "tests", "fixtures", "llama2c", name), os.path.join(CORPUS, "llama2c", name))
    out("checkpoint", "three_tensors", checkpoint())
    out("hub_json", "model_info.json", model_info())
    out("hub_json", "model_info_min.json", '{"sha":"' + "f" * 40 + '","siblings":[]}')
    import_runs()
    graft = os.environ.get("GRAFT_BIN", os.path.join(ROOT, "build", "graft"))
    with tempfile.TemporaryDirectory() as work:
        out("student", "taylor_only", student(graft, work))
    for h in sorted(os.listdir(CORPUS)):
        files = os.listdir(os.path.join(CORPUS, h))
        size = sum(os.path.getsize(os.path.join(CORPUS, h, f)) for f in files)
        print(f"{h}: {len(files)} seeds, {size} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
