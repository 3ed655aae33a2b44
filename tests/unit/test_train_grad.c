/* Gradient checks for training (the backend's backward ops, engine/model's
 * backward):
 * - every op backward against central finite differences of a random linear
 *   functional sum(r * op(x)), in float32 on the CPU backend (the reference);
 * - the whole hybrid (embedding, RMSNorm, attention with RoPE + GQA, q/k norm,
 *   biases, SwiGLU, a GDN layer, tied and untied LM heads) end to end through
 *   the one transformer, batched (B = 2): KL-with-temperature + hidden-
 *   alignment loss, every parameter tensor sampled.
 * Float32 FD: eps = 1e-3 on O(1) inputs (1e-2 leaves a visible O(eps^2)
 * truncation error through the softmaxes; the rounding error is about
 * 1e-7 * |loss| / eps = 1e-4 * |loss|), and we accept
 * |fd - analytic| <= 2e-3 * max|analytic of that tensor| + 2e-4 (check.h:
 * a NaN or Inf on either side fails). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "model/rope.h"
#include "model/transformer.h"
#include "be_util.h"
#include "check.h"
#include "model_util.h"

static uint64_t rs = 88172645463325252ull;
static double urand(void) {
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return ((double)(rs >> 11) + 0.5) / 9007199254740992.0;
}
static double nrand(void) { return sqrt(-2 * log(urand())) * cos(6.283185307179586 * urand()); }
static void fill(float *a, size_t n, double std) {
    for (size_t i = 0; i < n; i++) a[i] = (float)(std * nrand());
}
static void fill_u(float *a, size_t n, double lo, double hi) {
    for (size_t i = 0; i < n; i++) a[i] = (float)(lo + (hi - lo) * urand());
}
static double dotd(const float *a, const float *b, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += (double)a[i] * b[i];
    return s;
}

#ifndef FD_EPS
#define FD_EPS 1e-3f
#endif
#define FD_REL 2e-3
#define FD_ABS 2e-4

/* Checks analytic[i] against FD of f over every element of x[n] (or `samples`
 * of them when fewer). f reads x through the closure. */
typedef double (*objective)(void *ud);
static void check_fd(const char *what, float *x, size_t n, const float *analytic, objective f, void *ud,
                     size_t samples) {
    const double amax = max_abs_f(analytic, n);
    check_err(amax, INFINITY); /* finite */
    size_t step = samples && n > samples ? n / samples : 1;
    for (size_t i = 0; i < n; i += step) {
        const float x0 = x[i];
        x[i] = x0 + FD_EPS;
        const double fp = f(ud);
        x[i] = x0 - FD_EPS;
        const double fm = f(ud);
        x[i] = x0;
        const double fd = (fp - fm) / (2.0 * FD_EPS);
        if (!close_enough(analytic[i], fd, FD_REL * amax + FD_ABS, 0)) {
            fprintf(stderr, "%s[%zu]: analytic %.6g, finite difference %.6g (tol %.3g)\n", what, i, analytic[i], fd,
                    FD_REL * amax + FD_ABS);
            fail();
        }
    }
}

#define BE be_default()

/* ------------------------------------------------------------------ per op */

typedef struct {
    int N, in, out, n, F, nh, hd, B, T;
    float *x, *W, *b, *w, *r, *gate, *up;
    float *table;
    rope_pairing pairing;
    gf_attn_shape s;
    float *q, *k, *v;
} op_case;

static double f_linear(void *ud) {
    op_case *c = ud;
    gf_buf X = tb_f32(c->x, (size_t)c->N * c->in), W = tb_f32(c->W, (size_t)c->out * c->in), B = tb_f32(c->b, c->out);
    gf_buf Y = tb_f32(NULL, (size_t)c->N * c->out);
    be_linear(BE, Y, X, W, B, c->N, c->in, c->out, false);
    float *y = malloc((size_t)c->N * c->out * sizeof *y);
    tb_get(y, Y, (size_t)c->N * c->out);
    const double l = dotd(y, c->r, (size_t)c->N * c->out);
    free(y);
    tb_free(&X), tb_free(&W), tb_free(&B), tb_free(&Y);
    return l;
}

