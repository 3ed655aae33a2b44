/* Unit tests for the Gated DeltaNet layer (engine/gdn on the backend, and the
 * float64 reference engine/gdn/gdn_ref.h built from the same templates):
 * - recurrent vs chunked forward (core and whole layer), float32 and double;
 * - central finite-difference gradient checks in double for every parameter and x;
 * - the float32 production path (backend ops composed by gdn_layer.c) against
 *   the double one (forward and gradients);
 * - streaming (carried state + conv history) against one call;
 * - a hand-computed T = 2 case; config validation; GQA expansion.
 * Every comparison goes through check.h (fails on NaN / Inf). */
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
#include "gdn/gdn.h"
#include "gdn/gdn_layer.h"
#include "gdn/gdn_ref.h"
#include "student/gdn_transfer.h"
#include "be_util.h"
#include "check.h"

/* ------------------------------------------------------------ random numbers */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static void rng_seed(uint64_t s) { rng_state = s * 0x9E3779B97F4A7C15ull + 1; }
static double rng_uniform(void) { /* (0, 1) */
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return ((double)(rng_state >> 11) + 0.5) / 9007199254740992.0;
}
static double rng_normal(void) {
    return sqrt(-2.0 * log(rng_uniform())) * cos(6.283185307179586 * rng_uniform());
}
static void fill_normal(double *a, size_t n, double std) {
    for (size_t i = 0; i < n; i++) a[i] = std * rng_normal();
}

static double max_abs(const double *a, size_t n) { return max_abs_d(a, n); }
static double rel_err_d(const double *a, const double *b, size_t n) { return rel_err_dd(a, b, n); }

/* ------------------------------------------------------------- core inputs */

typedef struct {
    gdn_core_shape s;
    double *q, *k, *v, *g, *beta; /* double master copy */
    size_t nqk, nv, nh;
} core_case;

static void l2_rows(double *a, size_t rows, int d) {
    for (size_t r = 0; r < rows; r++) {
        double ss = 0;
        for (int j = 0; j < d; j++) ss += a[r * d + j] * a[r * d + j];
        for (int j = 0; j < d; j++) a[r * d + j] /= sqrt(ss);
    }
}

static void core_case_make(core_case *c, int B, int T, int H, int dk, int dv, int chunk) {
    memset(c, 0, sizeof *c);
    c->s = (gdn_core_shape){B, T, H, dk, dv, chunk, 1.0 / sqrt((double)dk), GDN_FORM_CHUNKED};
    c->nh = (size_t)B * T * H;
    c->nqk = c->nh * dk;
    c->nv = c->nh * dv;
    c->q = malloc(c->nqk * sizeof(double));
    c->k = malloc(c->nqk * sizeof(double));
    c->v = malloc(c->nv * sizeof(double));
    c->g = malloc(c->nh * sizeof(double));
    c->beta = malloc(c->nh * sizeof(double));
    fill_normal(c->q, c->nqk, 1);
    fill_normal(c->k, c->nqk, 1);
    l2_rows(c->q, c->nh, dk);
    l2_rows(c->k, c->nh, dk);
    fill_normal(c->v, c->nv, 1);
    for (size_t i = 0; i < c->nh; i++) {
        c->g[i] = -0.5 * rng_uniform();   /* decays in (0.6, 1) */
        c->beta[i] = rng_uniform();
    }
}

static void core_case_free(core_case *c) {
    free(c->q);
    free(c->k);
    free(c->v);
    free(c->g);
    free(c->beta);
}

static float *to_float(const double *a, size_t n) {
    float *f = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) f[i] = (float)a[i];
    return f;
}

/* The backend's float32 core (be_gdn_core) on host arrays; ck may be NULL. */
static void core_f32(const gdn_core_shape *cs, const float *q, const float *k, const float *v, const float *g,
                     const float *beta, float *o, float *ck) {
    const size_t nqk = (size_t)cs->B * cs->T * cs->H * cs->dk, nv = (size_t)cs->B * cs->T * cs->H * cs->dv;
    const size_t nh = (size_t)cs->B * cs->T * cs->H;
    const size_t nck = (size_t)cs->B * cs->H * ((cs->T + cs->chunk - 1) / cs->chunk) * cs->dv * cs->dk;
    gf_buf Q = tb_act(q, nqk), K = tb_act(k, nqk), V = tb_act(v, nv), G = tb_f32(g, nh), Bt = tb_f32(beta, nh);
    gf_buf O = tb_act(NULL, nv), C = ck ? tb_f32(NULL, nck) : gf_none();
    const gf_gdn_shape sh = {cs->B, cs->T, cs->H, cs->dk, cs->dv, cs->chunk, (float)cs->scale,
                             cs->form == GDN_FORM_RECURRENT, false};
    be_gdn_core(be_default(), O, C, gf_none(), Q, K, V, G, Bt, &sh);
    assert_int_equal(be_sync(be_default()), 0);
    tb_get(o, O, nv);
    if (ck) tb_get(ck, C, nck);
    tb_free(&Q), tb_free(&K), tb_free(&V), tb_free(&G), tb_free(&Bt), tb_free(&O), tb_free(&C);
}

