/* Gradient checks for training (engine/ops/ops_backward, engine/train):
 * - every op backward against central finite differences of a random linear
 *   functional sum(r * op(x)), in float32 with eps and tolerances stated below;
 * - the whole hybrid (embedding, RMSNorm, attention with RoPE + GQA, q/k norm,
 *   biases, SwiGLU, a GDN mixer layer, tied and untied LM heads) end to end:
 *   KL-with-temperature + hidden-alignment loss, every parameter tensor sampled.
 * Float32 FD: eps = 1e-3 on O(1) inputs (1e-2 leaves a visible O(eps^2)
 * truncation error through the softmaxes; the rounding error is about
 * 1e-7 * |loss| / eps = 1e-4 * |loss|), and we accept
 * |fd - analytic| <= 2e-3 * max|analytic of that tensor| + 2e-4. */
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
#include "attention/attention_train.h"
#include "ops/ops.h"
#include "ops/ops_backward.h"
#include "train/gdn_train_mixer.h"
#include "train/losses.h"
#include "train/params.h"
#include "train/train_model.h"

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
    double amax = 0;
    for (size_t i = 0; i < n; i++) amax = fmax(amax, fabs(analytic[i]));
    size_t step = samples && n > samples ? n / samples : 1;
    double worst = 0;
    for (size_t i = 0; i < n; i += step) {
        const float x0 = x[i];
        x[i] = x0 + FD_EPS;
        const double fp = f(ud);
        x[i] = x0 - FD_EPS;
        const double fm = f(ud);
        x[i] = x0;
        const double fd = (fp - fm) / (2.0 * FD_EPS);
        const double err = fabs(fd - analytic[i]);
        const double tol = FD_REL * amax + FD_ABS;
        if (err > tol) {
            fprintf(stderr, "%s[%zu]: analytic %.6g, finite difference %.6g (tol %.3g)\n", what, i, analytic[i], fd,
                    tol);
            fail();
        }
        worst = fmax(worst, err / (amax > 0 ? amax : 1));
    }
    (void)worst;
}

/* ------------------------------------------------------------------ per op */

typedef struct {
    int T, in, out, n, F, nh, hd;
    float *x, *W, *b, *w, *r, *y, *gate, *up;
    const double *inv_freq;
    attn_shape s;
    float *q, *k, *v;
    rope_pairing pairing;
} op_case;

static double f_linear(void *ud) {
    op_case *c = ud;
    op_linear(c->y, c->x, c->W, c->b, c->T, c->in, c->out);
    return dotd(c->y, c->r, (size_t)c->T * c->out);
}

static void test_linear_backward(void **state) {
    (void)state;
    op_case c = {.T = 5, .in = 7, .out = 6};
    c.x = malloc(35 * 4), c.W = malloc(42 * 4), c.b = malloc(6 * 4), c.r = malloc(30 * 4), c.y = malloc(30 * 4);
    fill(c.x, 35, 1), fill(c.W, 42, 1), fill(c.b, 6, 1), fill(c.r, 30, 1);
    float dx[35], dW[42] = {0}, db[6] = {0};
    op_linear_backward(dx, dW, db, c.r, c.x, c.W, 5, 7, 6, false);
    check_fd("linear dx", c.x, 35, dx, f_linear, &c, 0);
    check_fd("linear dW", c.W, 42, dW, f_linear, &c, 0);
    check_fd("linear db", c.b, 6, db, f_linear, &c, 0);
    /* accumulation: a second call adds exactly the same amount */
    float dx2[35];
    memcpy(dx2, dx, sizeof dx);
    op_linear_backward(dx2, NULL, NULL, c.r, c.x, c.W, 5, 7, 6, true);
    for (int i = 0; i < 35; i++) assert_true(fabsf(dx2[i] - 2 * dx[i]) <= 1e-5f * (1 + fabsf(dx[i])));
    free(c.x), free(c.W), free(c.b), free(c.r), free(c.y);
}

static double f_rmsnorm(void *ud) {
    op_case *c = ud;
    op_rmsnorm(c->y, c->x, c->w, c->T, c->n, 1e-5f);
    return dotd(c->y, c->r, (size_t)c->T * c->n);
}

static void test_rmsnorm_backward(void **state) {
    (void)state;
    enum { T = 4, N = 9 };
    op_case c = {.T = T, .n = N};
    float x[T * N], w[N], r[T * N], y[T * N], dx[T * N], dw[N] = {0};
    c.x = x, c.w = w, c.r = r, c.y = y;
    fill(x, T * N, 1), fill_u(w, N, 0.5, 1.5), fill(r, T * N, 1);
    op_rmsnorm_backward(dx, dw, r, x, w, T, N, 1e-5f, false);
    check_fd("rmsnorm dx", x, T * N, dx, f_rmsnorm, &c, 0);
    check_fd("rmsnorm dw", w, N, dw, f_rmsnorm, &c, 0);
}

