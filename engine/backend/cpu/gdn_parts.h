/* What the GDN templates (gdn_core_tmpl.h, gdn_parts_tmpl.h) share, once per
 * translation unit: the layer's sizes and the column layout of proj. */
#ifndef GRAFT_BACKEND_CPU_GDN_PARTS_H
#define GRAFT_BACKEND_CPU_GDN_PARTS_H

#include <omp.h>

#include <stdbool.h>

#include "backend/backend.h"

/* A core recurrence call as the templates see it (gf_gdn_shape with the
 * query scale in the template's precision: the float64 reference passes
 * its scale in double). q, k [B, T, H, dk]; v, o [B, T, H, dv]; g, beta
 * [B, T, H]; ckpt [B, H, ceil(T/chunk), dv, dk]. */
typedef struct {
    int B, T, H, dk, dv;
    int chunk;
    double scale;
    bool recurrent; /* token by token instead of chunks */
} gdn_core_dims;

typedef struct {
    int B, T, D, H, dk, dv;
    int conv;          /* short causal conv (GDN_CONV_K taps) on q, k, v */
    double norm_eps;   /* o_norm epsilon */
} gdn_part_dims;

/* Column offsets inside one row of proj = x W_in^T: [q | k | v | g | a | b]. */
typedef struct { int q, k, v, g, a, b, width, qkv; } gdn_cols;

static inline gdn_cols gdn_cols_of(const gdn_part_dims *d) {
    gdn_cols c;
    int hk = d->H * d->dk, hv = d->H * d->dv;
    c.q = 0;
    c.k = hk;
    c.v = 2 * hk;
    c.g = 2 * hk + hv;
    c.a = 2 * hk + 2 * hv;
    c.b = c.a + d->H;
    c.width = 2 * hk + 2 * hv + 2 * d->H;
    c.qkv = 2 * hk + hv;
    return c;
}

/* Rows per block of the fixed-order reductions (w_norm's gradient). */
#define GDN_ROW_BLOCK 64

static inline int gdn_par_threads(const gdn_part_dims *d, int nt) {
    /* below this much element-wise work a parallel region costs more than it saves */
    return (double)d->B * d->T * d->H * (d->dk + d->dv) > 2000000.0 / 64 ? nt : 1;
}

#endif