static void test_linear_backward(void **state) {
    (void)state;
    op_case c = {.N = 5, .in = 7, .out = 6};
    c.x = malloc(35 * 4), c.W = malloc(42 * 4), c.b = malloc(6 * 4), c.r = malloc(30 * 4);
    fill(c.x, 35, 1), fill(c.W, 42, 1), fill(c.b, 6, 1), fill(c.r, 30, 1);
    float dx[35], dW[42], db[6], nan42[42];
    for (int i = 0; i < 42; i++) nan42[i] = NAN; /* written, not added: nothing of dW or db may be read */
    gf_buf X = tb_f32(c.x, 35), W = tb_f32(c.W, 42), R = tb_f32(c.r, 30);
    gf_buf DX = tb_f32(nan42, 35), DW = tb_f32(nan42, 42), DB = tb_f32(nan42, 6);
    be_linear_backward(BE, DX, DW, DB, R, X, W, 5, 7, 6, false, false);
    tb_get(dx, DX, 35), tb_get(dW, DW, 42), tb_get(db, DB, 6);
    check_fd("linear dx", c.x, 35, dx, f_linear, &c, 0);
    check_fd("linear dW", c.W, 42, dW, f_linear, &c, 0);
    check_fd("linear db", c.b, 6, db, f_linear, &c, 0);
    /* accumulation: a second call adds exactly the same amount (float32: 1e-5 relative) */
    be_linear_backward(BE, DX, DW, gf_none(), R, X, W, 5, 7, 6, true, true);
    float dx2[35], dW2[42];
    tb_get(dx2, DX, 35), tb_get(dW2, DW, 42);
    for (int i = 0; i < 35; i++) check_close(dx2[i], 2 * dx[i], 1e-5, 1e-5);
    for (int i = 0; i < 42; i++) check_close(dW2[i], 2 * dW[i], 1e-5, 1e-5);
    tb_free(&X), tb_free(&W), tb_free(&R), tb_free(&DX), tb_free(&DW), tb_free(&DB);
    free(c.x), free(c.W), free(c.b), free(c.r);
}

static double f_rmsnorm(void *ud) {
    op_case *c = ud;
    const size_t n = (size_t)c->N * c->n;
    gf_buf X = tb_f32(c->x, n), W = tb_f32(c->w, c->n), Y = tb_f32(NULL, n);
    be_rmsnorm(BE, Y, gf_none(), X, W, c->N, c->n, 1e-5f);
    float *y = malloc(n * sizeof *y);
    tb_get(y, Y, n);
    const double l = dotd(y, c->r, n);
    free(y);
    tb_free(&X), tb_free(&W), tb_free(&Y);
    return l;
}

static void test_rmsnorm_backward(void **state) {
    (void)state;
    enum { N = 4, n = 9 };
    float x[N * n], w[n], r[N * n], dx[N * n], dw[n];
    op_case c = {.N = N, .n = n, .x = x, .w = w, .r = r};
    fill(x, N * n, 1), fill_u(w, n, 0.5, 1.5), fill(r, N * n, 1);
    for (int with_rstd = 0; with_rstd < 2; with_rstd++) {
        gf_buf X = tb_f32(x, N * n), W = tb_f32(w, n), R = tb_f32(r, N * n), DX = tb_f32(NULL, N * n),
               DW = tb_f32(NULL, n), RS = with_rstd ? tb_f32(NULL, N) : gf_none(), Y = tb_f32(NULL, N * n);
        if (with_rstd) be_rmsnorm(BE, Y, RS, X, W, N, n, 1e-5f); /* the kept 1/rms */
        be_rmsnorm_backward(BE, DX, DW, R, X, W, RS, N, n, 1e-5f, false);
        tb_get(dx, DX, N * n), tb_get(dw, DW, n);
        check_fd("rmsnorm dx", x, N * n, dx, f_rmsnorm, &c, 0);
        check_fd("rmsnorm dw", w, n, dw, f_rmsnorm, &c, 0);
        tb_free(&X), tb_free(&W), tb_free(&R), tb_free(&DX), tb_free(&DW), tb_free(&RS), tb_free(&Y);
    }
}

static double f_swiglu(void *ud) {
    op_case *c = ud;
    const size_t n = (size_t)c->N * c->F;
    gf_buf G = tb_f32(c->gate, n), U = tb_f32(c->up, n), O = tb_f32(NULL, n);
    be_swiglu(BE, O, G, U, n);
    float *y = malloc(n * sizeof *y);
    tb_get(y, O, n);
    const double l = dotd(y, c->r, n);
    free(y);
    tb_free(&G), tb_free(&U), tb_free(&O);
    return l;
}

static void test_swiglu_backward(void **state) {
    (void)state;
    enum { N = 3, F = 8 };
    float g[N * F], u[N * F], r[N * F], dg[N * F], du[N * F];
    op_case c = {.N = N, .F = F, .gate = g, .up = u, .r = r};
    fill(g, N * F, 2), fill(u, N * F, 1), fill(r, N * F, 1);
    gf_buf G = tb_f32(g, N * F), U = tb_f32(u, N * F), R = tb_f32(r, N * F), DG = tb_f32(NULL, N * F),
           DU = tb_f32(NULL, N * F);
    be_swiglu_backward(BE, DG, DU, R, G, U, N * F);
    tb_get(dg, DG, N * F), tb_get(du, DU, N * F);
    check_fd("swiglu dgate", g, N * F, dg, f_swiglu, &c, 0);
    check_fd("swiglu dup", u, N * F, du, f_swiglu, &c, 0);
    tb_free(&G), tb_free(&U), tb_free(&R), tb_free(&DG), tb_free(&DU);
}