static double f_swiglu(void *ud) {
    op_case *c = ud;
    memcpy(c->y, c->gate, (size_t)c->T * c->F * 4);
    op_swiglu(c->y, c->up, c->T, c->F);
    return dotd(c->y, c->r, (size_t)c->T * c->F);
}

static void test_swiglu_backward(void **state) {
    (void)state;
    enum { T = 3, F = 8 };
    float g[T * F], u[T * F], r[T * F], y[T * F], dg[T * F], du[T * F];
    op_case c = {.T = T, .F = F, .gate = g, .up = u, .r = r, .y = y};
    fill(g, T * F, 2), fill(u, T * F, 1), fill(r, T * F, 1);
    op_swiglu_backward(dg, du, r, g, u, T, F);
    check_fd("swiglu dgate", g, T * F, dg, f_swiglu, &c, 0);
    check_fd("swiglu dup", u, T * F, du, f_swiglu, &c, 0);
}

static double f_rope(void *ud) {
    op_case *c = ud;
    memcpy(c->y, c->x, (size_t)c->T * c->nh * c->hd * 4);
    op_rope(c->y, c->inv_freq, c->T, c->nh, c->hd, 3, c->pairing);
    return dotd(c->y, c->r, (size_t)c->T * c->nh * c->hd);
}

static void test_rope_backward(void **state) {
    (void)state;
    enum { T = 5, NH = 2, HD = 8 };
    model_config cfg = {.head_dim = HD, .rope_theta = 10000.0f};
    cfg.rope_scaling = (rope_scaling){.type = ROPE_SCALING_LLAMA3, .factor = 8, .low_freq_factor = 1, .high_freq_factor = 4, .original_max_pos = 16};
    double inv[HD / 2];
    rope_inv_freq(inv, &cfg);
    float x[T * NH * HD], r[T * NH * HD], y[T * NH * HD], dx[T * NH * HD];
    for (int p = 0; p < 2; p++) {
        op_case c = {.T = T, .nh = NH, .hd = HD, .x = x, .r = r, .y = y, .inv_freq = inv};
        c.pairing = p ? ROPE_ADJACENT : ROPE_HALF;
        fill(x, sizeof x / 4, 1), fill(r, sizeof r / 4, 1);
        memcpy(dx, r, sizeof r);
        op_rope_backward(dx, inv, T, NH, HD, 3, c.pairing);
        check_fd(p ? "rope adjacent" : "rope half", x, sizeof x / 4, dx, f_rope, &c, 0);
    }
}

static double f_attn(void *ud) {
    op_case *c = ud;
    attention_forward(c->y, c->q, c->k, c->v, &c->s, c->T, 0, NULL, 0);
    return dotd(c->y, c->r, (size_t)c->T * c->s.n_heads * c->s.head_dim);
}

static void test_attention_backward(void **state) {
    (void)state;
    enum { T = 6, H = 4, KV = 2, HD = 4 };
    float q[T * H * HD], k[T * KV * HD], v[T * KV * HD], r[T * H * HD], y[T * H * HD];
    float dq[T * H * HD], dk[T * KV * HD], dv[T * KV * HD];
    op_case c = {.T = T, .q = q, .k = k, .v = v, .r = r, .y = y, .s = {H, KV, HD}};
    fill(q, sizeof q / 4, 1), fill(k, sizeof k / 4, 1), fill(v, sizeof v / 4, 1), fill(r, sizeof r / 4, 1);
    attention_backward(dq, dk, dv, r, q, k, v, &c.s, T);
    check_fd("attention dq", q, sizeof q / 4, dq, f_attn, &c, 0);
    check_fd("attention dk (GQA)", k, sizeof k / 4, dk, f_attn, &c, 0);
    check_fd("attention dv (GQA)", v, sizeof v / 4, dv, f_attn, &c, 0);
}

/* The sgemm form used in training (probabilities kept) against the row-wise
 * forward and the recomputing backward checked above. */
