"""Decoding through transformers generate(), the peer of `graft bench-decode`:
the same contexts, batches and decoded tokens, greedy, one JSON line per
(model, context, batch) with the fields of graft's points.

  python3 peer_decode.py STUDENT_DIR... [--teacher] [--contexts 1k,8k] [--batch 1,16] [--tokens 64]

Students load through the modeling file graft wrote beside their weights
(trust_remote_code; GDN layers decode through its token step, prefill through
flash-linear-attention when importable). --teacher also runs the teacher of
the first student: every student folder keeps all layers' attention tensors
(docs/student-format.md "Teacher tensors"), so a copy of its config with the
teacher's model type loads it in transformers' own Llama / Qwen2 / Qwen3
classes with sdpa attention.

Timing: one generate(max_new_tokens = tokens + 1) per point, after a warm-up
generate at the same batch and a short context; a logits processor (called
once per step, before each token is picked) synchronizes CUDA and stamps the
time: prefill = from the call to the first stamp (the prompt's forward),
decode = from the first stamp to the last (tokens forwards of one token per
sequence, each with its pick), as graft times them. Memory
per sequence: the bytes of the cache tensors generate() returns (keys / values
of attention layers; GDN state and conv history), divided by the batch, for
context + tokens positions (graft's figure: context + tokens + 1, its warm-up
step); peak_bytes: torch's peak allocation of the
whole generate. GRAFT_PEER_SMOKE=1: the CPU, float32 (a check of the script)."""
import argparse
import json
import os
import sys
import tempfile
import time

import torch

SMOKE = os.environ.get("GRAFT_PEER_SMOKE") == "1"
DEVICE = "cpu" if SMOKE else "cuda"
DTYPE = torch.float32 if SMOKE else torch.bfloat16
TEACHER_CLASSES = {"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM", "qwen3": "Qwen3ForCausalLM"}


def sizes(s):
    out = []
    for part in s.split(","):
        part = part.strip()
        out.append(int(part[:-1]) * 1024 if part[-1:] in "kK" else int(part))
    return out


def log(msg):
    print(f"peer_decode: {msg}", file=sys.stderr, flush=True)


def sync():
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def teacher_folder(student_dir, tmp):
    """A folder that loads the student's teacher in transformers' own class."""
    cfg = json.load(open(os.path.join(student_dir, "config.json")))
    gs = cfg.pop("graft_student")
    mt = gs["teacher_model_type"]
    for k in ("auto_map",):
        cfg.pop(k, None)
    cfg["model_type"] = mt
    cfg["architectures"] = [TEACHER_CLASSES[mt]]
    if mt == "qwen2":
        cfg["use_sliding_window"] = False
    out = os.path.join(tmp, "teacher")
    os.makedirs(out)
    json.dump(cfg, open(os.path.join(out, "config.json"), "w"))
    os.symlink(os.path.abspath(os.path.join(student_dir, "model.safetensors")), os.path.join(out, "model.safetensors"))
    return out


def load(folder, teacher):
    from transformers import AutoModelForCausalLM

    kw = dict(attn_implementation="sdpa") if teacher else dict(trust_remote_code=True)
    try:
        m = AutoModelForCausalLM.from_pretrained(folder, dtype=DTYPE, **kw)
    except TypeError:  # transformers 4.x
        m = AutoModelForCausalLM.from_pretrained(folder, torch_dtype=DTYPE, **kw)
    return m.to(DEVICE).eval()


def tensors_of(cache):
    """(kind, tensor) of every tensor a generate() cache holds: 'kv' for keys / values, 'state' else."""
    if hasattr(cache, "layers") and cache.layers and isinstance(cache.layers[0], dict):  # GraftStudentCache
        for layer in cache.layers:
            for key, t in layer.items():
                yield ("kv" if key in ("k", "v") else "state"), t
        return
    if hasattr(cache, "layers"):  # transformers 5 DynamicCache: layers with .keys / .values
        for layer in cache.layers:
            for t in (getattr(layer, "keys", None), getattr(layer, "values", None)):
                if isinstance(t, torch.Tensor):
                    yield "kv", t
        return
    for t in list(getattr(cache, "key_cache", [])) + list(getattr(cache, "value_cache", [])):  # 4.x
        yield "kv", t