static double f_rope(void *ud) {
    op_case *c = ud;
    const size_t n = (size_t)c->B * c->T * c->nh * c->hd;
    gf_buf X = tb_f32(c->x, n), TB = tb_f32(c->table, (size_t)(c->T + 3) * c->hd);
    be_rope(BE, X, TB, c->B, c->T, c->nh, c->hd, 3, c->pairing, false);
    float *y = malloc(n * sizeof *y);
    tb_get(y, X, n);
    const double l = dotd(y, c->r, n);
    free(y);
    tb_free(&X), tb_free(&TB);
    return l;
}

static void test_rope_backward(void **state) {
    (void)state;
    enum { B = 2, T = 5, NH = 2, HD = 8 };
    model_config cfg = {.head_dim = HD, .rope_theta = 10000.0f};
    cfg.rope_scaling = (rope_scaling){.type = ROPE_SCALING_LLAMA3, .factor = 8, .low_freq_factor = 1, .high_freq_factor = 4, .original_max_pos = 16};
    float table[(T + 3) * HD];
    rope_table(table, &cfg, T + 3);
    float x[B * T * NH * HD], r[B * T * NH * HD], dx[B * T * NH * HD];
    for (int p = 0; p < 2; p++) {
        op_case c = {.B = B, .T = T, .nh = NH, .hd = HD, .x = x, .r = r, .table = table};
        c.pairing = p ? ROPE_ADJACENT : ROPE_HALF;
        fill(x, sizeof x / 4, 1), fill(r, sizeof r / 4, 1);
        gf_buf D = tb_f32(r, sizeof r / 4), TB = tb_f32(table, (T + 3) * HD);
        be_rope(BE, D, TB, B, T, NH, HD, 3, c.pairing, true);
        tb_get(dx, D, sizeof r / 4);
        check_fd(p ? "rope adjacent" : "rope half", x, sizeof x / 4, dx, f_rope, &c, 0);
        tb_free(&D), tb_free(&TB);
    }
}

static double f_attn(void *ud) {
    op_case *c = ud;
    const gf_attn_shape *s = &c->s;
    const size_t nq = (size_t)s->B * s->T * s->H * s->hd, nk = (size_t)s->B * s->S * s->KV * s->hd;
    gf_buf Q = tb_f32(c->q, nq), K = tb_f32(c->k, nk), V = tb_f32(c->v, nk), O = tb_f32(NULL, nq);
    be_attention(BE, O, gf_none(), gf_none(), Q, K, V, s);
    float *y = malloc(nq * sizeof *y);
    tb_get(y, O, nq);
    const double l = dotd(y, c->r, nq);
    free(y);
    tb_free(&Q), tb_free(&K), tb_free(&V), tb_free(&O);
    return l;
}

/* The flash-style backward (probabilities recomputed from lse) against FD of
 * the forward; T = 70 spans two query blocks of 64. */
static void test_attention_backward(void **state) {
    (void)state;
    enum { B = 2, T = 70, H = 4, KV = 2, HD = 4 };
    const size_t nq = (size_t)B * T * H * HD, nk = (size_t)B * T * KV * HD;
    float *q = malloc(nq * 4), *k = malloc(nk * 4), *v = malloc(nk * 4), *r = malloc(nq * 4);
    float *dq = malloc(nq * 4), *dk = malloc(nk * 4), *dv = malloc(nk * 4);
    op_case c = {.q = q, .k = k, .v = v, .r = r, .s = {B, T, H, KV, HD, 0, T}};
    fill(q, nq, 1), fill(k, nk, 1), fill(v, nk, 1), fill(r, nq, 1);
    gf_buf Q = tb_f32(q, nq), K = tb_f32(k, nk), V = tb_f32(v, nk), O = tb_f32(NULL, nq), R = tb_f32(r, nq);
    gf_buf L = tb_f32(NULL, (size_t)B * H * T), DQ = tb_f32(NULL, nq), DK = tb_f32(NULL, nk), DV = tb_f32(NULL, nk);
    be_attention(BE, O, L, gf_none(), Q, K, V, &c.s);
    be_attention_backward(BE, DQ, DK, DV, R, O, L, Q, K, V, &c.s);
    tb_get(dq, DQ, nq), tb_get(dk, DK, nk), tb_get(dv, DV, nk);
    check_fd("attention dq", q, nq, dq, f_attn, &c, 60);
    check_fd("attention dk (GQA)", k, nk, dk, f_attn, &c, 60);
    check_fd("attention dv (GQA)", v, nk, dv, f_attn, &c, 60);
    tb_free(&Q), tb_free(&K), tb_free(&V), tb_free(&O), tb_free(&R), tb_free(&L), tb_free(&DQ), tb_free(&DK),
        tb_free(&DV);
    free(q), free(k), free(v), free(r), free(dq), free(dk), free(dv);
}

