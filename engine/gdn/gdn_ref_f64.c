/* The float64 reference GDN layer (engine/gdn/gdn_ref.h): the CPU backend's
 * GDN templates (engine/backend/cpu) compiled for double, with the projections as dgemm. Tests
 * check gradients against it by finite differences and the float32 path
 * (the backend ops composed by engine/gdn/gdn_layer.c) against its values. */
#include <cblas.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <tgmath.h>

#include "backend/cpu/gdn_parts.h"
#include "core/error.h"
#include "gdn/gdn_ref.h"

#define real double
#define SFX(name) name##_f64
#define GEMM cblas_dgemm
#define TRSM cblas_dtrsm
#include "backend/cpu/gdn_core_tmpl.h"
#include "backend/cpu/gdn_parts_tmpl.h"

/* ------------------------------------------------------------- allocation */

void gdn_params_alloc_f64(gdn_params_f64 *p, const gdn_config *c) {
    GF_ASSERT(gdn_config_check(c) == 0);
    memset(p, 0, sizeof *p);
    p->n = gdn_param_count(c);
    p->block = gf_calloc(p->n, sizeof(double));
    gdn_params_views_f64(p, c, p->block);
}

void gdn_params_views_f64(gdn_params_f64 *p, const gdn_config *c, double *block) {
    GDN_PARAMS_CARVE(p, c, block);
}

void gdn_params_free_f64(gdn_params_f64 *p) {
    free(p->block);
    memset(p, 0, sizeof *p);
}

void gdn_cache_alloc_f64(gdn_cache_f64 *k, const gdn_config *c, int B, int T) {
    GF_ASSERT(gdn_config_check(c) == 0 && B > 0 && T > 0);
    memset(k, 0, sizeof *k);
    size_t N = (size_t)B * (size_t)T, H = (size_t)c->H;
    size_t hk = H * (size_t)c->dk, hv = H * (size_t)c->dv;
    k->B = B;
    k->T = T;
    k->n_chunks = (T + c->chunk - 1) / c->chunk;
    size_t ck = (size_t)B * H * (size_t)k->n_chunks * (size_t)c->dv * (size_t)c->dk;
    k->n = N * ((size_t)gdn_in_width(c) + (size_t)gdn_qkv_width(c) + 2 * hk + 3 * hv + 3 * H) + ck;
    k->block = gf_malloc(k->n * sizeof(double));
    double *at = k->block;
    k->proj = at, at += N * (size_t)gdn_in_width(c);
    k->qkv_pre = at, at += N * (size_t)gdn_qkv_width(c);
    k->q = at, at += N * hk;
    k->k = at, at += N * hk;
    k->v = at, at += N * hv;
    k->g = at, at += N * H;
    k->beta = at, at += N * H;
    k->o = at, at += N * hv;
    k->rstd = at, at += N * H;
    k->z = at, at += N * hv;
    k->ckpt = at, at += ck;
    GF_ASSERT((size_t)(at - k->block) == k->n);
}

void gdn_cache_free_f64(gdn_cache_f64 *k) {
    free(k->block);
    memset(k, 0, sizeof *k);
}

void gdn_state_alloc_f64(gdn_state_f64 *st, const gdn_config *c, int B) {
    GF_ASSERT(gdn_config_check(c) == 0 && B > 0);
    size_t nS = (size_t)B * c->H * c->dv * c->dk;
    size_t nT = (size_t)B * (GDN_CONV_K - 1) * gdn_qkv_width(c);
    st->B = B;
    st->n = nS + nT;
    st->block = gf_calloc(st->n, sizeof(double));
    st->S = st->block;
    st->conv_tail = st->block + nS;
}

void gdn_state_reset_f64(gdn_state_f64 *st) { memset(st->block, 0, st->n * sizeof(double)); }

void gdn_state_free_f64(gdn_state_f64 *st) {
    free(st->block);
    memset(st, 0, sizeof *st);
}

/* ------------------------------------------------------------- the core */

static int ref_threads(void) { return omp_get_max_threads(); }

/* The template's view of a core call (the gdn_core_shape the API takes). */
static gdn_core_dims core_dims_of(const gdn_core_shape *s) {
    gdn_core_dims d = {s->B, s->T, s->H, s->dk, s->dv, s->chunk, s->scale, s->form == GDN_FORM_RECURRENT};
    return d;
}

void gdn_core_forward_f64(const gdn_core_shape *s, const double *q, const double *k, const double *v,
                          const double *g, const double *beta, double *o, double *ckpt) {
    gdn_core_forward_state_f64(s, q, k, v, g, beta, o, ckpt, NULL);
}

void gdn_core_forward_state_f64(const gdn_core_shape *s, const double *q, const double *k, const double *v,
                                const double *g, const double *beta, double *o, double *ckpt, double *state) {
    const int nt = ref_threads();
    const gdn_core_dims cd = core_dims_of(s);
    double *work = gf_malloc((size_t)nt * core_work_f64(&cd) * sizeof(double));
    core_forward_w_f64(&cd, q, k, v, g, beta, o, ckpt, state, nt, work);
    free(work);
}

