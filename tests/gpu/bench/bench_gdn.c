/* Benchmark of the CUDA GDN ops in bf16 at the qwen2.5-1.5b width (D 1536 =
 * 12 heads x 128), through backend.h on the CUDA backend: the core forward
 * (with checkpoints), the core backward, and the whole layer forward +
 * backward (be_linear projections, prep, core, gated norm and their
 * backward); at T 2048 also the element-wise ops alone (prep, gated norm,
 * forward and backward, each next to its byte floor). T = 2048 and 8192
 * with B x T = 32768 tokens (GRAFT_BENCH_GDN_TOKENS changes it;
 * GRAFT_BENCH_GDN_SLAB=16|32 forces the sequential passes' slab height,
 * GRAFT_BENCH_GDN_GENERAL=1 the general kernels of other head dims). The
 * checkpoint keeps the WY products where the backend does for graft's layers (be_gdn_keeps_wy);
 * the core backward and the layer are also timed without them ("WY recomputed").
 * Random data (never zeros), timed by bench_time (bench_gpu.h: warm-up, the
 * median of 7 batches). One JSON line per figure; FLOP counts as
 * in docs/cuda-gdn.md. Exit 77 without a GPU. */
#include "bench_gpu.h"

static gf_backend *be;

/* A new buffer of n values uniform in [lo, hi). */
static gf_buf buf(size_t n, gf_dtype t, unsigned seed, float lo, float hi) {
    gf_buf b;
    if (be_alloc(be, &b, n, t) < 0) bench_die(be, "alloc");
    bench_fill_range(be, b, n, lo, hi, seed);
    return b;
}

typedef struct {
    int B, T, D, H, d, C, W, Q;
    gf_gdn_shape s;
    gf_gdn_dims dims;
    gf_buf x, Win, Wo, proj, pre, q, k, v, g, beta, o, ck, z, rstd, y;
    gf_buf convw, alog, dtb, wn;
    gf_buf dy, dz, d_o, dproj, dq, dk, dv, dg, db, dx, dWin, dWo, dwn, dal, ddt, dconv;
} L;

static void core_fwd(void *u) {
    L *l = u;
    be_gdn_core(be, l->o, l->ck, gf_none(), l->q, l->k, l->v, l->g, l->beta, &l->s);
}
static void core_bwd(void *u) {
    L *l = u;
    be_gdn_core_backward(be, l->dq, l->dk, l->dv, l->dg, l->db, l->d_o, l->q, l->k, l->v, l->g, l->beta, l->ck, &l->s);
}
/* The layer's element-wise ops alone (cuda_gdn_layer.cu), each timed next to
 * its byte floor (docs/cuda-gdn.md, "Layer element-wise ops"). */
static void prep_fwd(void *u) {
    L *l = u;
    be_gdn_prep(be, l->pre, l->q, l->k, l->v, l->g, l->beta, gf_none(), l->proj, gf_none(), l->convw, l->alog, l->dtb,
                &l->dims);
}
static void prep_bwd(void *u) {
    L *l = u;
    be_gdn_prep_backward(be, l->dproj, gf_none(), l->dconv, l->dal, l->ddt, l->dq, l->dk, l->dv, l->dg, l->db, l->proj,
                         l->pre, l->q, l->k, l->g, l->beta, l->convw, l->alog, l->dtb, &l->dims);
}
static void norm_fwd(void *u) {
    L *l = u;
    be_gdn_gated_norm(be, l->z, l->rstd, l->o, l->proj, l->wn, &l->dims);
}
static void norm_bwd(void *u) {
    L *l = u;
    be_gdn_gated_norm_backward(be, l->d_o, l->dproj, l->dwn, l->dz, l->o, l->rstd, l->proj, l->wn, &l->dims);
}
static void layer_fwd(L *l) {
    int N = l->B * l->T, hv = l->H * l->d;
    be_linear(be, l->proj, l->x, l->Win, gf_none(), N, l->D, l->W, false);
    be_gdn_prep(be, l->pre, l->q, l->k, l->v, l->g, l->beta, gf_none(), l->proj, gf_none(), l->convw, l->alog, l->dtb,
                &l->dims);
    be_gdn_core(be, l->o, l->ck, gf_none(), l->q, l->k, l->v, l->g, l->beta, &l->s);
    be_gdn_gated_norm(be, l->z, l->rstd, l->o, l->proj, l->wn, &l->dims);
    be_linear(be, l->y, l->z, l->Wo, gf_none(), N, hv, l->D, false);
}
static void layer_fwd_bwd(void *u) {
    L *l = u;
    int N = l->B * l->T, hv = l->H * l->d;
    layer_fwd(l);
    /* dz = dy Wo, dWo += dy^T z */
    be_linear_backward(be, l->dz, l->dWo, gf_none(), l->dy, l->z, l->Wo, N, hv, l->D, false, true);
    be_gdn_gated_norm_backward(be, l->d_o, l->dproj, l->dwn, l->dz, l->o, l->rstd, l->proj, l->wn, &l->dims);
    be_gdn_core_backward(be, l->dq, l->dk, l->dv, l->dg, l->db, l->d_o, l->q, l->k, l->v, l->g, l->beta, l->ck, &l->s);
    be_gdn_prep_backward(be, l->dproj, gf_none(), l->dconv, l->dal, l->ddt, l->dq, l->dk, l->dv, l->dg, l->db, l->proj,
                         l->pre, l->q, l->k, l->g, l->beta, l->convw, l->alog, l->dtb, &l->dims);
    /* dx = dproj W_in, dW_in += dproj^T x */
    be_linear_backward(be, l->dx, l->dWin, gf_none(), l->dproj, l->x, l->Win, N, l->D, l->W, false, true);
}
static void layer_fwd_only(void *u) { layer_fwd(u); }

