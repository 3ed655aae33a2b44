/* Causal GQA attention through the CUDA backend (bf16, tensor cores) at real
 * shapes on random q, k, v: forward with the METHOD.md section 4 statistics,
 * forward with only the log-sum-exp (training), forward alone, backward, and
 * one decode step over a long cache. One JSON line per figure. Then every
 * block shape the forward is built in (cuda_attention_cfg.h, forced through gf_backend_variants)
 * at qwen2.5-1.5b 4 x 2048 and 1 x 8192, each with "vs_cfg0": its time over
 * cfg 0's (issue 11's shape) in this same run (below 1: faster).
 *
 * FLOPs are the causal half only (what the work is, not what a dense kernel
 * would do): forward 4 hd per (query, visible key) pair and head (QK^T and
 * PV), backward 10 hd (S again, dP, dV, dK, dQ).
 *   build/gpu/bench_attention */
#include "bench_gpu.h"

#include "backend/cuda/cuda_attention_cfg.h"

typedef struct {
    gf_backend *be;
    gf_buf q, k, v, out, lse, stats, dout, dq, dk, dv;
    gf_attn_shape s;
    int mode; /* 0 fwd + stats + lse, 1 fwd + lse, 2 fwd, 3 bwd */
} attn_ud;

static void attn_fn(void *p) {
    attn_ud *u = p;
    switch (u->mode) {
    case 0: be_attention(u->be, u->out, u->lse, u->stats, u->q, u->k, u->v, &u->s); break;
    case 1: be_attention(u->be, u->out, u->lse, gf_none(), u->q, u->k, u->v, &u->s); break;
    case 2: be_attention(u->be, u->out, gf_none(), gf_none(), u->q, u->k, u->v, &u->s); break;
    default:
        be_attention_backward(u->be, u->dq, u->dk, u->dv, u->dout, u->out, u->lse, u->q, u->k, u->v, &u->s);
    }
}

/* Times the modes (backward too when asked) at one shape; times[mode] gets each time when not null; ref[mode],
 * when not null, is cfg 0's time at the shape, reported as "vs_cfg0". */
static void run(gf_backend *be, const bench_ceilings *c, const char *model, int B, int T, int H, int KV, int hd,
                int pos0, bool backward, const double *ref, double *times) {
    attn_ud u;
    memset(&u, 0, sizeof u);
    u.be = be;
    u.s = (gf_attn_shape){B, T, H, KV, hd, pos0, pos0 + T};
    const size_t nq = (size_t)B * T * H * hd, nkv = (size_t)B * (pos0 + T) * KV * hd;
    if (be_alloc(be, &u.q, nq, be_act(be)) < 0 || be_alloc(be, &u.k, nkv, be_act(be)) < 0 ||
        be_alloc(be, &u.v, nkv, be_act(be)) < 0 || be_alloc(be, &u.out, nq, be_act(be)) < 0 ||
        be_alloc(be, &u.lse, (size_t)B * H * T, GF_F32) < 0 || be_alloc(be, &u.stats, (size_t)H * GF_STAT_COUNT, GF_F64) < 0)
        bench_die(be, "alloc");
    bench_fill(be, u.q, nq, 2.0f, 11);
    bench_fill(be, u.k, nkv, 2.0f, 12);
    bench_fill(be, u.v, nkv, 1.0f, 13);
    be_zero(be, u.stats, (size_t)H * GF_STAT_COUNT);
    /* visible (query, key) pairs per head and sequence */
    const double pairs = (double)T * pos0 + (double)T * (T + 1) / 2.0;
    const double fwd_flops = 4.0 * hd * pairs * B * H;
    const double qkvo_bytes = 2.0 * (2.0 * nq + 2.0 * nkv);
    char what[320];
    static const char *mode_name[4] = {"fwd+stats+lse", "fwd+lse", "fwd", "bwd"};
    for (u.mode = 0; u.mode < (backward ? 4 : 3); u.mode++) {
        if (u.mode == 3) {
            if (be_alloc(be, &u.dout, nq, be_act(be)) < 0 || be_alloc(be, &u.dq, nq, be_act(be)) < 0 ||
                be_alloc(be, &u.dk, nkv, be_act(be)) < 0 || be_alloc(be, &u.dv, nkv, be_act(be)) < 0)
                bench_die(be, "alloc");
            bench_fill(be, u.dout, nq, 1.0f, 14);
            be_attention(be, u.out, u.lse, gf_none(), u.q, u.k, u.v, &u.s); /* the backward's inputs */
        }
        const double t = bench_time(be, attn_fn, &u, 7);
        const double flops = u.mode == 3 ? 2.5 * fwd_flops : fwd_flops;
        const double bytes = u.mode == 3 ? 2.0 * qkvo_bytes : qkvo_bytes;
        snprintf(what, sizeof what, "%s %s B %d T %d pos0 %d H %d/%d hd %d", model, mode_name[u.mode], B, T, pos0, H,
                 KV, hd);
        char extra[128];
        int n = snprintf(extra, sizeof extra, ",\"tok_s\":%.0f,\"of_roofline\":%.3f", (double)B * T / t,
                         flops / t / 1e12 / c->gemm_tflops);
        if (ref) snprintf(extra + n, sizeof extra - n, ",\"vs_cfg0\":%.3f", t / ref[u.mode]);
        if (times) times[u.mode] = t;
        bench_report("attention", what, t, flops, bytes, c, extra);
    }
    if (be_sync(be) < 0) bench_die(be, "run");
    be_free(be, &u.q), be_free(be, &u.k), be_free(be, &u.v), be_free(be, &u.out), be_free(be, &u.lse),
        be_free(be, &u.stats), be_free(be, &u.dout), be_free(be, &u.dq), be_free(be, &u.dk), be_free(be, &u.dv);
}