void gdn_core_backward_f64(const gdn_core_shape *s, const double *q, const double *k, const double *v,
                           const double *g, const double *beta, const double *ckpt, const double *d_o, double *dq,
                           double *dk, double *dv, double *dg, double *dbeta) {
    const int nt = ref_threads();
    const gdn_core_dims cd = core_dims_of(s);
    double *work = gf_malloc((size_t)nt * core_work_f64(&cd) * sizeof(double));
    core_backward_w_f64(&cd, q, k, v, g, beta, ckpt, d_o, dq, dk, dv, dg, dbeta, nt, work);
    free(work);
}

/* ------------------------------------------------------------- the layer */

static gdn_part_dims dims_of(const gdn_config *c, int B, int T) {
    gdn_part_dims d = {B, T, c->D, c->H, c->dk, c->dv, c->conv, c->norm_eps};
    return d;
}

void gdn_forward_f64(const gdn_config *c, const gdn_params_f64 *p, gdn_cache_f64 *ca, const double *x, double *y) {
    gdn_forward_state_f64(c, p, ca, x, y, NULL);
}

void gdn_forward_state_f64(const gdn_config *c, const gdn_params_f64 *p, gdn_cache_f64 *ca, const double *x,
                           double *y, gdn_state_f64 *st) {
    GF_ASSERT(gdn_config_check(c) == 0);
    GF_ASSERT(ca->n_chunks == (ca->T + c->chunk - 1) / c->chunk);
    GF_ASSERT((c->qkv_bias != 0) == (p->bq != NULL) && (c->conv != 0) == (p->conv_q != NULL));
    GF_ASSERT(!st || st->B == ca->B);
    gdn_part_dims d = dims_of(c, ca->B, ca->T);
    gdn_cols pc = gdn_cols_of(&d);
    const int N = ca->B * ca->T, D = c->D, hv = c->H * c->dv, nt = ref_threads();
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, pc.width, D, 1, x, D, p->wq, D, 0, ca->proj, pc.width);
    gdn_prep_part_f64(&d, ca->proj, p->bq, p->conv_q, st ? st->conv_tail : NULL, p->a_log, p->dt_bias, ca->qkv_pre,
                      ca->q, ca->k, ca->v, ca->g, ca->beta, nt);
    gdn_core_shape s;
    gdn_core_shape_from(&s, c, ca->B, ca->T);
    gdn_core_forward_state_f64(&s, ca->q, ca->k, ca->v, ca->g, ca->beta, ca->o, ca->ckpt, st ? st->S : NULL);
    gdn_gated_norm_part_f64(&d, ca->o, ca->proj, p->w_norm, ca->z, ca->rstd, nt);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, D, hv, 1, ca->z, hv, p->wo, hv, 0, y, D);
}

void gdn_backward_f64(const gdn_config *c, const gdn_params_f64 *p, gdn_cache_f64 *ca, const double *x,
                      const double *dy, double *dx, gdn_params_f64 *grad) {
    GF_ASSERT(gdn_config_check(c) == 0);
    GF_ASSERT(grad->n == p->n && (grad->bq != NULL) == (p->bq != NULL) &&
              (grad->conv_q != NULL) == (p->conv_q != NULL));
    gdn_part_dims d = dims_of(c, ca->B, ca->T);
    gdn_cols pc = gdn_cols_of(&d);
    const int N = ca->B * ca->T, D = c->D, H = c->H, hk = H * c->dk, hv = H * c->dv, nt = ref_threads();
    const size_t nN = (size_t)N;
    double *dz = gf_malloc(nN * hv * sizeof *dz);            /* [N, hv]; becomes d_o in place */
    double *dP = gf_malloc(nN * pc.width * sizeof *dP);      /* [N, in_width] */
    double *dq = gf_malloc(nN * (2 * hk + hv + 2 * H) * sizeof *dq);
    double *dk = dq + nN * hk, *dv = dk + nN * hk, *dg = dv + nN * hv, *dbeta = dg + nN * H;
    double *dC = gf_malloc(nN * pc.qkv * sizeof *dC);        /* [N, qkv] */
    double *work = gf_malloc(gated_norm_work_f64(&d) * sizeof *work);

    /* y = z Wo^T */
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, hv, D, 1, dy, D, p->wo, hv, 0, dz, hv);
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, D, hv, N, 1, dy, D, ca->z, hv, 1, grad->wo, hv);
    gdn_gated_norm_backward_part_f64(&d, dz, ca->o, ca->rstd, ca->proj, p->w_norm, dz, dP, grad->w_norm, work, nt);
    gdn_core_shape s;
    gdn_core_shape_from(&s, c, ca->B, ca->T);
    gdn_core_backward_f64(&s, ca->q, ca->k, ca->v, ca->g, ca->beta, ca->ckpt, dz, dq, dk, dv, dg, dbeta);
    gdn_prep_backward_part_f64(&d, ca->proj, ca->qkv_pre, ca->q, ca->k, ca->g, ca->beta, p->conv_q, p->a_log,
                               p->dt_bias, dq, dk, dv, dg, dbeta, dP, grad->bq, grad->conv_q, grad->a_log,
                               grad->dt_bias, dC, nt);
    /* proj = x W_in^T (+ bias) */
    if (dx) cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, D, pc.width, 1, dP, pc.width, p->wq, D, 0, dx, D);
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, pc.width, D, N, 1, dP, pc.width, x, D, 1, grad->wq, D);
    free(dz), free(dP), free(dq), free(dC), free(work);
}