typedef struct {
    int N, V, D;
    float *zs, *zt, *s, *t;
    int *targets;
    float tau;
    int kind;
} loss_case;

static double f_loss(void *ud) {
    loss_case *c = ud;
    gf_buf L = tb_new(GF_F64, NULL, GF_F64, 1);
    if (c->kind < 2) {
        gf_buf ZS = tb_f32(c->zs, (size_t)c->N * c->V), ZT = tb_f32(c->zt, (size_t)c->N * c->V);
        gf_buf TG = tb_new(GF_I32, c->targets, GF_I32, c->N);
        if (c->kind == 0) be_kl_div(BE, L, gf_none(), ZS, ZT, c->N, c->V, c->tau, 1);
        else be_cross_entropy(BE, L, gf_none(), ZS, TG, c->N, c->V, 1);
        tb_free(&ZS), tb_free(&ZT), tb_free(&TG);
    } else {
        gf_buf S = tb_f32(c->s, (size_t)c->N * c->D), T = tb_f32(c->t, (size_t)c->N * c->D);
        if (c->kind == 2) be_row_l2(BE, L, gf_none(), S, T, c->N, c->D, 1);
        else be_mse(BE, L, gf_none(), S, T, (size_t)c->N * c->D, 1);
        tb_free(&S), tb_free(&T);
    }
    const double l = tb_get_f64(L);
    tb_free(&L);
    return l;
}

static void test_losses_backward(void **state) {
    (void)state;
    enum { N = 3, V = 11, D = 6 };
    float zs[N * V], zt[N * V], dz[N * V], s[N * D], t[N * D], ds[N * D];
    int tg[N] = {1, 7, 10};
    loss_case c = {N, V, D, zs, zt, s, t, tg, 2.0f, 0};
    fill(zs, N * V, 2), fill(zt, N * V, 2), fill(s, N * D, 1), fill(t, N * D, 1);
    gf_buf L = tb_new(GF_F64, NULL, GF_F64, 1), ZS = tb_f32(zs, N * V), ZT = tb_f32(zt, N * V), DZ = tb_f32(NULL, N * V);
    be_kl_div(BE, L, DZ, ZS, ZT, N, V, 2.0f, 1);
    assert_true(tb_get_f64(L) > 0);
    tb_get(dz, DZ, N * V);
    check_fd("kl(tau=2) dz", zs, N * V, dz, f_loss, &c, 0);
    /* KL of a distribution with itself is 0 with a 0 gradient (float32 softmax: 1e-6) */
    be_zero(BE, L, 1);
    be_kl_div(BE, L, DZ, ZT, ZT, N, V, 2.0f, 1);
    check_close(tb_get_f64(L), 0.0, 1e-6, 0);
    tb_get(dz, DZ, N * V);
    for (int i = 0; i < N * V; i++) check_close(dz[i], 0.0, 1e-6, 0);
    c.kind = 1;
    gf_buf TG = tb_new(GF_I32, tg, GF_I32, N);
    be_cross_entropy(BE, L, DZ, ZS, TG, N, V, 1);
    tb_get(dz, DZ, N * V);
    check_fd("cross-entropy dz", zs, N * V, dz, f_loss, &c, 0);
    c.kind = 2;
    gf_buf S = tb_f32(s, N * D), T = tb_f32(t, N * D), DS = tb_f32(NULL, N * D);
    be_row_l2(BE, L, DS, S, T, N, D, 1);
    tb_get(ds, DS, N * D);
    check_fd("alignment ds", s, N * D, ds, f_loss, &c, 0);
    c.kind = 3;
    be_mse(BE, L, DS, S, T, N * D, 1);
    tb_get(ds, DS, N * D);
    check_fd("squared error dy", s, N * D, ds, f_loss, &c, 0);
    tb_free(&L), tb_free(&ZS), tb_free(&ZT), tb_free(&DZ), tb_free(&TG), tb_free(&S), tb_free(&T), tb_free(&DS);
}