/* Recurrent and chunked core forward agree (float32 and double), checkpoints too. */
static void core_forms_agree(void **state) {
    (void)state;
    const int chunks[] = {16, 32, 64};
    const int lens[] = {1, 17, 63, 64, 65, 100, 130, 200};
    double worst_f = 0, worst_d = 0;
    rng_seed(1);
    for (size_t ci = 0; ci < 3; ci++)
        for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
            core_case c;
            core_case_make(&c, 2, lens[li], 2, 16, 26, chunks[ci]);   /* dv 26: 4-row blocks + tail */
            int nc = (c.s.T + c.s.chunk - 1) / c.s.chunk;
            size_t nck = (size_t)2 * 2 * nc * 16 * 26;
            float *qf = to_float(c.q, c.nqk), *kf = to_float(c.k, c.nqk), *vf = to_float(c.v, c.nv);
            float *gf = to_float(c.g, c.nh), *bf = to_float(c.beta, c.nh);
            float *o_rec = malloc(c.nv * sizeof(float)), *o_chk = malloc(c.nv * sizeof(float));
            float *ck_rec = malloc(nck * sizeof(float)), *ck_chk = malloc(nck * sizeof(float));
            double *od_rec = malloc(c.nv * sizeof(double)), *od_chk = malloc(c.nv * sizeof(double));

            c.s.form = GDN_FORM_RECURRENT;
            core_f32(&c.s, qf, kf, vf, gf, bf, o_rec, ck_rec);
            gdn_core_forward_f64(&c.s, c.q, c.k, c.v, c.g, c.beta, od_rec, NULL);
            c.s.form = GDN_FORM_CHUNKED;
            core_f32(&c.s, qf, kf, vf, gf, bf, o_chk, ck_chk);
            gdn_core_forward_f64(&c.s, c.q, c.k, c.v, c.g, c.beta, od_chk, NULL);

            double ef = rel_err_ff(o_chk, o_rec, c.nv), ed = rel_err_d(od_chk, od_rec, c.nv);
            double eck = rel_err_ff(ck_chk, ck_rec, nck), e32 = rel_err_fd(o_rec, od_rec, c.nv);
            worst_f = fmax(worst_f, fmax(ef, eck));
            worst_d = fmax(worst_d, ed);
            if (!(ef <= 1e-5 && eck <= 1e-5 && ed <= 1e-12 && e32 <= 1e-5))
                print_message("chunk %d T %d: float %.3g ckpt %.3g double %.3g f32-vs-f64 %.3g\n",
                              chunks[ci], lens[li], ef, eck, ed, e32);
            check_err(ef, 1e-5);    /* float32: chunked vs recurrent */
            check_err(eck, 1e-5);   /* states at chunk boundaries */
            check_err(ed, 1e-12);   /* same in double: the algebra is exact */
            check_err(e32, 1e-5);   /* float32 recurrent vs double */
            assert_true(max_abs(od_rec, c.nv) > 1e-3);   /* outputs are not trivially 0 */
            free(qf); free(kf); free(vf); free(gf); free(bf);
            free(o_rec); free(o_chk); free(ck_rec); free(ck_chk); free(od_rec); free(od_chk);
            core_case_free(&c);
        }
    print_message("core forms: worst float32 rel err %.2e, double %.2e\n", worst_f, worst_d);
}

/* T = 2, one head, dk = dv = 2: states and outputs written out by hand. */
static void core_hand_checked(void **state) {
    (void)state;
    double q[4] = {0.8, 0.6, 0.0, 1.0};   /* q1, q2 (unit) */
    double k[4] = {1.0, 0.0, 0.6, 0.8};   /* k1, k2 (unit) */
    double v[4] = {1.0, 2.0, -1.0, 0.5};
    double g[2] = {-0.1, -0.5}, beta[2] = {0.5, 0.8};
    double s = 1 / sqrt(2.0);
    /* S1 = beta1 v1 k1^T = [[0.5, 0], [1, 0]] (S0 = 0, the decay does not matter).
     * o1 = S1 (s q1) = s (0.4, 0.8). */
    double o1[2] = {s * 0.4, s * 0.8};
    /* S2 = a2 S1 (I - beta2 k2 k2^T) + beta2 v2 k2^T, a2 = e^-0.5.
     * I - 0.8 k2 k2^T = [[1 - 0.288, -0.384], [-0.384, 1 - 0.512]] = [[0.712, -0.384], [-0.384, 0.488]]
     * S1 (..) = [[0.356, -0.192], [0.712, -0.384]]
     * beta2 v2 k2^T = 0.8 [[-0.6, -0.8], [0.3, 0.4]] = [[-0.48, -0.64], [0.24, 0.32]] */
    double a2 = exp(-0.5);
    double S2[2][2] = {{a2 * 0.356 - 0.48, a2 * -0.192 - 0.64}, {a2 * 0.712 + 0.24, a2 * -0.384 + 0.32}};
    double o2[2] = {s * S2[0][1], s * S2[1][1]};   /* q2 = (0, 1) */
    double want[4] = {o1[0], o1[1], o2[0], o2[1]};

    for (int form = 0; form < 2; form++) {
        gdn_core_shape sh = {1, 2, 1, 2, 2, 16, s, form ? GDN_FORM_RECURRENT : GDN_FORM_CHUNKED};
        double od[4], ck[4];
        gdn_core_forward_f64(&sh, q, k, v, g, beta, od, ck);
        for (int i = 0; i < 4; i++) check_close(od[i], want[i], 1e-14, 0); /* double, a few operations */
        for (int i = 0; i < 4; i++) assert_true(ck[i] == 0);   /* one chunk, zero start */
        float qf[4], kf[4], vf[4], gf[2], bf[2], of[4];
        for (int i = 0; i < 4; i++) qf[i] = (float)q[i], kf[i] = (float)k[i], vf[i] = (float)v[i];
        for (int i = 0; i < 2; i++) gf[i] = (float)g[i], bf[i] = (float)beta[i];
        core_f32(&sh, qf, kf, vf, gf, bf, of, NULL);
        for (int i = 0; i < 4; i++) check_close(of[i], want[i], 1e-6, 0); /* float32 rounding of O(1) values */
    }
    /* chunks of one token: the checkpoint entering token 2 is S1 = [[0.5, 0], [1, 0]] */
    for (int form = 0; form < 2; form++) {
        gdn_core_shape sh = {1, 2, 1, 2, 2, 1, s, form ? GDN_FORM_RECURRENT : GDN_FORM_CHUNKED};
        double od[4], ck[8];
        gdn_core_forward_f64(&sh, q, k, v, g, beta, od, ck);
        const double S1[4] = {0.5, 0, 1, 0};
        for (int i = 0; i < 4; i++) check_close(od[i], want[i], 1e-14, 0);
        for (int i = 0; i < 4; i++) check_close(ck[4 + i], S1[i], 1e-15, 0);
    }
}