def cache_bytes(cache):
    kv = st = 0
    for kind, t in tensors_of(cache):
        n = t.numel() * t.element_size()
        if kind == "kv":
            kv += n
        else:
            st += n
    return kv, st


class Stamps:
    """A logits processor that only records when each step's logits are ready."""

    def __init__(self):
        self.t = []

    def __call__(self, input_ids, scores):
        sync()
        self.t.append(time.perf_counter())
        return scores


def generate(m, ids, new):
    from transformers import LogitsProcessorList

    stamps = Stamps()
    sync()
    t0 = time.perf_counter()
    with torch.no_grad():
        out = m.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=new, min_new_tokens=new,
                         do_sample=False, num_beams=1, use_cache=True, return_dict_in_generate=True, pad_token_id=0,
                         logits_processor=LogitsProcessorList([stamps]))
    if len(stamps.t) != new:
        raise RuntimeError(f"generate took {len(stamps.t)} steps, not {new}")
    return stamps.t[0] - t0, stamps.t[-1] - stamps.t[0], out


def cache_of(out):
    c = getattr(out, "past_key_values", None)
    return c if c is not None else getattr(out, "cache", None)


def point(m, V, ctx, B, tokens, seed):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, V, (B, ctx), generator=g).to(DEVICE)
    generate(m, ids[:, : min(ctx, 256)], 3)  # warm-up at this batch
    if DEVICE == "cuda":
        torch.cuda.reset_peak_memory_stats()
    pre_s, dec_s, out = generate(m, ids, tokens + 1)
    peak = torch.cuda.max_memory_allocated() if DEVICE == "cuda" else 0
    kv, st = cache_bytes(cache_of(out))
    return {
        "context": ctx, "batch": B, "tokens": tokens,
        "prefill_s": pre_s, "prefill_tok_s": B * ctx / pre_s,
        "decode_s": dec_s, "decode_tok_s": B * tokens / dec_s, "ms_per_step": 1e3 * dec_s / tokens,
        "memory_per_seq": {"kv_cache": kv // B, "gdn_state": st // B, "total": (kv + st) // B},
        "peak_bytes": peak,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("students", nargs="+")
    ap.add_argument("--teacher", action="store_true", help="also the teacher of the first student (sdpa)")
    ap.add_argument("--contexts", default="1k,8k,32k")
    ap.add_argument("--batch", default="1,16")
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    import transformers

    ctxs, batches = sizes(a.contexts), sizes(a.batch)
    with tempfile.TemporaryDirectory() as tmp:
        runs = ([("teacher", teacher_folder(a.students[0], tmp), True)] if a.teacher else []) + \
               [("student", s, False) for s in a.students]
        for kind, folder, is_teacher in runs:
            m = load(folder, is_teacher)
            V = m.config.vocab_size
            name = a.students[0] if is_teacher else folder
            for ctx in ctxs:
                for B in batches:
                    r = {"impl": "transformers", "version": transformers.__version__, "kind": kind, "model": name,
                         "device": DEVICE, "dtype": str(DTYPE).replace("torch.", "")}
                    try:
                        r.update(point(m, V, ctx, B, a.tokens, a.seed))
                    except torch.cuda.OutOfMemoryError as e:
                        r.update({"context": ctx, "batch": B, "tokens": a.tokens, "skipped": f"out of memory: {e}"[:200]})
                        torch.cuda.empty_cache()
                    print(json.dumps(r), flush=True)
                    log(f"{kind} {name} ctx {ctx} B {B}: " +
                        (f"{r['decode_tok_s']:.1f} tok/s decode" if "decode_tok_s" in r else r["skipped"]))
            del m
            if DEVICE == "cuda":
                torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