/* The losses at a vocabulary's width (Qwen2.5's 151,936 entries, plus one so
 * the vector loops of the CPU softmaxes end on a partial vector), against a
 * long double reference, KL at temperatures 1 and 2 and cross-entropy, loss and
 * every gradient entry. On the CPU reference (double softmaxes, glibc's vector
 * exps: within 4 ulp each) a row's loss sums 1.5e5 terms: recursive summation's
 * bound is n eps = 1.7e-11 of the terms' sum, so the loss must agree to 1e-10
 * relative. A probability carries that relative error too, so a gradient entry
 * gs tau (ps - pt), rounded to float, must agree within one float ulp (1.2e-7
 * relative) plus 1e-10 gs tau (ps + pt). The CUDA kernels compute these in
 * float; test_cuda_ops checks them against this CPU code, so a device run
 * skips this test. The KL's loss without a gradient (a loop of its own) and
 * either on one thread must be the same bits as with it on the default threads. */
enum { WIDE_N = 3, WIDE_V = 151937 };

/* softmax of z / tau in long double into p; returns the log of its normalizer */
static long double softmax_ld(long double *p, const float *z, int V, double tau) {
    long double m = -INFINITY, s = 0;
    for (int i = 0; i < V; i++) m = fmaxl(m, (long double)z[i] / tau);
    for (int i = 0; i < V; i++) s += (p[i] = expl((long double)z[i] / tau - m));
    for (int i = 0; i < V; i++) p[i] /= s;
    return m + logl(s);
}

static void check_wide_case(const float *zs, const float *zt, const int *tg, double tau, bool kl) {
    const size_t n = (size_t)WIDE_N * WIDE_V;
    const double gs = 0.5; /* any scale: it multiplies every entry */
    long double *ps = malloc(WIDE_V * sizeof *ps), *pt = malloc(WIDE_V * sizeof *pt);
    float *dz = malloc(n * sizeof *dz);
    assert_non_null(ps), assert_non_null(pt), assert_non_null(dz);
    gf_buf L = tb_new(GF_F64, NULL, GF_F64, 1), ZS = tb_f32(zs, n), ZT = tb_f32(zt, n), DZ = tb_f32(NULL, n);
    gf_buf TG = tb_new(GF_I32, tg, GF_I32, WIDE_N);
    if (kl) be_kl_div(BE, L, DZ, ZS, ZT, WIDE_N, WIDE_V, (float)tau, (float)gs);
    else be_cross_entropy(BE, L, DZ, ZS, TG, WIDE_N, WIDE_V, (float)gs);
    const double loss = tb_get_f64(L);
    tb_get(dz, DZ, n);
    long double want = 0;
    for (int t = 0; t < WIDE_N; t++) {
        const float *a = zs + (size_t)t * WIDE_V, *b = zt + (size_t)t * WIDE_V;
        const long double ls = softmax_ld(ps, a, WIDE_V, tau);
        long double row = 0;
        if (kl) {
            const long double lt = softmax_ld(pt, b, WIDE_V, tau);
            for (int i = 0; i < WIDE_V; i++) row += pt[i] * ((b[i] / (long double)tau - lt) - (a[i] / (long double)tau - ls));
            row *= (long double)tau * tau;
        } else {
            for (int i = 0; i < WIDE_V; i++) pt[i] = i == tg[t];
            row = ls - a[tg[t]];
        }
        want += row;
        const double k = gs * (kl ? tau : 1.0);
        for (int i = 0; i < WIDE_V; i++) {
            const double g = (double)(k * (ps[i] - pt[i]));
            check_close(dz[(size_t)t * WIDE_V + i], g, 1e-10 * k * (double)(ps[i] + pt[i]), 1.2e-7);
        }
    }
    check_close(loss, (double)want, 0, 1e-10);
    if (kl) {
        /* the KL's loss alone (no gradient: its own loop) and on one thread: the same bits; and the
         * gradient on one thread the same bits as on the default threads */
        float *dz1 = malloc(n * sizeof *dz1);
        assert_non_null(dz1);
        be_set_threads(BE, 1);
        be_zero(BE, L, 1);
        be_kl_div(BE, L, gf_none(), ZS, ZT, WIDE_N, WIDE_V, (float)tau, (float)gs);
        const double alone = tb_get_f64(L);
        be_zero(BE, L, 1);
        be_kl_div(BE, L, DZ, ZS, ZT, WIDE_N, WIDE_V, (float)tau, (float)gs);
        const double one = tb_get_f64(L);
        be_set_threads(BE, 0);
        tb_get(dz1, DZ, n);
        assert_memory_equal(&alone, &loss, sizeof loss);
        assert_memory_equal(&one, &loss, sizeof loss);
        assert_memory_equal(dz1, dz, n * sizeof *dz);
        free(dz1);
    }
    tb_free(&L), tb_free(&ZS), tb_free(&ZT), tb_free(&DZ), tb_free(&TG);
    free(ps), free(pt), free(dz);
}