int main(void) {
    gf_backend *be = bench_open_or_skip();
    fprintf(stderr, "bench_attention on %s\n", be_name(be));
    const bench_ceilings c = bench_measure_ceilings(be);
    /* smoke: the same cases with T / 32 and a head dim of 64 */
    const int sT = bench_smoke_mode ? 32 : 1, hd = bench_smoke_mode ? 64 : 128;
    run(be, &c, "qwen2.5-1.5b", 4, 2048 / sT, 12, 2, hd, 0, true, NULL, NULL);
    run(be, &c, "qwen2.5-1.5b", 1, 8192 / sT, 12, 2, hd, 0, true, NULL, NULL);
    run(be, &c, "qwen3-8b", 1, 2048 / sT, 32, 8, hd, 0, true, NULL, NULL);
    run(be, &c, "qwen3-8b", 4, 2048 / sT, 32, 8, hd, 0, true, NULL, NULL);
    run(be, &c, "qwen2.5-1.5b decode", 1, 1, 12, 2, hd, 8192 / sT - 1, false, NULL, NULL);
    run(be, &c, "qwen2.5-1.5b decode", 16, 1, 12, 2, hd, 2048 / sT - 1, false, NULL, NULL);
    be_close(be);
    if (bench_smoke_mode) return 0; /* the variants below are CUDA kernel settings */
    /* every block shape, cfg 0 first (issue 11's shape: its times are the reference), at the two shapes of
     * issue 11; the names say which the product takes with statistics and without */
#define CFG_TEXT(i, nw, sl, bc, ns, minb, fold, ov, text) text,
#define CFG_ID(i, nw, sl, bc, ns, minb, fold, ov, text) (i),
    static const char *const cfg_text[ATTN_FWD_CONFIGS] = {ATTN_FWD_ALL_CONFIG_LIST(CFG_TEXT)};
    static const int cfg_id[ATTN_FWD_CONFIGS] = {ATTN_FWD_ALL_CONFIG_LIST(CFG_ID)};
#undef CFG_TEXT
#undef CFG_ID
    static const int shape_B[2] = {4, 1}, shape_T[2] = {2048, 8192};
    double ref[2][4];
    for (int k = 0; k < ATTN_FWD_CONFIGS; k++) {
        const int cfg = cfg_id[k]; /* the list starts with cfg 0 */
        const char *role = cfg == ATTN_FWD_HOPPER_STATS && cfg == ATTN_FWD_HOPPER_PLAIN ? ", default on Hopper"
                           : cfg == ATTN_FWD_HOPPER_STATS ? ", default on Hopper with stats"
                           : cfg == ATTN_FWD_HOPPER_PLAIN ? ", default on Hopper without stats"
                           : cfg == ATTN_FWD_DEFAULT_STATS                              ? ", default with stats elsewhere"
                           : cfg == ATTN_FWD_DEFAULT_PLAIN ? ", default without stats elsewhere"
                                                           : "";
        char model[200];
        const gf_backend_variants v = {.attn_cfg = 1 + cfg};
        be = bench_open_variants_or_skip(&v);
        for (int sh = 0; sh < 2; sh++) {
            snprintf(model, sizeof model, "qwen2.5-1.5b [cfg %d%s: %s]", cfg, role, cfg_text[k]);
            run(be, &c, model, shape_B[sh], shape_T[sh], 12, 2, 128, 0, false, k == 0 ? NULL : ref[sh],
                k == 0 ? ref[sh] : NULL);
        }
        be_close(be);
    }
    /* the attention backward's kernels forced one by one (the "bwd" rows above ran the chosen one:
     * two warpgroups on compute capability 9.0, mma.sync elsewhere) */
    static const struct {
        int kind;
        const char *model;
    } bwd_kernels[] = {{ATTN_BWD_MMA, "qwen2.5-1.5b [attention backward on mma.sync]"},
                       {ATTN_BWD_WGMMA, "qwen2.5-1.5b [attention backward on wgmma]"},
                       {ATTN_BWD_WGMMA2, "qwen2.5-1.5b [attention backward on two warpgroups]"}};
    for (size_t k = 0; k < sizeof bwd_kernels / sizeof bwd_kernels[0]; k++) {
        const gf_backend_variants v = {.attn_bwd = bwd_kernels[k].kind};
        be = bench_open_variants_or_skip(&v);
        for (int sh = 0; sh < 2; sh++)
            run(be, &c, bwd_kernels[k].model, shape_B[sh], shape_T[sh], 12, 2, 128, 0, true, NULL, NULL);
        be_close(be);
    }
    const gf_backend_variants no_split = {.attn_split = 1};
    be = bench_open_variants_or_skip(&no_split);
    run(be, &c, "qwen2.5-1.5b decode [no split]", 1, 1, 12, 2, 128, 8191, false, NULL, NULL);
    be_close(be);
    return 0;
}
