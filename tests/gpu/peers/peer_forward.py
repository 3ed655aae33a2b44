"""Teacher forward through transformers at real shapes, random bf16 weights on the GPU:
  - with sdpa attention, logits for every position, no statistics (the speed to beat); and for
    qwen2.5-1.5b the base model alone (last hidden state, no logits: graft stats computes none);
  - the way the reference code reads the METHOD.md section 4 statistics: eager attention with
    output_attentions=True, then per-head mean distance and entropy reduced in torch from the
    [B, H, T, T] probability matrices.
One JSON line per figure (tests/gpu/bench/table.py). GRAFT_PEER_CASES=qwen2.5-1.5b:4:2048,... picks cases;
GRAFT_PEER_EAGER=0 leaves out the eager reference (minutes at T = 8192)."""
import os

import torch

from peer_common import DEVICE, SMOKE, dims, emit, forward_flops_per_token, free, load_config, log, random_model, skip, time_ms

CASES = [("qwen2.5-1.5b", 4, 2048), ("qwen2.5-1.5b", 1, 8192), ("qwen3-8b", 1, 2048)]


def cases():
    env = os.environ.get("GRAFT_PEER_CASES")
    if env:
        return [(m, int(b), int(t)) for m, b, t in (c.split(":") for c in env.split(","))]
    if SMOKE:
        return [("qwen2.5-1.5b", 2, 64), ("qwen2.5-1.5b", 1, 256), ("qwen3-8b", 1, 64)]  # bench_cuda_model's smoke
    return CASES


def attention_stats(attentions, T):
    """Per layer and head: mean over (sequence, query) of sum_j A dist and of -sum_j A log(max(A, 1e-10))."""
    i = torch.arange(T, device=attentions[0].device)
    dist = (i[:, None] - i[None, :]).float()
    dist = torch.where(dist > 0, dist, torch.full_like(dist, 0.5))  # diagonal 0.5; j > i has A = 0
    out = []
    for A in attentions:  # [B, H, T, T]
        A = A.float()
        d = (A * dist).sum(-1).mean(dim=(0, 2))
        e = -(A * torch.log(A.clamp(min=1e-10))).sum(-1).mean(dim=(0, 2))
        out.append(torch.stack([d, e]))
        del A
    return torch.stack(out)  # [L, 2, H]


def main():
    for name, B, T in cases():
        cfg = load_config(name)
        d = dims(cfg)
        flops = forward_flops_per_token(d, T) * B * T
        tag = f"{name} B {B} T {T}"
        try:
            m = random_model(cfg, "sdpa").eval()
            ids = torch.randint(0, d["V"], (B, T), device=DEVICE)
            with torch.no_grad():
                ms = time_ms(lambda: m(input_ids=ids).logits)
            emit("peer_forward", f"transformers sdpa {tag} logits, no stats", ms=ms, tok_s=B * T / (ms * 1e-3), flops=flops)
            log(f"sdpa {tag}: {ms:.1f} ms")
            if name == "qwen2.5-1.5b":
                with torch.no_grad():
                    ms = time_ms(lambda: m.model(input_ids=ids).last_hidden_state)
                emit("peer_forward", f"transformers sdpa {tag} hidden states, no stats", ms=ms,
                     tok_s=B * T / (ms * 1e-3), flops=flops - 2 * d["D"] * d["V"] * B * T)
                log(f"sdpa {tag} hidden states: {ms:.1f} ms")
        except torch.cuda.OutOfMemoryError as e:
            skip("peer_forward", f"transformers sdpa {tag}", f"out of memory: {e}")
            m = None
        free()
        if os.environ.get("GRAFT_PEER_EAGER", "1") == "0":
            del m
            free()
            continue
        try:
            if m is None:
                m = random_model(cfg, "eager").eval()
            else:
                m.set_attn_implementation("eager")

            def ref():
                o = m(input_ids=ids, output_attentions=True)
                s = attention_stats(o.attentions, T)
                return o.logits, s

            with torch.no_grad():
                ms = time_ms(ref, warmup=1, reps=3)
            emit("peer_forward", f"transformers eager+output_attentions+stats {tag}", ms=ms, tok_s=B * T / (ms * 1e-3),
                 flops=flops)
            log(f"eager+stats {tag}: {ms:.1f} ms")
        except torch.cuda.OutOfMemoryError as e:
            skip("peer_forward", f"transformers eager+output_attentions+stats {tag}", f"out of memory: {e}")
        del m
        free()


if __name__ == "__main__":
    main()