static void test_losses_vocabulary_wide(void **state) {
    (void)state;
    if (!be_is_host(BE)) skip();
    const size_t n = (size_t)WIDE_N * WIDE_V;
    float *zs = malloc(n * sizeof *zs), *zt = malloc(n * sizeof *zt);
    assert_non_null(zs), assert_non_null(zt);
    /* a trained model's spread: most logits far below the top few */
    fill_u(zs, n, -18, 6), fill_u(zt, n, -18, 6);
    for (int t = 0; t < WIDE_N; t++) zt[(size_t)t * WIDE_V + 17 * t] = 14; /* a peaked teacher row */
    const int tg[WIDE_N] = {0, 75968, WIDE_V - 1};
    check_wide_case(zs, zt, tg, 1.0, true);
    check_wide_case(zs, zt, tg, 2.0, true);
    check_wide_case(zs, zt, tg, 1.0, false);
    free(zs), free(zt);
}

static void test_embedding_backward(void **state) {
    (void)state;
    float dE[4 * 2], dx[3 * 2] = {1, 2, 3, 4, 5, 6};
    int tok[3] = {2, 0, 2};
    gf_buf E = tb_f32(NULL, 8), X = tb_f32(dx, 6), TK = tb_new(GF_I32, tok, GF_I32, 3);
    be_embedding_backward(BE, E, X, TK, 3, 2);
    tb_get(dE, E, 8);
    const float want[8] = {3, 4, 0, 0, 6, 8, 0, 0};
    for (int i = 0; i < 8; i++) assert_true(dE[i] == want[i]); /* exact: small integers */
    tb_free(&E), tb_free(&X), tb_free(&TK);
}

/* ---------------------------------------------------------------- end to end */

enum { E_B = 2, E_T = 7 };

typedef struct {
    transformer tm;
    tf_run *run;
    const int *tokens;   /* [B, T] */
    gf_buf zt;           /* teacher logits [N, V] */
    gf_buf targets[4];   /* alignment targets per layer [N, D] (none: not aligned) */
    gf_buf dafter[4];
    gf_buf loss, dlog;
    float tau;
    double align_weight;
    bool no_head;        /* the backward without the LM head's (alignment losses only) */
} e2e_case;

static double e2e_loss(e2e_case *c, bool backward) {
    transformer *tm = &c->tm;
    const int N = E_B * E_T, V = tm->cfg.vocab_size, D = tm->cfg.dim, L = tm->cfg.n_layers;
    assert_int_equal(tf_forward(c->run, c->tokens, E_B, E_T, 0, NULL), 0);
    tf_logits(c->run, 0, N, c->dlog);
    be_zero(BE, c->loss, 1);
    be_kl_div(BE, c->loss, c->dlog, c->dlog, c->zt, N, V, c->tau, 1.0f / N);
    double loss = tb_get_f64(c->loss) / N;
    for (int l = 0; l < L; l++)
        if (!gf_is_none(c->targets[l])) {
            be_zero(BE, c->loss, 1);
            be_zero(BE, c->dafter[l], (size_t)N * D);
            be_row_l2(BE, c->loss, c->dafter[l], tf_run_layer_output(c->run, l), c->targets[l], N, D,
                      (float)(c->align_weight / N));
            loss += c->align_weight * tb_get_f64(c->loss) / N;
        }
    if (backward) {
        if (!c->no_head) tf_lm_head_backward(c->run, 0, N, c->dlog);
        assert_int_equal(tf_backward(c->run, c->dafter), 0);
    }
    return loss;
}

/* The whole gradient block after one step's backward that starts from a
 * block of NaN (last step's gradients, as far as the step knows): through
 * tf_zero_grads, or after zeroing the block (every gradient added). */
static float *grads_from_nan(e2e_case *c, bool through_tf_zero_grads) {
    transformer *tm = &c->tm;
    const size_t n = tm->layout.total;
    float *g = malloc(n * sizeof *g);
    assert_non_null(g);
    for (size_t i = 0; i < n; i++) g[i] = NAN;
    assert_int_equal(be_upload(BE, tm->grads, g, GF_F32, n), 0);
    if (through_tf_zero_grads) tf_zero_grads(tm);
    else be_zero(BE, tm->grads, n);
    e2e_loss(c, true);
    tb_get(g, tm->grads, n);
    return g;
}

/* tf_zero_grads leaves the weight matrices the backward writes first as they
 * were: every value of the block after the step must be what zeroing it all
 * gives, with or without the LM head's gradient and with groups frozen (no
 * NaN left anywhere; 1e-6 relative: the same products, a first write instead
 * of an add to +0, which is exact). */
