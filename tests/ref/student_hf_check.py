"""Loads a graft student folder in Hugging Face transformers (trust_remote_code,
the modeling file graft wrote) and compares its logits with graft's.

    python student_hf_check.py STUDENT IDS.json GRAFT_LOGITS.json [--device cpu|cuda]
                               [--backend torch|fla|auto] [--dtypes float32,bfloat16]

IDS.json: {"ids": [[...], ...]}; GRAFT_LOGITS.json: student_tool logits output
({"logits": [seq][t][vocab], "greedy": [...]}). Prints one line per check and
exits 1 on the first failure.

Tolerances (max |logit difference| over every position and vocabulary entry):
- float32: 2e-3 absolute + 1e-3 x max |logit|. graft runs float32 with OpenBLAS
  and double-precision RoPE angles; transformers float32 with its own summation
  order; the GDN recurrence (chunked in both, different chunk algebra on the
  PyTorch side) adds ~1e-6 relative per layer. Measured differences are ~1e-5
  on these models (printed); a wrong option (conv direction, query scale, bias,
  RoPE pairing, qk-norm) moves logits by 1e-1 or more.
- bfloat16: weights and activations rounded to 8 bits of mantissa (relative
  step 2^-8 = 0.4 %) through a few layers: 0.08 x max |logit| + 0.05. Measured
  differences are printed; a wrong option is far above this on the perturbed
  students. The bf16 run also has to keep the greedy continuation's first token.
Every comparison fails on NaN / Inf.

Also checks: greedy generate() with the cache (prefill, then one token at a
time through GraftStudentCache) gives the tokens graft's own cached decoding
gives (float32), and equals the argmax of full forwards; left-padded batches
give the same last-token logits as unpadded single sequences.
"""
import argparse
import json
import math
import sys

import torch


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def finite_or_fail(x, what):
    if not torch.isfinite(x).all():
        fail(f"{what}: non-finite values")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("student")
    ap.add_argument("ids")
    ap.add_argument("graft_logits")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--dtypes", default="float32,bfloat16")
    a = ap.parse_args()

    import transformers
    from transformers import AutoConfig, AutoModelForCausalLM

    torch.manual_seed(0)
    ids = json.load(open(a.ids))["ids"]
    ref = json.load(open(a.graft_logits))
    graft_logits = [torch.tensor(x, dtype=torch.float64) for x in ref["logits"]]
    for i, g in enumerate(graft_logits):
        finite_or_fail(g, f"graft logits of sequence {i}")
    scale = max(g.abs().max().item() for g in graft_logits)

    cfg = AutoConfig.from_pretrained(a.student, trust_remote_code=True)
    if type(cfg).__name__ != "GraftStudentConfig":
        fail(f"AutoConfig gave {type(cfg).__name__}")
    for dtype_name in a.dtypes.split(","):
        dtype = getattr(torch, dtype_name)
        model = AutoModelForCausalLM.from_pretrained(
            a.student, trust_remote_code=True, dtype=dtype, gdn_backend=a.backend
        ).to(a.device).eval()
        if type(model).__name__ != "GraftStudentForCausalLM":
            fail(f"AutoModelForCausalLM gave {type(model).__name__}")
        n_gdn = sum(1 for layer in model.model.layers if layer.is_gdn)
        if n_gdn != len(cfg.graft_student["gdn_layers"]):
            fail(f"{n_gdn} GDN layers built, config lists {cfg.graft_student['gdn_layers']}")
        tol = 2e-3 + 1e-3 * scale if dtype == torch.float32 else 0.05 + 0.08 * scale
        worst = 0.0
        with torch.no_grad():
            for i, seq in enumerate(ids):
                x = torch.tensor([seq], device=a.device)
                out = model(input_ids=x, use_cache=False).logits[0].double().cpu()
                finite_or_fail(out, f"transformers logits ({dtype_name}, sequence {i})")
                d = (out - graft_logits[i]).abs().max().item()
                worst = max(worst, d)
                if not d <= tol:
                    fail(f"{dtype_name} sequence {i}: max |logit diff| {d:.3g} > {tol:.3g}")
        print(f"ok {a.student} {dtype_name} ({a.device}, backend {a.backend}): max |logit diff| {worst:.3g} "
              f"(tolerance {tol:.3g}, max |logit| {scale:.3g}), transformers {transformers.__version__}")

        greedy = ref.get("greedy")
        if greedy:
            prompt = torch.tensor([ids[0]], device=a.device)
            with torch.no_grad():
                gen = model.generate(prompt, max_new_tokens=len(greedy), do_sample=False, num_beams=1,
                                     attention_mask=torch.ones_like(prompt), pad_token_id=0)
            got = gen[0, len(ids[0]):].tolist()
            if dtype == torch.float32:
                if got != greedy:
                    fail(f"float32 generate() {got} != graft's greedy {greedy}")
                # the cache path against full forwards
                seq = list(ids[0])
                with torch.no_grad():
                    for _ in range(len(greedy)):
                        seq.append(int(model(input_ids=torch.tensor([seq], device=a.device),
                                             use_cache=False).logits[0, -1].argmax()))
                if seq[len(ids[0]):] != got:
                    fail(f"generate() with the cache {got} != full-forward greedy {seq[len(ids[0]):]}")
                print(f"ok generate() with GraftStudentCache: {len(got)} greedy tokens equal graft's")
            elif got[0] != greedy[0]:
                fail(f"{dtype_name} generate() first token {got[0]} != graft's {greedy[0]}")

        if dtype == torch.float32 and len(ids) >= 2:  # left padding in a batch
            a_ids, b_ids = ids[0], ids[1][: max(2, len(ids[1]) // 2)]
            T = max(len(a_ids), len(b_ids))
            batch = torch.zeros(2, T, dtype=torch.long)
            mask = torch.zeros(2, T, dtype=torch.long)
            for r, s in enumerate((a_ids, b_ids)):
                batch[r, T - len(s):] = torch.tensor(s)
                mask[r, T - len(s):] = 1
            with torch.no_grad():
                padded = model(input_ids=batch.to(a.device), attention_mask=mask.to(a.device),
                               use_cache=False).logits[:, -1].double().cpu()
                single = torch.stack([model(input_ids=torch.tensor([s], device=a.device),
                                            use_cache=False).logits[0, -1].double().cpu() for s in (a_ids, b_ids)])
            finite_or_fail(padded, "left-padded logits")
            d = (padded - single).abs().max().item()
            if not d <= 1e-4 * max(1.0, scale):
                fail(f"left-padded batch differs from single sequences by {d:.3g}")
            print(f"ok left-padded batch equals single sequences (max |diff| {d:.3g})")
        del model


if __name__ == "__main__":
    main()
