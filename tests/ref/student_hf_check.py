"""Loads a graft student folder in Hugging Face transformers (trust_remote_code,
the modeling file graft wrote) and compares its logits with graft's.

    python student_hf_check.py STUDENT IDS.json GRAFT_LOGITS.json [--device cpu|cuda]
                               [--backend torch|fla|auto] [--dtypes float32,bfloat16]

IDS.json: {"ids": [[...], ...]}; GRAFT_LOGITS.json: student_tool logits output
({"logits": [seq][t][vocab], "greedy": [...]}). Prints one line per check and
exits 1 on the first failure.

Tolerances, logits of every position and vocabulary entry:
- float32: max |difference| <= 2e-4 + 1e-4 x max |logit|. graft runs float32
  with OpenBLAS and double-precision RoPE angles, transformers float32 with its
  own summation order; the GDN recurrence is chunked on both sides (different
  chunk algebra). Measured 1e-5 .. 8e-5 on these students (printed), i.e. 10 to
  100x below the bound; a wrong option (conv direction, query scale, bias, RoPE
  pairing or scaling, qk-norm) moves logits by 1e-1 or more.
- bfloat16: relative RMS error rms(diff) / rms(graft's logits) <= 0.15. Weights
  and activations carry 8 bits of mantissa; transformers' own Llama / Qwen2
  teachers move by 2 % (relative RMS) from float32 to bfloat16 on these
  fixtures, the perturbed students (gates x25) by 1.6 .. 8.6 %, the real
  stories260K student by 0.4 %. A broken bfloat16 path (overflow, a dtype mix-up)
  gives errors of order 1. Option bugs are the float32 check's job.
Every comparison fails on NaN / Inf.

Also checks: the training loss (labels) equals graft's mean NLL, GDN
gradients are finite and non-zero, one AdamW step lowers the loss; greedy generate() with the cache (prefill, then one token at a
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
    from transformers import AutoConfig, AutoModel, AutoModelForCausalLM

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
        model, info = AutoModelForCausalLM.from_pretrained(
            a.student, trust_remote_code=True, dtype=dtype, gdn_backend=a.backend, output_loading_info=True
        )
        model = model.to(a.device).eval()
        for key in ("missing_keys", "unexpected_keys", "mismatched_keys"):
            if info.get(key):  # a weight left at its random init, or one the model ignored
                fail(f"{key} loading {a.student}: {sorted(info[key])[:6]}")
        if type(model).__name__ != "GraftStudentForCausalLM":
            fail(f"AutoModelForCausalLM gave {type(model).__name__}")
        n_gdn = sum(1 for layer in model.model.layers if layer.is_gdn)
        if n_gdn != len(cfg.graft_student["gdn_layers"]):
            fail(f"{n_gdn} GDN layers built, config lists {cfg.graft_student['gdn_layers']}")
        fp32 = dtype == torch.float32
        tol = 2e-4 + 1e-4 * scale if fp32 else 0.15
        worst = 0.0
        with torch.no_grad():
            for i, seq in enumerate(ids):
                x = torch.tensor([seq], device=a.device)
                out = model(input_ids=x, use_cache=False).logits[0].double().cpu()
                finite_or_fail(out, f"transformers logits ({dtype_name}, sequence {i})")
                diff = out - graft_logits[i]
                d = diff.abs().max().item() if fp32 else (diff.pow(2).mean().sqrt() / graft_logits[i].pow(2).mean().sqrt()).item()
                worst = max(worst, d)
                if not d <= tol:
                    fail(f"{dtype_name} sequence {i}: {'max |logit diff|' if fp32 else 'relative RMS error'} {d:.3g} > {tol:.3g}")
        print(f"ok {a.student} {dtype_name} ({a.device}, backend {a.backend}): "
              f"{'max |logit diff|' if fp32 else 'relative RMS error'} {worst:.3g} (tolerance {tol:.3g}, "
              f"max |logit| {scale:.3g}), transformers {transformers.__version__}, torch {torch.__version__}")

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
            elif len(got) != len(greedy):  # bfloat16 near-ties may pick other tokens: only that it runs
                fail(f"{dtype_name} generate() gave {len(got)} tokens, asked for {len(greedy)}")

        if dtype == torch.float32:  # AutoModel: the decoder without its head, same weights
            base, info = AutoModel.from_pretrained(a.student, trust_remote_code=True, gdn_backend=a.backend,
                                                   output_loading_info=True)
            if info.get("missing_keys") or info.get("unexpected_keys"):
                fail(f"AutoModel loading info {info}")
            x = torch.tensor([ids[0]], device=a.device)
            with torch.no_grad():
                d = (base.to(a.device).eval()(input_ids=x).last_hidden_state - model.model(input_ids=x).last_hidden_state)
            if not d.abs().max().item() == 0.0:
                fail(f"AutoModel hidden states differ from the causal LM's by {d.abs().max().item()}")
            del base

        if dtype == torch.float32:  # continuing in PyTorch: the loss, its gradients, one optimizer step
            x = torch.tensor([ids[0]], device=a.device)
            want = torch.nn.functional.cross_entropy(graft_logits[0][:-1], torch.tensor(ids[0][1:])).item()
            model.train()
            loss = model(input_ids=x, labels=x).loss
            if not (math.isfinite(loss.item()) and abs(loss.item() - want) <= 1e-4 * abs(want)):
                fail(f"training loss {loss.item()} != graft's mean NLL {want} (1e-4 relative)")
            loss.backward()
            grads = {n: p.grad for n, p in model.named_parameters() if "linear_attn" in n}
            bad = [n for n, g in grads.items() if g is None or not torch.isfinite(g).all()]
            if bad or not any(g.abs().max() > 0 for n, g in grads.items() if n.endswith("A_log")):
                fail(f"GDN gradients missing, non-finite or zero: {bad[:4]}")
            opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
            opt.step()
            opt.zero_grad()
            with torch.no_grad():
                after = model(input_ids=x, labels=x).loss.item()
            if not after < loss.item():
                fail(f"one AdamW step did not lower the loss ({loss.item()} -> {after})")
            print(f"ok training step: loss {loss.item():.5f} = graft's NLL {want:.5f}, lowered to {after:.5f}")
            model = AutoModelForCausalLM.from_pretrained(a.student, trust_remote_code=True, dtype=dtype,
                                                         gdn_backend=a.backend).to(a.device).eval()

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
