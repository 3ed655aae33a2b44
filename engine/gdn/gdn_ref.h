/* The float64 reference GDN layer: the CPU backend's GDN templates compiled
 * for double (engine/gdn/gdn_ref_f64.c), with the same algebra as the
 * backend ops. Tests only: finite-difference gradient checks, and the
 * float32 path (engine/gdn/gdn_layer.h on a backend) against its values. */
#ifndef GRAFT_GDN_GDN_REF_H
#define GRAFT_GDN_GDN_REF_H

#include "gdn/gdn.h"

typedef struct { GDN_PARAMS_FIELDS(double) } gdn_params_f64;

/* Activations kept by the forward pass for the backward pass (one allocation). */
typedef struct {
    int B, T;
    int n_chunks;    /* ceil(T / chunk) */
    double *proj;    /* [B*T, in_width] x W_in^T (+ bias): q k v g a b pre-activations */
    double *qkv_pre; /* [B*T, qkv_width] q k v after conv, before silu */
    double *q, *k;   /* [B*T, H*dk] silu + L2-normalized */
    double *v;       /* [B*T, H*dv] silu */
    double *g;       /* [B*T, H] log decay (<= 0) */
    double *beta;    /* [B*T, H] write strength */
    double *o;       /* [B*T, H, dv] core output before the norm */
    double *rstd;    /* [B*T, H] 1 / sqrt(mean(o^2) + norm_eps) */
    double *z;       /* [B*T, H*dv] gated norm output, input of Wo */
    double *ckpt;    /* [B, H, n_chunks, dv, dk] state entering each chunk */
    double *block;
    size_t n;
} gdn_cache_f64;

/* What a sequence carries from one call to the next (token-by-token generation). */
typedef struct {
    int B;
    double *S;         /* [B, H, dv, dk] recurrent state */
    double *conv_tail; /* [B, GDN_CONV_K-1, qkv_width] q|k|v projections of the last K-1 tokens */
    double *block;
    size_t n;
} gdn_state_f64;

void gdn_params_alloc_f64(gdn_params_f64 *p, const gdn_config *c); /* zeroed */
void gdn_params_views_f64(gdn_params_f64 *p, const gdn_config *c, double *block);
void gdn_params_free_f64(gdn_params_f64 *p);
void gdn_cache_alloc_f64(gdn_cache_f64 *k, const gdn_config *c, int B, int T);
void gdn_cache_free_f64(gdn_cache_f64 *k);
void gdn_state_alloc_f64(gdn_state_f64 *st, const gdn_config *c, int B); /* zero */
void gdn_state_reset_f64(gdn_state_f64 *st);
void gdn_state_free_f64(gdn_state_f64 *st);

/* Core recurrence only; ckpt may be NULL. state [B, H, dv, dk] (NULL: zero
 * start) is the initial state in and the final state out. */
void gdn_core_forward_f64(const gdn_core_shape *s, const double *q, const double *k, const double *v,
                          const double *g, const double *beta, double *o, double *ckpt);
void gdn_core_forward_state_f64(const gdn_core_shape *s, const double *q, const double *k, const double *v,
                                const double *g, const double *beta, double *o, double *ckpt, double *state);
/* Gradients of the core from d_o (zero initial state): writes dq, dk, dv, dg, dbeta. */
void gdn_core_backward_f64(const gdn_core_shape *s, const double *q, const double *k, const double *v,
                           const double *g, const double *beta, const double *ckpt, const double *d_o, double *dq,
                           double *dk, double *dv, double *dg, double *dbeta);

/* x [B, T, D] -> y [B, T, D]; the cache (allocated for B, T) keeps activations. */
void gdn_forward_f64(const gdn_config *c, const gdn_params_f64 *p, gdn_cache_f64 *cache, const double *x,
                     double *y);
/* Continues sequences from st (NULL: fresh start) and updates it. */
void gdn_forward_state_f64(const gdn_config *c, const gdn_params_f64 *p, gdn_cache_f64 *cache, const double *x,
                           double *y, gdn_state_f64 *st);
/* From dy: ACCUMULATES parameter gradients into grad and writes dx (NULL: skipped). */
void gdn_backward_f64(const gdn_config *c, const gdn_params_f64 *p, gdn_cache_f64 *cache, const double *x,
                      const double *dy, double *dx, gdn_params_f64 *grad);

#endif