/* Bytes the CUDA core kernels as built move through device memory, per (sequence, head,
 * chunk) summed (docs/cuda-gdn.md, "What 2x FLA leaves for the core"): a C x d tile, a d x d
 * state and A (C x C) in ACT (a bytes); the f32 rows (gam, g, beta, dg, dbeta) left out, and
 * the sequential passes' re-reads of k, q, W from L2 counted once.
 *   forward: WY (k, v in; W, U out, A too when kept) 4 tiles [+ A]; the state pass (W, U, k
 *     in; V', the state entering out) 4 tiles + a state; outputs (q, k, V', the state in; o
 *     out) 4 tiles + a state
 *   backward, WY kept: V' (q, k, dO in; the local dV' out) 4 tiles; the dh pass (k, q, W, dO,
 *     dV' in and out, the state in, dh out) 6 tiles + 2 states; the local backward (q, k, v,
 *     dO, V', dV', A, the state, dh in; dq, dk, dv out) 9 tiles + A + 2 states
 *   backward, WY recomputed: WY again (4 tiles + A), and the V' kernel forms V' as well (W,
 *     U and the state in, V' out: 3 tiles + a state more)
 * The time these take at the copy ceiling is each core figure's "flow_ms": a floor for the
 * kernels' data flow, where "floor_ms" is one for any data flow (inputs and outputs only). */
static double core_flow_bytes(const L *l, double a, bool fwd, bool kept) {
    const double tile = (double)l->C * l->d * a, state = (double)l->d * l->d * a, A = (double)l->C * l->C * a;
    const double chunks = (double)l->B * l->H * ((l->T + l->C - 1) / l->C);
    double per = fwd ? 12 * tile + 2 * state + (kept ? A : 0) : 19 * tile + 4 * state + A;
    if (!fwd && !kept) per += 4 * tile + A + 3 * tile + state;
    return chunks * per;
}

