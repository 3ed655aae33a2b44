/* Benchmark of the CUDA GDN ops in bf16 at the qwen2.5-1.5b width (D 1536 =
 * 12 heads x 128): the core forward (with checkpoints), the core backward, and
 * the whole layer forward + backward (projections through cuBLAS, the same
 * calls the backend's be_linear will make, plus prep, core, gated norm and their
 * backward). T = 2048 and 8192 with B x T = 32768 tokens (GRAFT_BENCH_GDN_TOKENS
 * changes it). Random device data (never zeros), 3 warm-up runs, the median of
 * 15 timed by device events. One JSON line per figure; FLOP counts as in
 * docs/cuda-gdn.md. Exit 77 without a GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend_impl.h"
#include "backend/cuda/cuda_gdn.h"
#include "tests/gpu/gdn_harness.h"

#define REPS 15
#define WARM 3

static gf_backend *be;

static gf_buf buf(size_t n, gf_dtype t, unsigned seed, float lo, float hi) {
    gf_buf b;
    if (gh_alloc(be, &b, n, t) || gh_fill_uniform(be, b, n, seed, lo, hi)) {
        fprintf(stderr, "bench_gdn: %s\n", be->error);
        exit(1);
    }
    return b;
}

static int cmpf(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

typedef void (*step_fn)(void *);

static float median_ms(step_fn f, void *ud) {
    gh_timer *t = gh_timer_new(be);
    float ms[REPS];
    char why[300];
    for (int i = 0; i < WARM; i++) f(ud);
    if (gh_sync(be, why, sizeof why)) {
        fprintf(stderr, "bench_gdn: %s\n", why);
        exit(1);
    }
    for (int i = 0; i < REPS; i++) {
        gh_timer_start(t);
        f(ud);
        ms[i] = gh_timer_stop(t);
    }
    if (gh_sync(be, why, sizeof why)) {
        fprintf(stderr, "bench_gdn: %s\n", why);
        exit(1);
    }
    gh_timer_free(t);
    qsort(ms, REPS, sizeof *ms, cmpf);
    return ms[REPS / 2];
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
    cuda_gdn_core(be, l->o, l->ck, gf_none(), l->q, l->k, l->v, l->g, l->beta, &l->s);
}
static void core_bwd(void *u) {
    L *l = u;
    cuda_gdn_core_backward(be, l->dq, l->dk, l->dv, l->dg, l->db, l->d_o, l->q, l->k, l->v, l->g, l->beta, l->ck, &l->s);
}
static void layer_fwd(L *l) {
    int N = l->B * l->T, hv = l->H * l->d;
    gh_gemm(be, l->proj, l->x, l->Win, N, l->W, l->D, false, true, false);
    cuda_gdn_prep(be, l->pre, l->q, l->k, l->v, l->g, l->beta, gf_none(), l->proj, l->convw, l->alog, l->dtb, &l->dims);
    cuda_gdn_core(be, l->o, l->ck, gf_none(), l->q, l->k, l->v, l->g, l->beta, &l->s);
    cuda_gdn_gated_norm(be, l->z, l->rstd, l->o, l->proj, l->wn, &l->dims);
    gh_gemm(be, l->y, l->z, l->Wo, N, l->D, hv, false, true, false);
}
static void layer_fwd_bwd(void *u) {
    L *l = u;
    int N = l->B * l->T, hv = l->H * l->d;
    layer_fwd(l);
    gh_gemm(be, l->dz, l->dy, l->Wo, N, hv, l->D, false, false, false);      /* dz = dy Wo */
    gh_gemm(be, l->dWo, l->dy, l->z, l->D, hv, N, true, false, true);         /* dWo += dy^T z */
    cuda_gdn_gated_norm_backward(be, l->d_o, l->dproj, l->dwn, l->dz, l->o, l->rstd, l->proj, l->wn, &l->dims);
    cuda_gdn_core_backward(be, l->dq, l->dk, l->dv, l->dg, l->db, l->d_o, l->q, l->k, l->v, l->g, l->beta, l->ck, &l->s);
    cuda_gdn_prep_backward(be, l->dproj, l->dconv, l->dal, l->ddt, l->dq, l->dk, l->dv, l->dg, l->db, l->proj, l->pre,
                           l->q, l->k, l->g, l->beta, l->convw, l->alog, l->dtb, &l->dims);
    gh_gemm(be, l->dx, l->dproj, l->Win, N, l->D, l->W, false, false, false);  /* dx = dproj W_in */
    gh_gemm(be, l->dWin, l->dproj, l->x, l->W, l->D, N, true, false, true);    /* dW_in += dproj^T x */
}
static void layer_fwd_only(void *u) { layer_fwd(u); }

