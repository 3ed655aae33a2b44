#!/usr/bin/env python3
"""The reference beside `graft recall`: transformers generate, greedy, on the
very prompts graft ran (its --dump: prompt ids, answers budget, graft's output),
one batch per cell (task, length, depth) as graft batches them, on the same
device. Prints one JSON object: per cell the samples, the score (RULER's
string_match_all, as graft scores), the seconds of generate() and graft's
seconds for the same cell (from graft's --json when given), and how many
outputs equal graft's.

  hf_generate.py MODEL.gguf DUMP.jsonl [--task T] [--device cuda] [--graft RECALL.json]

Reference tooling only (torch, transformers, gguf); graft never runs it.
"""
import argparse
import json
import os
import sys
import time
from collections import OrderedDict


def score(pred, answers):
    p = pred.lower()
    return sum(a.lower() in p for a in answers) / len(answers)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gguf")
    ap.add_argument("dump")
    ap.add_argument("--task", default="niah-number")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--graft", default=None)
    ap.add_argument("--dtype", default="bfloat16")
    a = ap.parse_args()
    out = {"reference": "transformers generate (greedy, batch = graft's cell)", "task": a.task}
    try:
        import torch
        import transformers
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as e:
        out["error"] = "no torch/transformers: %s" % e
        print(json.dumps(out))
        return 0
    out["versions"] = {"torch": torch.__version__, "transformers": transformers.__version__}
    cells = OrderedDict()
    for line in open(a.dump):
        r = json.loads(line)
        if r["task"] == a.task:
            cells.setdefault((r["task"], r["length"], r["depth"]), []).append(r)
    graft_cells = {}
    if a.graft and os.path.exists(a.graft):
        g = json.load(open(a.graft))
        out["graft_batch"] = g.get("batch")
        for c in g["cells"]:
            graft_cells[(c["task"], c["length"], c["depth"])] = c
    d, f = os.path.split(os.path.abspath(a.gguf))
    t0 = time.time()
    tok = AutoTokenizer.from_pretrained(d, gguf_file=f)
    model = AutoModelForCausalLM.from_pretrained(d, gguf_file=f, torch_dtype=getattr(torch, a.dtype),
                                                 attn_implementation="sdpa").to(a.device).eval()
    out["load_seconds"] = time.time() - t0
    out["dtype"] = a.dtype
    stops = [i for i in (tok.eos_token_id, tok.convert_tokens_to_ids("<|im_end|>")) if isinstance(i, int) and i >= 0]
    rows_out = []
    warm = True
    for (task, length, depth), rows in cells.items():
        ids = torch.tensor([r["ids"] for r in rows], device=a.device)
        max_new = rows[0]["max_new"]
        kw = dict(max_new_tokens=max_new, do_sample=False, eos_token_id=stops, pad_token_id=stops[0],
                  attention_mask=torch.ones_like(ids))
        with torch.no_grad():
            if warm:  # one warm-up generate (kernels, allocator) outside the timing
                model.generate(ids[:, -256:], **dict(kw, attention_mask=torch.ones_like(ids[:, -256:])))
                warm = False
            if a.device.startswith("cuda"):
                torch.cuda.synchronize()
            t = time.time()
            gen = model.generate(ids, **kw)
            if a.device.startswith("cuda"):
                torch.cuda.synchronize()
            secs = time.time() - t
        preds, n_gen = [], 0
        for row in gen[:, ids.shape[1]:].tolist():
            cut = [x for x in row]
            for i, x in enumerate(cut):
                if x in stops:
                    cut = cut[:i]
                    break
            preds.append(tok.decode(cut))
            n_gen += len(cut)
        sc = [score(p, r["answers"]) for p, r in zip(preds, rows)]
        c = {"task": task, "length": length, "depth": depth, "n": len(rows), "correct": sum(sc),
             "accuracy": sum(sc) / len(rows), "seconds": secs,
             "prompt_tokens": int(ids.numel()), "generated_tokens": n_gen,
             "same_as_graft": sum(p.strip() == r["pred"].strip() for p, r in zip(preds, rows))}
        gc = graft_cells.get((task, length, depth))
        if gc is not None:
            c["graft_seconds"] = gc.get("seconds")
            c["graft_accuracy"] = gc.get("accuracy")
        rows_out.append(c)
        print("hf %s %d depth %g: %.2f s (graft %s s), accuracy %.2f" % (task, length, depth, secs,
              gc.get("seconds") if gc else "?", c["accuracy"]), file=sys.stderr)
    out["cells"] = rows_out
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