/* ------------------------------------------------------- whole-layer cases */

typedef struct {
    gdn_config cfg;
    int B, T, kv_heads;
    gdn_params_f64 p;
    double *x, *R;   /* [B, T, D] input and the fixed loss weights */
} layer_case;

static void layer_case_make(layer_case *L, int B, int T, int D, int H, int hd, int kv_heads,
                            int chunk, int options, gdn_scale_mode sm, gdn_form form) {
    memset(L, 0, sizeof *L);
    gdn_config_default(&L->cfg, D, H, hd);
    L->cfg.chunk = chunk;
    L->cfg.qkv_bias = options;
    L->cfg.conv = options;
    L->cfg.scale_mode = sm;
    L->cfg.form = form;
    assert_int_equal(gdn_config_check(&L->cfg), 0);
    L->B = B;
    L->T = T;
    L->kv_heads = kv_heads;
    gdn_params_alloc_f64(&L->p, &L->cfg);
    gdn_params_f64 *p = &L->p;
    size_t hk = (size_t)H * hd, Ds = (size_t)D;
    double w_std = 1.0 / sqrt((double)D);
    fill_normal(p->wq, hk * Ds, w_std);
    /* k, v: teacher-style KV heads repeated for their query groups (GQA expansion) */
    size_t kvn = (size_t)kv_heads * hd * Ds;
    double *kv = malloc(kvn * sizeof(double));
    fill_normal(kv, kvn, w_std);
    gdn_gqa_expand(p->wk, kv, sizeof(double), kv_heads, H / kv_heads, hd, D);
    fill_normal(kv, kvn, w_std);
    gdn_gqa_expand(p->wv, kv, sizeof(double), kv_heads, H / kv_heads, hd, D);
    free(kv);
    fill_normal(p->wg, hk * Ds, w_std);
    fill_normal(p->wa, (size_t)H * Ds, w_std);
    fill_normal(p->wb, (size_t)H * Ds, w_std);
    if (options) {
        fill_normal(p->bq, (size_t)gdn_qkv_width(&L->cfg), 0.3);
        for (size_t i = 0; i < (size_t)gdn_qkv_width(&L->cfg) * GDN_CONV_K; i++)
            p->conv_q[i] = 0.5 * rng_normal() + (i % GDN_CONV_K == GDN_CONV_K - 1 ? 1.0 : 0.0);
    }
    for (int h = 0; h < H; h++) {
        p->a_log[h] = log(0.5 + 2.0 * rng_uniform());
        p->dt_bias[h] = log(expm1(0.05 + 0.5 * rng_uniform()));   /* softplus^-1 */
    }
    for (int j = 0; j < hd; j++) p->w_norm[j] = 1.0 + 0.2 * rng_normal();
    fill_normal(p->wo, Ds * hk, 1.0 / sqrt((double)hk));
    size_t nx = (size_t)B * T * D;
    L->x = malloc(nx * sizeof(double));
    L->R = malloc(nx * sizeof(double));
    fill_normal(L->x, nx, 1.0);
    fill_normal(L->R, nx, 1.0);
}

static void layer_case_free(layer_case *L) {
    gdn_params_free_f64(&L->p);
    free(L->x);
    free(L->R);
}

static size_t nx_of(const layer_case *L) { return (size_t)L->B * L->T * L->cfg.D; }

/* L = sum(y * R). */
static double layer_loss(layer_case *L, gdn_cache_f64 *ca, double *y) {
    gdn_forward_f64(&L->cfg, &L->p, ca, L->x, y);
    double s = 0;
    for (size_t i = 0; i < nx_of(L); i++) s += y[i] * L->R[i];
    return s;
}

typedef struct { const char *name; size_t off, n; } tensor_ref;