static void run(const bench_ceilings *c, int B, int T, bool conv) {
    L l;
    memset(&l, 0, sizeof l);
    l.B = B, l.T = T, l.C = 64;
    l.D = bench_smoke_mode ? 64 : 1536, l.H = bench_smoke_mode ? 4 : 12, l.d = bench_smoke_mode ? 16 : 128;
    int N = B * T, H = l.H, d = l.d, hv = H * d, D = l.D, NC = (T + l.C - 1) / l.C;
    l.W = 4 * hv + 2 * H;
    l.Q = 3 * hv;
    /* the checkpoint as graft's training takes it: with the WY products where the backend keeps
     * them (docs/cuda-gdn.md); "WY recomputed" figures below time the backward without them */
    gf_gdn_shape s = {B, T, H, d, d, l.C, (float)(1 / sqrt((double)d)), false, be_gdn_keeps_wy(be)};
    gf_gdn_dims dims = {B, T, D, H, d, d, conv, 1e-5f};
    l.s = s;
    l.dims = dims;
    gf_dtype A = be_act(be);
    const double a = gf_dtype_size(A); /* bytes a value */
    size_t n = (size_t)N;
    unsigned sd = 1;
    l.x = buf(n * D, A, sd++, -1, 1);
    l.Win = buf((size_t)l.W * D, A, sd++, -0.025f, 0.025f);
    l.Wo = buf((size_t)D * hv, A, sd++, -0.025f, 0.025f);
    l.proj = buf(n * l.W, A, sd++, -2, 2);
    l.pre = buf(n * l.Q, A, sd++, -2, 2);
    l.q = buf(n * hv, A, sd++, -0.15f, 0.15f);
    l.k = buf(n * hv, A, sd++, -0.15f, 0.15f);
    l.v = buf(n * hv, A, sd++, -1, 1);
    l.g = buf(n * H, GF_F32, sd++, -0.5f, -0.01f);
    l.beta = buf(n * H, GF_F32, sd++, 0.05f, 0.95f);
    l.o = buf(n * hv, A, sd++, -1, 1);
    l.ck = buf(gf_gdn_ckpt_floats(&s, A), GF_F32, sd++, -1, 1);
    l.z = buf(n * hv, A, sd++, -1, 1);
    l.rstd = buf(n * H, GF_F32, sd++, 0.5f, 2);
    l.y = buf(n * D, A, sd++, -1, 1);
    l.convw = conv ? buf((size_t)l.Q * 4, A, sd++, -0.5f, 0.5f) : gf_none();
    l.alog = buf(H, A, sd++, 0, 2);
    l.dtb = buf(H, A, sd++, -4, -1);
    l.wn = buf(d, A, sd++, 0.9f, 1.1f);
    l.dy = buf(n * D, A, sd++, -1, 1);
    l.dz = buf(n * hv, A, sd++, -1, 1);
    l.d_o = buf(n * hv, A, sd++, -1, 1);
    l.dproj = buf(n * l.W, A, sd++, -1, 1);
    l.dq = buf(n * hv, A, sd++, -1, 1);
    l.dk = buf(n * hv, A, sd++, -1, 1);
    l.dv = buf(n * hv, A, sd++, -1, 1);
    l.dg = buf(n * H, GF_F32, sd++, -1, 1);
    l.db = buf(n * H, GF_F32, sd++, -1, 1);
    l.dx = buf(n * D, A, sd++, -1, 1);
    l.dWin = buf((size_t)l.W * D, GF_F32, sd++, -1, 1);
    l.dWo = buf((size_t)D * hv, GF_F32, sd++, -1, 1);
    l.dwn = buf(d, GF_F32, sd++, -1, 1);
    l.dal = buf(H, GF_F32, sd++, -1, 1);
    l.ddt = buf(H, GF_F32, sd++, -1, 1);
    l.dconv = conv ? buf((size_t)l.Q * 4, GF_F32, sd++, -1, 1) : gf_none();

    /* FLOPs per token (docs/cuda-gdn.md): core as implemented, per head
     * fwd 2 (5 C d + 3 d^2), bwd 2 (16 C d + 7 d^2 + 2 C^2); layer GEMMs
     * fwd 2 D (W + hv), bwd twice that. */
    double C = l.C, dd = d;
    double core_f = 2 * (5 * C * dd + 3 * dd * dd) * H, core_b = 2 * (16 * C * dd + 7 * dd * dd + 2 * C * C) * H;
    double gemm_f = 2.0 * D * (l.W + hv), gemm_b = 2 * gemm_f;
    /* Bytes each figure must at least move (its floor's other half): the
     * core reads q, k, v (bf16), g, beta (f32) and writes o and the chunk
     * states (f32); its backward reads those and d_o and writes dq, dk, dv,
     * dg, dbeta; the layer reads x and the weights and writes y (backward:
     * reads dy, writes dx, reads and writes the f32 weight gradients). */
    double nh = (double)N * H, ck_bytes = 4.0 * B * H * NC * dd * dd, wts = (double)l.W * D + (double)D * hv;
    double core_fb = nh * (2 * (3 * dd) + 8 + 2 * dd) + ck_bytes;
    double core_bb = nh * (2 * (3 * dd) + 8 + 2 * dd + 2 * (3 * dd) + 8) + ck_bytes;
    double layer_fb = 4.0 * N * D + 2 * wts, layer_bb = layer_fb + 4.0 * N * D + 8 * wts;
    char what[160], extra[160];
    snprintf(extra, sizeof extra, ",\"B\":%d,\"T\":%d,\"H\":%d,\"d\":%d,\"conv\":%s,\"tok_s\":%%.0f", B, T, H, d,
             conv ? "true" : "false");
    char ex[600];
    double sec;
    /* the peers (tests/gpu/peers/peer_gdn.py) time the same layer without conv */
    char peers[300] = "";
    if (!conv)
        snprintf(peers, sizeof peers,
                 ",\"peer\":\"fla chunk GDN layer fwd+bwd D %d (%dx%d) T %d\","
                 "\"peer2\":\"torch naive GDN layer fwd+bwd D %d (%dx%d) T %d\"", D, H, d, T, D, H, d, T);
#define REPORT_FLOW(name, fn, flops, bytes, peer, flow)                                                  \
    do {                                                                                                 \
        sec = bench_time(be, fn, &l, 7);                                                                 \
        snprintf(what, sizeof what, "graft GDN %s D %d (%dx%d) B %d T %d%s", name, D, H, d, B, T,          \
                 conv ? " conv" : "");                                                                   \
        snprintf(ex, sizeof ex, extra, N / sec);                                                         \
        if ((flow) > 0) {                                                                                \
            const double fs = (flow) / (c->copy_gbps * 1e9);                                             \
            snprintf(ex + strlen(ex), sizeof ex - strlen(ex), ",\"flow_ms\":%.4f,\"of_flow\":%.3f",   \
                     fs * 1e3, fs / sec);                                                                \
        }                                                                                                \
        if (peer) strncat(ex, peers, sizeof ex - strlen(ex) - 1);                                        \
        bench_report("gdn", what, sec, (flops), (bytes), c, ex);                                         \
    } while (0)
#define REPORT(name, fn, flops, bytes, peer) REPORT_FLOW(name, fn, flops, bytes, peer, 0.0)
    if (!conv) {
        REPORT_FLOW("core fwd", core_fwd, N * core_f, core_fb, false, core_flow_bytes(&l, a, true, l.s.keep_wy));
        REPORT_FLOW("core bwd", core_bwd, N * core_b, core_bb, false, core_flow_bytes(&l, a, false, l.s.keep_wy));
        REPORT("layer fwd", layer_fwd_only, N * (core_f + gemm_f), layer_fb, false);
        if (l.s.keep_wy) { /* the same run's figures without the kept WY products */
            l.s.keep_wy = false;
            REPORT_FLOW("core bwd, WY recomputed", core_bwd, N * core_b, core_bb, false,
                        core_flow_bytes(&l, a, false, false));
            REPORT("layer fwd+bwd, WY recomputed", layer_fwd_bwd, N * (core_f + core_b + gemm_f + gemm_b), layer_bb, true);
            l.s.keep_wy = true;
        }
    }
    REPORT("layer fwd+bwd", layer_fwd_bwd, N * (core_f + core_b + gemm_f + gemm_b), layer_bb, true);
    if (T == 2048 / (bench_smoke_mode ? 32 : 1)) {
        /* element-wise byte floors per token (ACT a bytes, qkv = 3 H d, hv = H d):
         * prep fwd reads proj's q|k|v and a, b, writes qkv_pre, q|k|v, g, beta (f32);
         * prep bwd reads qkv_pre, dq|dk|dv, proj's q|k|v (conv only) and a, dg, dbeta,
         * g, beta, writes dproj's q|k|v, a, b; the gated norm reads o and proj's g
         * (+ dz, rstd backward) and writes z, rstd (d_o and dproj's g backward) */
        double qkv = 3.0 * hv;
        double prep_fb = n * (3 * a * qkv + 2 * a * H + 8 * H);
        double prep_bb = n * ((conv ? 4 : 3) * a * qkv + 3 * a * H + 16 * H);
        REPORT("prep fwd", prep_fwd, 0, prep_fb, false);
        REPORT("prep bwd", prep_bwd, 0, prep_bb, false);
        if (!conv) {
            REPORT("gated norm fwd", norm_fwd, 0, n * (3 * a * hv + 4 * H), false);
            REPORT("gated norm bwd", norm_bwd, 0, n * (5 * a * hv + 4 * H), false);
        }
    }
#undef REPORT
#undef REPORT_FLOW
    fflush(stdout);
    gf_buf *all = &l.x;
    for (gf_buf *p = all; p <= &l.dconv; p++)
        if (!gf_is_none(*p)) be_free(be, p);
}