static void check_first_writes(e2e_case *c) {
    transformer *tm = &c->tm;
    const size_t n = tm->layout.total;
    static const struct {
        bool no_head, rest, attn, gdn;
    } cases[] = {{false, true, true, true}, {true, true, true, true}, {false, false, true, true},
                 {false, false, false, true}, {true, true, false, false}};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        c->no_head = cases[k].no_head;
        tm->train[PGROUP_REST] = cases[k].rest, tm->train[PGROUP_ATTN] = cases[k].attn;
        tm->train[PGROUP_GDN] = cases[k].gdn;
        float *want = grads_from_nan(c, false), *got = grads_from_nan(c, true);
        for (size_t i = 0; i < n; i++) check_close(got[i], want[i], 0, 1e-6);
        free(want);
        free(got);
    }
    c->no_head = false;
    for (int g = 0; g < PGROUP_COUNT; g++) tm->train[g] = true;
}

/* FD perturbs one parameter of the model's block at a time. */
typedef struct {
    e2e_case *c;
    size_t off;
    float *host; /* the tensor's host copy, perturbed by check_fd */
    size_t n;
} param_probe;

static double e2e_obj(void *ud) {
    param_probe *p = ud;
    be_upload(BE, gf_at(p->c->tm.params, p->off), p->host, GF_F32, p->n);
    return e2e_loss(p->c, false);
}

static void fill_kind(float *x, size_t n, tensor_kind k, void *ud) {
    (void)ud;
    if (k == TK_ATTN_NORM || k == TK_FFN_NORM || k == TK_FINAL_NORM || k == TK_QNORM || k == TK_KNORM)
        fill_u(x, n, 0.8, 1.2);
    else
        fill(x, n, 0.35);
}

static void run_e2e(model_config *cfg, bool with_gdn) {
    model m;
    model_random(&m, cfg, fill_kind, NULL);
    gdn_config gc;
    gdn_config_default(&gc, cfg->dim, cfg->n_heads, cfg->head_dim);
    gc.chunk = 16;
    gc.conv = 1;
    gc.qkv_bias = 1;
    mixer_kind kinds[4] = {MIX_ATTN, with_gdn ? MIX_GDN : MIX_ATTN, MIX_ATTN, MIX_ATTN};
    gf_buf blocks[4] = {gf_none(), gf_none(), gf_none(), gf_none()};
    if (with_gdn) {
        gdn_params gp;
        gdn_params_alloc(&gp, &gc);
        fill(gp.block, gp.n, 0.35);
        fill_u(gp.w_norm, gc.dv, 0.8, 1.2);
        blocks[1] = tb_f32(gp.block, gp.n);
        gdn_params_free(&gp);
    }
    e2e_case c = {.tau = 1.7f, .align_weight = 0.5};
    assert_int_equal(tf_trainable(&c.tm, &m, &gc, kinds, blocks), 0);
    const tf_run_opts ro = {.B = E_B, .T = E_T + 3, .train = true};
    assert_int_equal(tf_run_open(&c.run, &c.tm, &ro), 0);
    const int N = E_B * E_T, V = cfg->vocab_size, D = cfg->dim;
    int tokens[E_B * E_T];
    for (int t = 0; t < N; t++) tokens[t] = (int)(urand() * V);
    tokens[3] = tokens[1];      /* a repeated token: embedding rows accumulate */
    tokens[E_T + 2] = tokens[1]; /* across sequences too */
    c.tokens = tokens;
    float *host = malloc((size_t)N * (V > D ? V : D) * sizeof *host);
    fill(host, (size_t)N * V, 1.5);
    c.zt = tb_act(host, (size_t)N * V);
    c.dlog = tb_act(NULL, (size_t)N * V);
    c.loss = tb_new(GF_F64, NULL, GF_F64, 1);
    for (int l = 0; l < 4; l++) c.targets[l] = c.dafter[l] = gf_none();
    for (int l = 0; l < cfg->n_layers; l += 2) {
        fill(host, (size_t)N * D, 1);
        c.targets[l] = tb_act(host, (size_t)N * D);
        c.dafter[l] = tb_act(NULL, (size_t)N * D);
    }
    tf_zero_grads(&c.tm);
    const double l0 = e2e_loss(&c, true);
    assert_true(isfinite(l0) && l0 > 0);
    const param_layout *pl = &c.tm.layout;
    bool saw_gdn = false;
    for (int i = 0; i < pl->n; i++) {
        const param_entry *t = &pl->t[i];
        saw_gdn |= t->kind == TK_GDN;
        float *g = malloc(t->n * 4), *p = malloc(t->n * 4);
        tb_get(g, gf_at(c.tm.grads, t->off), t->n);
        tb_get(p, gf_at(c.tm.params, t->off), t->n);
        if (!(max_abs_f(g, t->n) > 0)) {
            fprintf(stderr, "%s: all-zero (or non-finite) gradient\n", t->name);
            fail();
        }
        param_probe probe = {&c, t->off, p, t->n};
        check_fd(t->name, p, t->n, g, e2e_obj, &probe, 24);
        be_upload(BE, gf_at(c.tm.params, t->off), p, GF_F32, t->n); /* restored */
        free(g);
        free(p);
    }
    assert_true(saw_gdn == with_gdn);
    /* gradients accumulate (micro-batches): a second backward doubles every one of them, the
     * matrices the first wrote included (float32: 1e-5 relative) */
    const size_t n0 = pl->total;
    float *g1 = malloc(n0 * 4), *g2 = malloc(n0 * 4);
    tb_get(g1, c.tm.grads, n0);
    e2e_loss(&c, true);
    tb_get(g2, c.tm.grads, n0);
    for (size_t j = 0; j < n0; j++) check_close(g2[j], 2 * g1[j], 1e-5, 1e-5);
    free(g1);
    free(g2);
    check_first_writes(&c);
    free(host);
    for (int l = 0; l < 4; l++) tb_free(&c.targets[l]), tb_free(&c.dafter[l]);
    tb_free(&c.zt), tb_free(&c.dlog), tb_free(&c.loss), tb_free(&blocks[1]);
    tf_run_close(c.run);
    tf_free(&c.tm);
    model_free(&m);
}