static int tensor_list(const gdn_params_f64 *p, const gdn_config *c, tensor_ref *out) {
    size_t D = (size_t)c->D, H = (size_t)c->H, hk = H * c->dk, hv = H * c->dv;
    int n = 0;
#define T_(nm, ptr, cnt) out[n++] = (tensor_ref){nm, (size_t)((ptr) - p->block), (cnt)}
    T_("Wq", p->wq, hk * D);
    T_("Wk", p->wk, hk * D);
    T_("Wv", p->wv, hv * D);
    T_("Wg", p->wg, hv * D);
    T_("Wa", p->wa, H * D);
    T_("Wb", p->wb, H * D);
    if (p->bq) {
        T_("bq", p->bq, hk);
        T_("bk", p->bk, hk);
        T_("bv", p->bv, hv);
    }
    if (p->conv_q) {
        T_("conv_q", p->conv_q, hk * GDN_CONV_K);
        T_("conv_k", p->conv_k, hk * GDN_CONV_K);
        T_("conv_v", p->conv_v, hv * GDN_CONV_K);
    }
    T_("A_log", p->a_log, H);
    T_("dt_bias", p->dt_bias, H);
    T_("w_norm", p->w_norm, (size_t)c->dv);
    T_("Wo", p->wo, D * hv);
#undef T_
    return n;
}

/* Central differences on every parameter and every input element, in double. */
static void check_layer_gradients(layer_case *L, const char *label) {
    gdn_cache_f64 ca;
    gdn_cache_alloc_f64(&ca, &L->cfg, L->B, L->T);
    size_t nx = nx_of(L);
    double *y = malloc(nx * sizeof(double)), *dx = malloc(nx * sizeof(double));
    gdn_params_f64 grad;
    gdn_params_alloc_f64(&grad, &L->cfg);
    layer_loss(L, &ca, y);
    gdn_backward_f64(&L->cfg, &L->p, &ca, L->x, L->R, dx, &grad);

    const double h = 1e-5;
    tensor_ref refs[20];
    int nt = tensor_list(&L->p, &L->cfg, refs);
    size_t covered = 0;
    double worst = 0;
    for (int ti = 0; ti <= nt; ti++) {
        const char *name = ti < nt ? refs[ti].name : "x";
        size_t n = ti < nt ? refs[ti].n : nx;
        double *base = ti < nt ? L->p.block + refs[ti].off : L->x;
        const double *an = ti < nt ? grad.block + refs[ti].off : dx;
        double *fd = malloc(n * sizeof(double));
        for (size_t i = 0; i < n; i++) {
            double keep = base[i];
            base[i] = keep + h;
            double lp = layer_loss(L, &ca, y);
            base[i] = keep - h;
            double lm = layer_loss(L, &ca, y);
            base[i] = keep;
            fd[i] = (lp - lm) / (2 * h);
        }
        double err = rel_err_d(an, fd, n);
        if (!(err <= 1e-6))
            print_message("%s: %s grad rel err %.3g (max |fd| %.3g)\n", label, name, err,
                          max_abs(fd, n));
        check_err(err, 1e-6); /* central differences, h = 1e-5 in double: O(h^2) + 1e-11 / h */
        assert_true(max_abs(fd, n) > 1e-6);   /* every tensor actually influences L */
        worst = fmax(worst, err);
        if (ti < nt) covered += n;
        free(fd);
    }
    assert_int_equal(covered, L->p.n);   /* the list covers the whole block */
    print_message("%s: worst gradient rel err over %d tensors + x: %.2e\n", label, nt, worst);
    free(y);
    free(dx);
    gdn_params_free_f64(&grad);
    gdn_cache_free_f64(&ca);
}

static void grad_T5_chunk16_plain(void **state) {
    (void)state;
    rng_seed(11);
    layer_case L;
    layer_case_make(&L, 2, 5, 12, 3, 4, 1, 16, 0, GDN_SCALE_INV_SQRT_DK, GDN_FORM_CHUNKED);
    check_layer_gradients(&L, "T5 plain");
    layer_case_free(&L);
}

static void grad_T19_chunk16_bias_conv(void **state) {
    (void)state;
    rng_seed(12);
    layer_case L;
    layer_case_make(&L, 2, 19, 12, 3, 4, 1, 16, 1, GDN_SCALE_INV_SQRT_DK, GDN_FORM_CHUNKED);
    check_layer_gradients(&L, "T19 bias+conv");
    layer_case_free(&L);
}

/* head_dim 6: the recurrence runs one 4-row block plus a 2-row tail. */
static void grad_T19_recurrent_noscale(void **state) {
    (void)state;
    rng_seed(13);
    layer_case L;
    layer_case_make(&L, 2, 19, 12, 3, 6, 3, 16, 0, GDN_SCALE_NONE, GDN_FORM_RECURRENT);
    check_layer_gradients(&L, "T19 recurrent scale=none");
    layer_case_free(&L);
}

static void grad_T40_chunk16_three_chunks(void **state) {
    (void)state;
    rng_seed(14);
    layer_case L;
    layer_case_make(&L, 2, 40, 12, 3, 4, 1, 16, 1, GDN_SCALE_INV_SQRT_DK, GDN_FORM_CHUNKED);
    check_layer_gradients(&L, "T40 bias+conv");
    layer_case_free(&L);
}