static void run(int B, int T, bool conv) {
    L l;
    memset(&l, 0, sizeof l);
    l.B = B, l.T = T, l.D = 1536, l.H = 12, l.d = 128, l.C = 64;
    int N = B * T, H = l.H, d = l.d, hv = H * d, D = l.D, NC = (T + l.C - 1) / l.C;
    l.W = 4 * hv + 2 * H;
    l.Q = 3 * hv;
    gf_gdn_shape s = {B, T, H, d, d, l.C, 0.08838834764831845f};
    gf_gdn_dims dims = {B, T, D, H, d, d, conv, 1e-5f};
    l.s = s;
    l.dims = dims;
    gf_dtype A = GF_BF16;
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
    l.ck = buf((size_t)B * H * NC * d * d, GF_F32, sd++, -1, 1);
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
    const char *cv = conv ? "true" : "false";
    float ms;
    if (!conv) {
        ms = median_ms(core_fwd, &l);
        printf("{\"bench\":\"graft_gdn_core_fwd\",\"B\":%d,\"T\":%d,\"H\":%d,\"d\":%d,\"ms\":%.4f,\"tok_s\":%.0f,\"tflops\":%.2f}\n",
               B, T, H, d, ms, N / (ms * 1e-3), N * core_f / (ms * 1e-3) / 1e12);
        ms = median_ms(core_bwd, &l);
        printf("{\"bench\":\"graft_gdn_core_bwd\",\"B\":%d,\"T\":%d,\"H\":%d,\"d\":%d,\"ms\":%.4f,\"tok_s\":%.0f,\"tflops\":%.2f}\n",
               B, T, H, d, ms, N / (ms * 1e-3), N * core_b / (ms * 1e-3) / 1e12);
        ms = median_ms(layer_fwd_only, &l);
        printf("{\"bench\":\"graft_gdn_layer_fwd\",\"B\":%d,\"T\":%d,\"D\":%d,\"conv\":%s,\"ms\":%.4f,\"tok_s\":%.0f,\"tflops\":%.2f}\n",
               B, T, D, cv, ms, N / (ms * 1e-3), N * (core_f + gemm_f) / (ms * 1e-3) / 1e12);
    }
    ms = median_ms(layer_fwd_bwd, &l);
    printf("{\"bench\":\"graft_gdn_layer_fwd_bwd\",\"B\":%d,\"T\":%d,\"D\":%d,\"conv\":%s,\"ms\":%.4f,\"tok_s\":%.0f,\"tflops\":%.2f}\n",
           B, T, D, cv, ms, N / (ms * 1e-3), N * (core_f + core_b + gemm_f + gemm_b) / (ms * 1e-3) / 1e12);
    fflush(stdout);
    gf_buf *all = &l.x;
    for (gf_buf *p = all; p <= &l.dconv; p++)
        if (!gf_is_none(*p)) gh_free(be, p);
}

int main(void) {
    char why[300];
    int rc = gh_open(&be, false, why, sizeof why);
    if (rc) {
        printf("%s\n", why);
        return rc;
    }
    fprintf(stderr, "bench_gdn on %s\n", be->name);
    const char *e = getenv("GRAFT_BENCH_GDN_TOKENS");
    int tokens = e ? atoi(e) : 32768;
    if (tokens < 8192) tokens = 8192;
    run(tokens / 2048, 2048, false);
    run(tokens / 8192, 8192, false);
    run(tokens / 2048, 2048, true);
    gh_close(be);
    return 0;
}