static void test_attention_train_matches(void **state) {
    (void)state;
    enum { T = 9, H = 6, KV = 2, HD = 8 };
    const attn_shape sh = {H, KV, HD};
    float q[T * H * HD], k[T * KV * HD], v[T * KV * HD], r[T * H * HD], y1[T * H * HD], y2[T * H * HD];
    float dq1[T * H * HD], dk1[T * KV * HD], dv1[T * KV * HD], dq2[T * H * HD], dk2[T * KV * HD], dv2[T * KV * HD];
    float P[H * T * T], scratch[H * T * T];
    fill(q, sizeof q / 4, 1), fill(k, sizeof k / 4, 1), fill(v, sizeof v / 4, 1), fill(r, sizeof r / 4, 1);
    attention_forward(y1, q, k, v, &sh, T, 0, NULL, 0);
    attention_train_forward(y2, P, q, k, v, &sh, T);
    attention_backward(dq1, dk1, dv1, r, q, k, v, &sh, T);
    attention_train_backward(dq2, dk2, dv2, r, P, q, k, v, &sh, T, scratch);
    for (int i = 0; i < T * H * HD; i++) {
        assert_true(fabsf(y1[i] - y2[i]) < 1e-5f);
        assert_true(fabsf(dq1[i] - dq2[i]) < 1e-5f);
    }
    for (int i = 0; i < T * KV * HD; i++) assert_true(fabsf(dk1[i] - dk2[i]) < 1e-5f && fabsf(dv1[i] - dv2[i]) < 1e-5f);
    for (int h = 0; h < H; h++) /* causal: nothing above the diagonal; rows sum to 1 */
        for (int t = 0; t < T; t++) {
            double sum = 0;
            for (int j = 0; j < T; j++) {
                if (j > t) assert_true(P[(h * T + t) * T + j] == 0.0f);
                sum += P[(h * T + t) * T + j];
            }
            assert_true(fabs(sum - 1) < 1e-5);
        }
}

typedef struct {
    int T, V, D;
    float *zs, *zt, *dz, *s, *t;
    int *targets;
    float tau;
    int kind;
} loss_case;

static double f_loss(void *ud) {
    loss_case *c = ud;
    float *scratch = malloc((size_t)c->T * (c->V > c->D ? c->V : c->D) * 4);
    double l = c->kind == 0   ? loss_kl_rows(scratch, c->zs, c->zt, c->T, c->V, c->tau, 1)
               : c->kind == 1 ? loss_ce_rows(scratch, c->zs, c->targets, c->T, c->V, 1)
                              : loss_align_rows(NULL, c->s, c->t, c->T, c->D, 1);
    free(scratch);
    return l;
}

static void test_losses_backward(void **state) {
    (void)state;
    enum { T = 3, V = 11, D = 6 };
    float zs[T * V], zt[T * V], dz[T * V], s[T * D], t[T * D], ds[T * D] = {0};
    int tg[T] = {1, 7, 10};
    loss_case c = {T, V, D, zs, zt, dz, s, t, tg, 2.0f, 0};
    fill(zs, T * V, 2), fill(zt, T * V, 2), fill(s, T * D, 1), fill(t, T * D, 1);
    double kl = loss_kl_rows(dz, zs, zt, T, V, 2.0f, 1);
    assert_true(kl > 0);
    check_fd("kl(tau=2) dz", zs, T * V, dz, f_loss, &c, 0);
    /* KL of a distribution with itself is 0 with a 0 gradient */
    assert_true(fabs(loss_kl_rows(dz, zt, zt, T, V, 2.0f, 1)) < 1e-6);
    for (int i = 0; i < T * V; i++) assert_true(fabsf(dz[i]) < 1e-6f);
    c.kind = 1;
    loss_ce_rows(dz, zs, tg, T, V, 1);
    check_fd("cross-entropy dz", zs, T * V, dz, f_loss, &c, 0);
    c.kind = 2;
    loss_align_rows(ds, s, t, T, D, 1);
    check_fd("alignment ds", s, T * D, ds, f_loss, &c, 0);
}

static void test_embedding_backward(void **state) {
    (void)state;
    float dE[4 * 2] = {0}, dx[3 * 2] = {1, 2, 3, 4, 5, 6};
    int tok[3] = {2, 0, 2};
    op_embedding_backward(dE, dx, tok, 3, 2);
    const float want[8] = {3, 4, 0, 0, 6, 8, 0, 0};
    for (int i = 0; i < 8; i++) assert_true(dE[i] == want[i]);
}

/* ---------------------------------------------------------------- end to end */

enum { E_T = 7 };

typedef struct {
    train_model tm;
    const int *tokens;
    float *zt;               /* teacher logits [T, V] */
    float *targets[4];       /* alignment targets per layer (NULL: not aligned) */
    float tau;
    double align_weight;
} e2e_case;

static double e2e_loss(e2e_case *c, bool backward) {
    train_model *tm = &c->tm;
    const int T = E_T, V = tm->cfg.vocab_size, D = tm->cfg.dim, L = tm->cfg.n_layers;
    assert_int_equal(train_forward(tm, c->tokens, T), 0);
    train_logits(tm, T);
    double loss = loss_kl_rows(tm->dlogits, tm->logits, c->zt, T, V, c->tau, 1.0f / T) / T;
    float *dafter[4] = {0};
    for (int l = 0; l < L; l++)
        if (c->targets[l]) {
            dafter[l] = calloc((size_t)T * D, 4);
            loss += c->align_weight *
                    loss_align_rows(dafter[l], train_layer_output(tm, l), c->targets[l], T, D,
                                    (float)(c->align_weight / T)) / T;
        }
    if (backward) assert_int_equal(train_backward(tm, c->tokens, T, tm->dlogits, dafter), 0);
    for (int l = 0; l < L; l++) free(dafter[l]);
    return loss;
}
static double e2e_obj(void *ud) { return e2e_loss(ud, false); }