/* The float32 production path: one GDN layer on the default backend
 * (gdn_layer_forward / gdn_layer_backward over backend buffers). */
typedef struct {
    gdn_config cfg;
    int B, T;
    gf_buf arena, block, grad, x, y, dy, dx;
    gdn_acts a;
    gdn_scratch s;
    gdn_state st;
    gdn_weights w, g;
} f32_layer;

static void f32_carve(f32_layer *F, arena *ar, bool train, bool state) {
    const size_t n = gdn_param_count(&F->cfg), nx = (size_t)F->B * F->T * F->cfg.D;
    const gf_dtype act = be_act(be_default());
    F->block = arena_take(ar, n, act);
    F->grad = arena_take(ar, n, GF_F32);
    F->x = arena_take(ar, nx, act);
    F->y = arena_take(ar, nx, act);
    F->dy = arena_take(ar, nx, act);
    F->dx = arena_take(ar, nx, act);
    gdn_acts_take(&F->a, ar, &F->cfg, F->B, F->T, gdn_keep_for(train, be_gdn_keeps_wy(be_default())), act);
    if (train) gdn_scratch_take(&F->s, ar, &F->cfg, F->B, F->T, act);
    if (state) gdn_state_take(&F->st, ar, &F->cfg, F->B, act);
}

/* params from the double case; B x T rows of x (from xs, row-major [B, T, D]). */
static void f32_open(f32_layer *F, const gdn_config *c, const double *params, int B, int T, bool train, bool state) {
    memset(F, 0, sizeof *F);
    F->cfg = *c, F->B = B, F->T = T;
    arena ar = {gf_none(), 0};
    f32_carve(F, &ar, train, state);
    assert_int_equal(be_alloc(be_default(), &F->arena, (ar.off + 3) / 4, GF_F32), 0);
    ar = (arena){F->arena, 0};
    f32_carve(F, &ar, train, state);
    const size_t n = gdn_param_count(c);
    be_upload(be_default(), F->block, params, GF_F64, n);
    be_zero(be_default(), F->grad, n);
    gdn_weights_bind(&F->w, c, F->block);
    gdn_weights_bind(&F->g, c, F->grad);
    if (state) gdn_state_zero(be_default(), &F->st, c, B);
}

static void f32_close(f32_layer *F) { tb_free(&F->arena); }

static void f32_forward(f32_layer *F, const double *x, float *y, bool with_state) {
    const size_t nx = (size_t)F->B * F->T * F->cfg.D;
    be_upload(be_default(), F->x, x, GF_F64, nx);
    gdn_layer_forward(be_default(), &F->cfg, &F->w, &F->a, F->x, F->y, gf_none(), with_state ? &F->st : NULL);
    assert_int_equal(be_sync(be_default()), 0);
    if (y) tb_get(y, F->y, nx);
}

static void f32_backward(f32_layer *F, const double *dy, float *dx) {
    const size_t nx = (size_t)F->B * F->T * F->cfg.D;
    be_upload(be_default(), F->dy, dy, GF_F64, nx);
    gdn_layer_backward(be_default(), &F->cfg, &F->w, &F->g, &F->a, &F->s, F->x, F->dy, dx ? F->dx : gf_none(), false, true);
    assert_int_equal(be_sync(be_default()), 0);
    if (dx) tb_get(dx, F->dx, nx);
}

/* float32 production path vs the double path: forward y and every gradient.
 * Large enough (B*H*T*dk*dv > GDN_PAR_MIN_WORK) that the OpenMP paths run.
 * Tolerance 1e-4 relative to each tensor's scale (float32 through ~100
 * recurrent steps and a few GEMMs of width 64). */
static void float_matches_double(void **state) {
    (void)state;
    for (int form = 0; form < 2; form++) {
        rng_seed(21);
        layer_case L;
        layer_case_make(&L, 2, 100, 64, 4, 64, 2, 32, 1, GDN_SCALE_INV_SQRT_DK,
                        form ? GDN_FORM_RECURRENT : GDN_FORM_CHUNKED);
        size_t nx = nx_of(&L);
        gdn_cache_f64 cd;
        gdn_cache_alloc_f64(&cd, &L.cfg, L.B, L.T);
        gdn_params_f64 gd;
        gdn_params_alloc_f64(&gd, &L.cfg);
        double *yd = malloc(nx * sizeof(double)), *dxd = malloc(nx * sizeof(double));
        gdn_forward_f64(&L.cfg, &L.p, &cd, L.x, yd);
        gdn_backward_f64(&L.cfg, &L.p, &cd, L.x, L.R, dxd, &gd);

        f32_layer F;
        f32_open(&F, &L.cfg, L.p.block, L.B, L.T, true, false);
        float *yf = malloc(nx * sizeof(float)), *dxf = malloc(nx * sizeof(float));
        const size_t no = (size_t)L.B * L.T * 4 * 64;
        float *of = malloc(no * sizeof(float)), *gf = malloc(L.p.n * sizeof(float));
        f32_forward(&F, L.x, yf, false);
        tb_get(of, F.a.o, no);
        f32_backward(&F, L.R, dxf);
        tb_get(gf, F.grad, L.p.n);

        check_err(rel_err_fd(yf, yd, nx), 1e-4);
        check_err(rel_err_fd(of, cd.o, no), 1e-4);
        tensor_ref refs[20];
        int nt = tensor_list(&L.p, &L.cfg, refs);
        for (int ti = 0; ti < nt; ti++) {
            double e = rel_err_fd(gf + refs[ti].off, gd.block + refs[ti].off, refs[ti].n);
            if (!(e <= 1e-4)) print_message("%s: float grad rel err %.3g\n", refs[ti].name, e);
            check_err(e, 1e-4);
        }
        check_err(rel_err_fd(dxf, dxd, nx), 1e-4);

        /* a second backward accumulates: gradients double (float32 sums: 1e-3 of 1 + |g|) */
        f32_backward(&F, L.R, NULL);
        tb_get(gf, F.grad, L.p.n);
        for (size_t i = 0; i < L.p.n; i++) check_close(gf[i], 2 * gd.block[i], 1e-3, 1e-3);

        free(yf); free(dxf); free(of); free(gf); free(yd); free(dxd);
        f32_close(&F);
        gdn_params_free_f64(&gd);
        gdn_cache_free_f64(&cd);
        layer_case_free(&L);
    }
}

