/* Gated DeltaNet (GDN) layer: configuration, parameter layout, host parameters.
 *
 * One layer (METHOD.md section 3), for a batch of B sequences of T tokens of
 * normalized inputs x [B, T, D]:
 *
 *   q = silu(Wq x), k = silu(Wk x), v = silu(Wv x)   (optional bias, optional short conv
 *                                                    before the silu)
 *   q, k <- q / sqrt(sum q^2 + 1e-6) per head
 *   beta = sigmoid(Wb x), g = -exp(A_log) * softplus(Wa x + dt_bias)
 *   S_t = exp(g_t) S_{t-1} (I - beta_t k_t k_t^T) + beta_t v_t k_t^T     (S: dv x dk)
 *   o_t = S_t (scale q_t)
 *   y   = Wo concat_h( RMSNorm(o_t) * w_norm * silu(Wg x)_h )
 *
 * The layer runs on a backend (engine/gdn/gdn_layer.h composes the be_gdn_*
 * ops and be_linear); engine/gdn/gdn_ref.h is the float64 reference built from
 * the CPU backend's templates, used for gradient checks. docs/gdn.md has the
 * full derivation and the backward strategy. */
#ifndef GRAFT_GDN_GDN_H
#define GRAFT_GDN_GDN_H

#include <stddef.h>

#include "backend/backend.h" /* GDN_CONV_K, GDN_QK_L2_EPS: what be_gdn_prep computes */

#define GDN_NORM_EPS 1e-5     /* o_norm default: fla GatedDeltaNet(norm_eps=1e-5) */

typedef enum {
    GDN_SCALE_INV_SQRT_DK = 0, /* o_t = S_t (dk^-1/2 q_t): fla's kernel default */
    GDN_SCALE_NONE = 1         /* o_t = S_t q_t: the reference's analytic recurrence */
} gdn_scale_mode;

typedef enum {
    GDN_FORM_CHUNKED = 0,   /* WY / UT-transform chunks of `chunk` tokens */
    GDN_FORM_RECURRENT = 1  /* token by token */
} gdn_form;

typedef struct {
    int D;                     /* hidden size */
    int H;                     /* heads */
    int dk, dv;                /* head dims (dk = dv = teacher head_dim) */
    int chunk;                 /* 16, 32 or 64: chunk length and checkpoint stride */
    int qkv_bias;              /* 1: q/k/v projections have biases */
    int conv;                  /* 1: depthwise causal conv (GDN_CONV_K) on q, k, v before silu */
    gdn_scale_mode scale_mode;
    gdn_form form;             /* forward form of the recurrence */
    double norm_eps;           /* o_norm RMSNorm epsilon */
} gdn_config;

/* D, H, head_dim; chunk 64, no bias, no conv, scale dk^-1/2, chunked, eps GDN_NORM_EPS. */
void gdn_config_default(gdn_config *c, int D, int H, int head_dim);
/* 0 or -1 with a one-line message (sizes, chunk, enums). */
int gdn_config_check(const gdn_config *c);
double gdn_query_scale(const gdn_config *c);
const char *gdn_scale_name(gdn_scale_mode m);   /* "dk^-1/2" or "none" */
const char *gdn_form_name(gdn_form f);          /* "chunked" or "recurrent" */

/* Width of the fused input projection: [q | k | v | g | a | b] = 2*H*dk + 2*H*dv + 2*H. */
int gdn_in_width(const gdn_config *c);
/* Channels that get bias / conv: [q | k | v] = 2*H*dk + H*dv. */
int gdn_qkv_width(const gdn_config *c);
/* Floats in one parameter block (options included only when enabled). */
size_t gdn_param_count(const gdn_config *c);

/* Parameters of one layer: views into one allocation `block`. Weights are
 * PyTorch [out, in] row-major. wq..wb are consecutive, so `wq` is also the fused
 * input projection W_in [gdn_in_width, D]. The same struct holds gradients. */
#define GDN_PARAMS_FIELDS(real)                                                        \
    real *wq;      /* [H*dk, D]  q_proj.weight */                                      \
    real *wk;      /* [H*dk, D]  k_proj.weight */                                      \
    real *wv;      /* [H*dv, D]  v_proj.weight */                                      \
    real *wg;      /* [H*dv, D]  g_proj.weight */                                      \
    real *wa;      /* [H, D]     a_proj.weight */                                      \
    real *wb;      /* [H, D]     b_proj.weight */                                      \
    real *bq;      /* [H*dk] or NULL; bq, bk, bv consecutive */                       \
    real *bk;      /* [H*dk] or NULL */                                                \
    real *bv;      /* [H*dv] or NULL */                                                \
    real *conv_q;  /* [H*dk, GDN_CONV_K] or NULL (q_conv1d.weight [H*dk,1,4]); */     \
    real *conv_k;  /* [H*dk, GDN_CONV_K] or NULL  conv_q, conv_k, conv_v consecutive */\
    real *conv_v;  /* [H*dv, GDN_CONV_K] or NULL */                                    \
    real *a_log;   /* [H]  A_log */                                                    \
    real *dt_bias; /* [H]  dt_bias */                                                  \
    real *w_norm;  /* [dv] o_norm.weight, shared by all heads */                       \
    real *wo;      /* [D, H*dv] o_proj.weight */                                       \
    real *block;   /* the one allocation */                                            \
    size_t n;      /* floats in block */