static void run_e2e(model_config *cfg, bool with_gdn) {
    model_weights w;
    model_weights_alloc(&w, cfg);
    fill(w.block, w.n_floats, 0.35);
    for (int l = 0; l < cfg->n_layers; l++) {
        layer_weights *lw = &w.layers[l];
        fill_u(lw->attn_norm, cfg->dim, 0.8, 1.2);
        fill_u(lw->ffn_norm, cfg->dim, 0.8, 1.2);
        if (lw->q_norm) fill_u(lw->q_norm, cfg->head_dim, 0.8, 1.2), fill_u(lw->k_norm, cfg->head_dim, 0.8, 1.2);
    }
    fill_u(w.final_norm, cfg->dim, 0.8, 1.2);
    gdn_train_mixer gm;
    train_mixer mixers[4] = {0};
    if (with_gdn) {
        gdn_config gc;
        gdn_config_default(&gc, cfg->dim, cfg->n_heads, cfg->head_dim);
        gc.chunk = 16;
        gc.conv = 1;
        gc.qkv_bias = 1;
        assert_int_equal(gdn_train_mixer_init(&gm, &gc), 0);
        fill(gm.p.block, gm.p.n, 0.35);
        fill_u(gm.p.w_norm, gc.dv, 0.8, 1.2);
        gdn_train_mixer_bind(&gm, &mixers[1]);
    }
    e2e_case c = {.tau = 1.7f, .align_weight = 0.5};
    assert_int_equal(train_model_init(&c.tm, cfg, &w, true, true, with_gdn ? mixers : NULL, E_T + 3), 0);
    int tokens[E_T];
    for (int t = 0; t < E_T; t++) tokens[t] = (int)(urand() * cfg->vocab_size);
    tokens[3] = tokens[1]; /* a repeated token: embedding rows accumulate */
    c.tokens = tokens;
    c.zt = malloc((size_t)E_T * cfg->vocab_size * 4);
    fill(c.zt, (size_t)E_T * cfg->vocab_size, 1.5);
    for (int l = 0; l < cfg->n_layers; l += 2) {
        c.targets[l] = malloc((size_t)E_T * cfg->dim * 4);
        fill(c.targets[l], (size_t)E_T * cfg->dim, 1);
    }
    train_zero_grads(&c.tm);
    const double l0 = e2e_loss(&c, true);
    assert_true(isfinite(l0) && l0 > 0);
    param_list pl;
    param_list_build(&pl, &c.tm);
    bool saw_gdn = false;
    for (int i = 0; i < pl.n; i++) {
        param_tensor *t = &pl.t[i];
        saw_gdn |= t->is_gdn;
        double gmax = 0;
        for (size_t j = 0; j < t->n; j++) gmax = fmax(gmax, fabs(t->g[j]));
        if (gmax == 0) {
            fprintf(stderr, "%s: all-zero gradient\n", t->name);
            fail();
        }
        /* copy: the check perturbs p while backward must not run again */
        float *g = malloc(t->n * 4);
        memcpy(g, t->g, t->n * 4);
        check_fd(t->name, t->p, t->n, g, e2e_obj, &c, 24);
        free(g);
    }
    assert_true(saw_gdn == with_gdn);
    /* gradients accumulate: a second backward doubles them */
    float *g1 = malloc(pl.t[0].n * 4);
    memcpy(g1, pl.t[0].g, pl.t[0].n * 4);
    e2e_loss(&c, true);
    for (size_t j = 0; j < pl.t[0].n; j++) assert_true(fabsf(pl.t[0].g[j] - 2 * g1[j]) <= 1e-5f * (1 + fabsf(g1[j])));
    free(g1);
    param_list_free(&pl);
    for (int l = 0; l < 4; l++) free(c.targets[l]);
    free(c.zt);
    train_model_free(&c.tm);
    if (with_gdn) gdn_train_mixer_free(&gm);
    model_weights_free(&w);
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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_linear_backward),    cmocka_unit_test(test_rmsnorm_backward),
        cmocka_unit_test(test_swiglu_backward),    cmocka_unit_test(test_rope_backward),
        cmocka_unit_test(test_attention_backward), cmocka_unit_test(test_attention_train_matches),
        cmocka_unit_test(test_losses_backward),
        cmocka_unit_test(test_embedding_backward), cmocka_unit_test(test_e2e_qwen_like),
        cmocka_unit_test(test_e2e_llama_like),     cmocka_unit_test(test_e2e_tied_gdn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