/* The whole layer: chunked vs recurrent forward in float32, T not a multiple of C. */
static void layer_forms_agree(void **state) {
    (void)state;
    const int lens[] = {1, 63, 64, 65, 200};
    for (size_t li = 0; li < 5; li++) {
        rng_seed(31 + li);
        layer_case L;
        layer_case_make(&L, 2, lens[li], 64, 4, 64, 2, 64, 1, GDN_SCALE_INV_SQRT_DK,
                        GDN_FORM_CHUNKED);
        size_t nx = nx_of(&L);
        float *y1 = malloc(nx * sizeof(float)), *y2 = malloc(nx * sizeof(float));
        f32_layer F;
        f32_open(&F, &L.cfg, L.p.block, L.B, L.T, false, false);
        f32_forward(&F, L.x, y1, false);
        F.cfg.form = GDN_FORM_RECURRENT;
        f32_forward(&F, L.x, y2, false);
        double e = rel_err_ff(y1, y2, nx);
        if (!(e <= 1e-5)) print_message("layer T %d: chunked vs recurrent %.3g\n", lens[li], e);
        check_err(e, 1e-5);
        free(y1); free(y2);
        f32_close(&F);
        layer_case_free(&L);
    }
}

/* Feeding a sequence in pieces (prefill, single tokens, more pieces) through a
 * carried gdn_state gives the same y as one call; conv and biases on. */
static void streaming_matches_whole(void **state) {
    (void)state;
    rng_seed(41);
    layer_case L;
    layer_case_make(&L, 2, 100, 12, 3, 6, 1, 16, 1, GDN_SCALE_INV_SQRT_DK, GDN_FORM_CHUNKED);
    int B = L.B, T = L.T, D = L.cfg.D;
    size_t nx = nx_of(&L);
    double *y_all = malloc(nx * sizeof(double)), *y_parts = malloc(nx * sizeof(double));
    gdn_cache_f64 ca;
    gdn_cache_alloc_f64(&ca, &L.cfg, B, T);
    gdn_forward_f64(&L.cfg, &L.p, &ca, L.x, y_all);
    gdn_cache_free_f64(&ca);

    const int pieces[] = {37, 1, 1, 1, 2, 18, 40};
    for (int form = 0; form < 2; form++) {
        L.cfg.form = form ? GDN_FORM_RECURRENT : GDN_FORM_CHUNKED;
        gdn_state_f64 st;
        gdn_state_alloc_f64(&st, &L.cfg, B);
        int t0 = 0;
        for (size_t pi = 0; pi < sizeof pieces / sizeof *pieces; pi++) {
            int n = pieces[pi];
            double *xs = malloc((size_t)B * n * D * sizeof(double)), *ys = malloc((size_t)B * n * D * sizeof(double));
            for (int b = 0; b < B; b++)
                memcpy(xs + (size_t)b * n * D, L.x + ((size_t)b * T + t0) * D, (size_t)n * D * sizeof(double));
            gdn_cache_alloc_f64(&ca, &L.cfg, B, n);
            gdn_forward_state_f64(&L.cfg, &L.p, &ca, xs, ys, &st);
            gdn_cache_free_f64(&ca);
            for (int b = 0; b < B; b++)
                memcpy(y_parts + ((size_t)b * T + t0) * D, ys + (size_t)b * n * D, (size_t)n * D * sizeof(double));
            free(xs);
            free(ys);
            t0 += n;
        }
        assert_int_equal(t0, T);
        double e = rel_err_d(y_parts, y_all, nx);
        if (!(e <= 1e-12)) print_message("streaming (%s): rel err %.3g\n", gdn_form_name(L.cfg.form), e);
        check_err(e, 1e-12);
        /* a reset state starts over: the first piece again equals the whole run's start */
        gdn_state_reset_f64(&st);
        double *ys = malloc((size_t)B * 5 * D * sizeof(double)), *xs = malloc((size_t)B * 5 * D * sizeof(double));
        for (int b = 0; b < B; b++) memcpy(xs + (size_t)b * 5 * D, L.x + (size_t)b * T * D, (size_t)5 * D * sizeof(double));
        gdn_cache_alloc_f64(&ca, &L.cfg, B, 5);
        gdn_forward_state_f64(&L.cfg, &L.p, &ca, xs, ys, &st);
        gdn_cache_free_f64(&ca);
        for (int b = 0; b < B; b++)
            for (int i = 0; i < 5 * D; i++) check_close(ys[(size_t)b * 5 * D + i], y_all[(size_t)b * T * D + i], 1e-12, 0);
        free(xs);
        free(ys);
        gdn_state_free_f64(&st);
    }
    free(y_all);
    free(y_parts);
    layer_case_free(&L);
}

