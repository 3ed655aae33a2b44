/* What the attention kernels (forward, backward; tensor-core and exact SIMT
 * versions) share: parameters, and the per-row statistics of METHOD.md
 * section 4 finished from the streaming sums. */
#ifndef GRAFT_BACKEND_CUDA_ATTENTION_CUH
#define GRAFT_BACKEND_CUDA_ATTENTION_CUH

#include "backend/cuda/cuda_attention_cfg.h"
#include "backend/cuda/cuda_ops.cuh"

#define LOG2E_F 1.4426950408889634f
#define LN2_F 0.6931471805599453f
/* A masked score: finite, so 0 * score stays 0 in the statistic sums, and
 * 2^(score - max) is exactly 0 against any real row maximum. */
#define MASKED_SCORE (-1e30f)

/* Causal GQA attention over [B, T, H, hd] queries and [B, S, KV, hd] keys/values. */
struct attn_fwd_params {
    const void *q, *k, *v;
    void *out;
    float *lse;     /* [B, H, T] or null */
    double *stats;  /* [H, GF_STAT_COUNT] or null: statistics wanted */
    double *stat_parts; /* [P, H * GF_STAT_COUNT]: the kernel's per-block (or per-row) sums, added to stats after */
    int B, T, H, KV, G, hd, pos0, S;
    float scale_log2; /* hd^-1/2 log2(e): scores in log2 units */
    /* the tensor-core kernel's plan (attn_fwd_mma_plan) */
    int rows;       /* query rows per (sequence, KV head) in the packed order (t, head of the group): T * G */
    int cfg;        /* block shape: an index into cuda_attention_cfg.h's list */
    int n_tiles;    /* row tiles per (sequence, KV head) */
    int n_split, kt_per_split; /* key tiles cut into n_split ranges (1: no split) */
    float *part_o, *part_s; /* split partials: [B, KV, rows, n_split] x (hd | 6 scalars) */
};

/* Row statistics from streaming sums over keys j >= 1 (key 0 apart: the
 * sink share, and a distance without it), all relative to the final row
 * maximum m and in log2 units:
 *   l = sum_{j>=1} e_j,  e_j = 2^(x_j - m)
 *   w = sum_{j>=1} e_j (x_j - m)
 *   d = sum_{j>=1} e_j (i - j)          (the diagonal adds 0.5 e_i below)
 *   x0 = x_0, xd = x_i (the diagonal's score; any value when i = 0).
 * With p0 = 2^(x0 - m) and L = l + p0 (the full normalizer):
 *   entropy = ln L - sum_j (e_j / L) ln e_j = ln2 (log2 L - (w + p0 (x0 - m)) / L)
 *   distance = (d + 0.5 e_i [i >= 1] + p0 max(i, 0.5)) / L
 *   nosink = (d + 0.5 e_i) / l (0.5 when i = 0 or when no key past 0 has weight)
 *   sink = p0 / L.
 * The reference clamps A at 1e-10 inside the log; that changes the entropy by
 * at most 3.8e-11 per key (A (ln(1/A) - 23.03) peaks at A = e^-24), so it is
 * not reproduced. */
struct attn_row_stats {
    float dist, ent, nosink, sink, L;
};

__device__ __forceinline__ attn_row_stats attn_finish_row(float m, float l, float w, float d, float x0, float xd,
                                                          int i) {
    attn_row_stats r;
    const float y0 = x0 - m, p0 = exp2f(y0);
    const float ed = i >= 1 ? exp2f(xd - m) : 0.0f;
    r.L = l + p0;
    const float invL = 1.0f / r.L;
    r.ent = LN2_F * (log2f(r.L) - (w + p0 * y0) * invL);
    r.dist = (d + 0.5f * ed + p0 * (i >= 1 ? (float)i : 0.5f)) * invL;
    r.nosink = (i >= 1 && l > 0) ? (d + 0.5f * ed) / l : 0.5f;
    r.sink = p0 * invL;
    return r;
}

/* Launchers (cuda_attention_fwd.cu, cuda_attention_simt.cu). The tensor-core
 * kernel takes bf16 with head dim 64 or 128 and 16-byte aligned views
 * (attn_fwd_mma_takes); each says how many rows of stat_parts it writes. */
bool attn_fwd_mma_takes(gf_backend *be, const attn_fwd_params &p);
void attn_fwd_mma_plan(gf_backend *be, attn_fwd_params &p); /* rows, shape, tiles, split */
size_t attn_fwd_mma_parts(const attn_fwd_params &p);
size_t attn_fwd_split_bytes(const attn_fwd_params &p);     /* scratch for split partials (0: none) */
void attn_fwd_mma_launch(gf_backend *be, const attn_fwd_params &p);
size_t attn_fwd_simt_parts(const attn_fwd_params &p);
void attn_fwd_simt_launch(gf_backend *be, const attn_fwd_params &p);

struct attn_bwd_params {
    const void *q, *k, *v, *dout;
    const float *lse;  /* [B, H, T] */
    const float *Dr;   /* [B, T, H]: rowsum(dout * out) */
    float *dq_acc;     /* [B, T, H, hd] fp32, zeroed: unscaled dS K sums */
    float *dk_acc, *dv_acc; /* [B, T, KV, hd] fp32, zeroed: dK (unscaled) and dV summed over the query group */
    void *dq, *dk, *dv;
    int B, T, H, KV, G, hd;
    float scale, scale_log2;
};
/* The tensor-core backward: mma.sync, or wgmma (cuda_attention_bwd_wg.cu: one warpgroup a block of
 * 64 keys, or with two_groups two a block of 128 where the head dim is 128), as ATTN_BWD_* says
 * (cuda_attention_cfg.h); either returns false where it does not apply (the SIMT kernel then runs). */
bool attn_bwd_mma_launch(gf_backend *be, const attn_bwd_params &p);
bool attn_bwd_wg_launch(gf_backend *be, const attn_bwd_params &p, bool two_groups);
void attn_bwd_simt_launch(gf_backend *be, const attn_bwd_params &p);

#endif