static model_config tiny_cfg(void) {
    model_config c = {0};
    c.dim = 16, c.hidden_dim = 24, c.n_layers = 3, c.n_heads = 4, c.n_kv_heads = 2, c.head_dim = 4;
    c.vocab_size = 29, c.max_seq = 64, c.norm_eps = 1e-5f, c.rope_theta = 10000.0f;
    return c;
}

static void test_e2e_qwen_like(void **state) { /* biases, q/k norm, HALF rope, untied, GDN in layer 1 */
    (void)state;
    model_config c = tiny_cfg();
    c.qkv_bias = c.qk_norm = true;
    c.rope_pairing = ROPE_HALF;
    run_e2e(&c, true);
}

static void test_e2e_llama_like(void **state) { /* ADJACENT rope, llama3 scaling, tied, all attention */
    (void)state;
    model_config c = tiny_cfg();
    c.rope_pairing = ROPE_ADJACENT;
    c.tied_embeddings = true;
    c.rope_scaling = (rope_scaling){.type = ROPE_SCALING_LLAMA3, .factor = 8, .low_freq_factor = 1, .high_freq_factor = 4, .original_max_pos = 8};
    run_e2e(&c, false);
}

static void test_e2e_tied_gdn(void **state) { /* tied + GDN, MHA (no GQA) */
    (void)state;
    model_config c = tiny_cfg();
    c.n_kv_heads = 4;
    c.tied_embeddings = true;
    run_e2e(&c, true);
}

/* check.h catches what the old comparisons let through: a NaN analytic
 * gradient must fail the FD comparison (close_enough), and a NaN in an error
 * maximum must fail check_err (worst() keeps it). */
static void test_nan_is_caught(void **state) {
    (void)state;
    assert_false(close_enough(NAN, 1.0, 1e-3, 0));
    assert_false(close_enough(1.0, NAN, 1e-3, 0));
    assert_false(close_enough(INFINITY, INFINITY, 1e-3, 0));
    const float a[3] = {1, NAN, 3}, b[3] = {1, 2, 3};
    assert_true(isinf(max_abs_diff_ff(a, b, 3)));
    assert_true(isinf(worst(0.5, NAN)) && isinf(worst(NAN, 0.5)));
    assert_false(isfinite(max_abs_f(a, 3)));
    /* the old idiom: fmax() drops the NaN and `err > tol` is false for NaN */
    double err = fmax(0.0, NAN);
    assert_true(err == 0.0 && !(NAN > 1e-3));
}

int main(void) {
    tb_device_from_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nan_is_caught),
        cmocka_unit_test(test_linear_backward),    cmocka_unit_test(test_rmsnorm_backward),
        cmocka_unit_test(test_swiglu_backward),    cmocka_unit_test(test_rope_backward),
        cmocka_unit_test(test_attention_backward), cmocka_unit_test(test_losses_backward),
        cmocka_unit_test(test_losses_vocabulary_wide),
        cmocka_unit_test(test_embedding_backward), cmocka_unit_test(test_e2e_qwen_like),
        cmocka_unit_test(test_e2e_llama_like),     cmocka_unit_test(test_e2e_tied_gdn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