/* The float32 layer with carried state (decode): a prefill of 25 tokens then
 * one token at a time equals one whole call (conv and biases on). */
static void f32_prefill_then_steps(void **state) {
    (void)state;
    rng_seed(51);
    layer_case L;
    layer_case_make(&L, 1, 40, 12, 3, 4, 1, 16, 1, GDN_SCALE_INV_SQRT_DK, GDN_FORM_CHUNKED);
    const int D = 12, T = 40;
    size_t nx = nx_of(&L);
    float *y_all = malloc(nx * sizeof(float)), *y_step = malloc(nx * sizeof(float));
    f32_layer W, P, S;
    f32_open(&W, &L.cfg, L.p.block, 1, T, false, false);
    f32_forward(&W, L.x, y_all, false);
    f32_open(&P, &L.cfg, L.p.block, 1, 25, false, true);
    f32_forward(&P, L.x, y_step, true);
    f32_open(&S, &L.cfg, L.p.block, 1, 1, false, true);
    be_copy(be_default(), S.st.S, P.st.S, (size_t)L.cfg.H * L.cfg.dv * L.cfg.dk);
    be_copy(be_default(), S.st.tail, P.st.tail, (size_t)(GDN_CONV_K - 1) * gdn_qkv_width(&L.cfg));
    for (int t = 25; t < T; t++) f32_forward(&S, L.x + (size_t)t * D, y_step + (size_t)t * D, true);
    check_err(rel_err_ff(y_step, y_all, nx), 1e-5); /* float32, different chunking */
    f32_close(&W), f32_close(&P), f32_close(&S);
    free(y_all);
    free(y_step);
    layer_case_free(&L);
}

/* Weight transfer from a GQA teacher layer (Qwen2-style biases): rows land where
 * the GQA expansion puts them; shape mismatches fail with a message. */
static void transfer_from_teacher_layer(void **state) {
    (void)state;
    model_config mc;
    memset(&mc, 0, sizeof mc);
    mc.dim = 12;
    mc.hidden_dim = 8;
    mc.n_layers = 1;
    mc.n_heads = 4;
    mc.n_kv_heads = 2;
    mc.head_dim = 3;
    mc.vocab_size = 5;
    mc.qkv_bias = true;
    float wq[144], wo[144], wk[72], wv[72], bq[12], bk[6], bv[6];
    attn_host_weights mw = {wq, wk, wv, wo, bq, bk, bv}, *w = &mw;
    for (int i = 0; i < 12 * 12; i++) wq[i] = (float)i, wo[i] = (float)-i;
    for (int i = 0; i < 6 * 12; i++) wk[i] = 1000.0f + i, wv[i] = 2000.0f + i;
    for (int i = 0; i < 12; i++) bq[i] = 0.5f * i;
    for (int i = 0; i < 6; i++) bk[i] = 10.0f + i, bv[i] = 20.0f + i;
    gdn_config c;
    gdn_config_default(&c, 12, 4, 3);
    c.qkv_bias = 1;
    c.conv = 1;
    gdn_params p;
    gdn_params_alloc(&p, &c);
    assert_int_equal(gdn_transfer_from_attention(&p, &c, &mc, w), 0);
    for (int h = 0; h < 4; h++)        /* query head h reads KV head h / 2 */
        for (int r = 0; r < 3; r++)
            for (int d = 0; d < 12; d++) {
                size_t dst = ((size_t)h * 3 + r) * 12 + d, src = ((size_t)(h / 2) * 3 + r) * 12 + d;
                assert_true(p.wk[dst] == w->wk[src]);
                assert_true(p.wv[dst] == w->wv[src]);
            }
    for (int h = 0; h < 4; h++)
        for (int r = 0; r < 3; r++) assert_true(p.bv[h * 3 + r] == w->bv[(h / 2) * 3 + r]);
    assert_true(p.wq[77] == 77.0f && p.wo[100] == -100.0f && p.bq[5] == 2.5f);
    assert_true(p.w_norm[0] == 1.0f && p.w_norm[2] == 1.0f);
    assert_true(p.conv_q[GDN_CONV_K - 1] == 1.0f && p.conv_q[0] == 0.0f);
    gdn_config bad = c;
    bad.H = 3;
    assert_int_equal(gdn_transfer_from_attention(&p, &bad, &mc, w), -1);
    assert_non_null(strstr(gf_last_error(), "does not match"));
    mc.qkv_bias = false;
    w->bq = NULL;
    assert_int_equal(gdn_transfer_from_attention(&p, &c, &mc, w), -1);
    gdn_params_free(&p);
}