int main(void) {
    /* GRAFT_BENCH_GDN_SLAB=16|32 forces the sequential passes' slab height (default: chosen);
     * GRAFT_BENCH_GDN_GENERAL=1 times the core's general kernels (other head dims and chunks)
     * at these shapes, where the C 64, d 128 copies would run */
    const char *sl = getenv("GRAFT_BENCH_GDN_SLAB"), *ge = getenv("GRAFT_BENCH_GDN_GENERAL");
    gf_backend_variants v = {0};
    v.gdn_slab = sl ? atoi(sl) : 0;
    v.gdn_general = ge && strcmp(ge, "1") == 0;
    be = bench_open_variants_or_skip(&v);
    fprintf(stderr, "bench_gdn on %s (GDN slab %s, %s kernels)\n", be_name(be), v.gdn_slab ? sl : "chosen",
            v.gdn_general ? "general" : "chosen");
    const char *e = getenv("GRAFT_BENCH_GDN_TOKENS");
    int tokens = e ? atoi(e) : 32768;
    if (tokens < 8192) tokens = 8192;
    if (bench_smoke_mode) tokens = 8192;
    const bench_ceilings c = bench_measure_ceilings(be);
    const int s = bench_smoke_mode ? 32 : 1; /* smoke: T / 32, D 64 (4 x 16) */
    run(&c, tokens / 2048, 2048 / s, false);
    run(&c, tokens / 8192, 8192 / s, false);
    run(&c, tokens / 2048, 2048 / s, true);
    be_close(be);
    return 0;
}