typedef struct { GDN_PARAMS_FIELDS(float) } gdn_params;

/* Points the views of p (a gdn_params, or the float64 reference's
 * gdn_params_f64) into block, in the one layout every element type shares: the
 * fields' order above, options present only when c enables them (else NULL);
 * p->n = gdn_param_count(c) elements (GF_ASSERT: include core/error.h). */
#define GDN_PARAMS_CARVE(p, c, blk)                                                    \
    do {                                                                               \
        const size_t D_ = (size_t)(c)->D, H_ = (size_t)(c)->H;                         \
        const size_t dk_ = (size_t)(c)->dk, dv_ = (size_t)(c)->dv;                     \
        size_t at_ = 0;                                                                \
        (p)->block = (blk);                                                            \
        (p)->n = gdn_param_count(c);                                                   \
        (p)->wq = (blk) + at_, at_ += H_ * dk_ * D_;                                   \
        (p)->wk = (blk) + at_, at_ += H_ * dk_ * D_;                                   \
        (p)->wv = (blk) + at_, at_ += H_ * dv_ * D_;                                   \
        (p)->wg = (blk) + at_, at_ += H_ * dv_ * D_;                                   \
        (p)->wa = (blk) + at_, at_ += H_ * D_;                                         \
        (p)->wb = (blk) + at_, at_ += H_ * D_;                                         \
        (p)->bq = (p)->bk = (p)->bv = (p)->conv_q = (p)->conv_k = (p)->conv_v = NULL;  \
        if ((c)->qkv_bias) {                                                           \
            (p)->bq = (blk) + at_, at_ += H_ * dk_;                                    \
            (p)->bk = (blk) + at_, at_ += H_ * dk_;                                    \
            (p)->bv = (blk) + at_, at_ += H_ * dv_;                                    \
        }                                                                              \
        if ((c)->conv) {                                                               \
            (p)->conv_q = (blk) + at_, at_ += H_ * dk_ * GDN_CONV_K;                   \
            (p)->conv_k = (blk) + at_, at_ += H_ * dk_ * GDN_CONV_K;                   \
            (p)->conv_v = (blk) + at_, at_ += H_ * dv_ * GDN_CONV_K;                   \
        }                                                                              \
        (p)->a_log = (blk) + at_, at_ += H_;                                           \
        (p)->dt_bias = (blk) + at_, at_ += H_;                                         \
        (p)->w_norm = (blk) + at_, at_ += dv_;                                         \
        (p)->wo = (blk) + at_, at_ += D_ * H_ * dv_;                                   \
        GF_ASSERT(at_ == (p)->n);                                                      \
    } while (0)

/* Host parameters of one layer (building, Stage 1, files): zeroed block and
 * its views. The compute copy lives in a backend buffer of the same layout
 * (engine/gdn/gdn_layer.h). */
void gdn_params_alloc(gdn_params *p, const gdn_config *c);
void gdn_params_free(gdn_params *p);
/* Views of an existing block of gdn_param_count(c) floats (not owned). */
void gdn_params_views(gdn_params *p, const gdn_config *c, float *block);

/* Shape of a bare core recurrence call. Inputs are token-major:
 * q, k [B, T, H, dk]; v [B, T, H, dv]; g, beta [B, T, H]; o [B, T, H, dv];
 * ckpt [B, H, ceil(T/chunk), dv, dk] (state entering each chunk, zero initial state). */
typedef struct {
    int B, T, H, dk, dv;
    int chunk;
    double scale;
    gdn_form form;
} gdn_core_shape;

void gdn_core_shape_from(gdn_core_shape *s, const gdn_config *c, int B, int T);

/* GQA expansion for weight transfer: dst [KV*group*hd, D] gets each KV head's hd rows
 * of src [KV*hd, D] repeated `group` times (group = H / KV). Also for biases (D = 1).
 * elem = sizeof one element (float or double). */
void gdn_gqa_expand(void *dst, const void *src, size_t elem, int kv_heads, int group, int hd,
                    int D);

#endif