static void config_validation(void **state) {
    (void)state;
    gdn_config c;
    gdn_config_default(&c, 1536, 12, 128);
    assert_int_equal(gdn_config_check(&c), 0);
    check_close(gdn_query_scale(&c), 1 / sqrt(128.0), 1e-15, 0);
    assert_string_equal(gdn_scale_name(c.scale_mode), "dk^-1/2");
    c.scale_mode = GDN_SCALE_NONE;
    assert_true(gdn_query_scale(&c) == 1.0);
    assert_string_equal(gdn_scale_name(c.scale_mode), "none");
    c.chunk = 48;
    assert_int_equal(gdn_config_check(&c), -1);
    assert_non_null(strstr(gf_last_error(), "chunk"));
    c.chunk = 16;
    c.H = 0;
    assert_int_equal(gdn_config_check(&c), -1);
    /* parameter count: 6 in-projections + Wo + A_log, dt_bias, w_norm (+ options) */
    gdn_config_default(&c, 12, 3, 4);
    size_t base = (size_t)(12 * 12 * 4 + 2 * 3 * 12) + 12 * 12 + 3 + 3 + 4;
    assert_int_equal(gdn_param_count(&c), base);
    c.qkv_bias = 1;
    c.conv = 1;
    assert_int_equal(gdn_param_count(&c), base + 36 + 36 * GDN_CONV_K);
}

/* The checkpoint's length (gf_gdn_ckpt_floats): the states in the compute
 * type alone, or with keep_wy the chunks' WY products after them, gam in F32 and
 * W, V', A in the compute type (exact counts: dv dk and C (dk + dv + C) are even,
 * so bf16 fills whole floats; an odd count of bf16 states rounds up to a whole
 * float). The CPU backend keeps none (its backward walks each chunk token by
 * token) and refuses a keep_wy shape with a line, on a backend of its own so
 * the sticky error stays there. */
static void ckpt_length_and_cpu_refusal(void **state) {
    (void)state;
    gf_gdn_shape s = {2, 130, 3, 128, 128, 64, 1.f, false, false};
    const size_t nbhc = 2 * 3 * 3, states = nbhc * 128 * 128, wy = nbhc * 64 * (128 + 128 + 64);
    assert_int_equal(gf_gdn_ckpt_floats(&s, GF_BF16), states / 2);
    assert_int_equal(gf_gdn_ckpt_floats(&s, GF_F32), states);
    s.keep_wy = true;
    assert_int_equal(gf_gdn_ckpt_floats(&s, GF_BF16), states / 2 + nbhc * 64 + wy / 2);
    assert_int_equal(gf_gdn_ckpt_floats(&s, GF_F32), states + nbhc * 64 + wy);
    gf_gdn_shape odd = {1, 10, 1, 3, 5, 16, 1.f, false, false}; /* 15 bf16 states: 8 floats */
    assert_int_equal(gf_gdn_ckpt_floats(&odd, GF_BF16), 8);
    assert_int_equal(gf_gdn_ckpt_floats(&odd, GF_F32), 15);
    gf_backend *cpu;
    const gf_backend_opts o = {"cpu", 1, false};
    assert_int_equal(be_open(&cpu, &o), 0);
    assert_false(be_gdn_keeps_wy(cpu));
    gf_buf x, g, ck;
    s = (gf_gdn_shape){1, 20, 1, 8, 8, 16, 1.f, false, true};
    assert_int_equal(be_alloc(cpu, &x, 20 * 8, GF_F32), 0);
    assert_int_equal(be_alloc(cpu, &g, 20, GF_F32), 0);
    assert_int_equal(be_alloc(cpu, &ck, gf_gdn_ckpt_floats(&s, GF_F32), GF_F32), 0);
    be_gdn_core(cpu, x, ck, gf_none(), x, x, x, g, g, &s);
    assert_int_equal(be_sync(cpu), -1);
    assert_non_null(strstr(gf_last_error(), "keeps no WY products"));
    be_free(cpu, &x), be_free(cpu, &g), be_free(cpu, &ck);
    be_close(cpu);
}

static void gqa_expand_repeats_rows(void **state) {
    (void)state;
    float src[2 * 2 * 3], dst[6 * 2 * 3];   /* KV 2, hd 2, D 3, group 3 */
    for (int i = 0; i < 12; i++) src[i] = (float)i;
    gdn_gqa_expand(dst, src, sizeof(float), 2, 3, 2, 3);
    for (int h = 0; h < 6; h++)
        for (int i = 0; i < 6; i++) assert_true(dst[h * 6 + i] == src[(h / 3) * 6 + i]);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(config_validation),
        cmocka_unit_test(ckpt_length_and_cpu_refusal),
        cmocka_unit_test(gqa_expand_repeats_rows),
        cmocka_unit_test(transfer_from_teacher_layer),
        cmocka_unit_test(core_hand_checked),
        cmocka_unit_test(core_forms_agree),
        cmocka_unit_test(layer_forms_agree),
        cmocka_unit_test(streaming_matches_whole),
        cmocka_unit_test(f32_prefill_then_steps),
        cmocka_unit_test(grad_T5_chunk16_plain),
        cmocka_unit_test(grad_T19_chunk16_bias_conv),
        cmocka_unit_test(grad_T19_recurrent_noscale),
        cmocka_unit_test(grad_T40_chunk16_three_chunks),
        cmocka_unit_test(float_matches_double),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
