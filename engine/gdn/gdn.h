/* Gated DeltaNet (GDN) layer on CPU: configuration, parameters, forward, backward.
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
 * Everything is generic over the element type: the float32 functions are the
 * production path; the *_f64 twins are the same source compiled for double
 * (gdn_*_tmpl.h included twice), used for gradient checks. docs/gdn.md has the
 * full derivation and the backward strategy. */
#ifndef GRAFT_GDN_GDN_H
#define GRAFT_GDN_GDN_H

#include <stddef.h>

#define GDN_CONV_K 4          /* short-conv kernel size (fla's conv_size default) */
#define GDN_QK_L2_EPS 1e-6    /* q, k L2-norm epsilon: x / sqrt(sum x^2 + eps) */
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
typedef struct { GDN_PARAMS_FIELDS(double) } gdn_params_f64;

/* Activations kept by the forward pass for the backward pass (one allocation). */
#define GDN_CACHE_FIELDS(real)                                                         \
    int B, T;                                                                          \
    int n_chunks;  /* ceil(T / chunk) */                                               \
    real *proj;    /* [B*T, in_width] x W_in^T (+ bias): q k v g a b pre-activations */\
    real *qkv_pre; /* [B*T, qkv_width] q k v after conv, before silu */                \
    real *q;       /* [B*T, H*dk] silu + L2-normalized */                              \
    real *k;       /* [B*T, H*dk] silu + L2-normalized */                              \
    real *v;       /* [B*T, H*dv] silu */                                              \
    real *g;       /* [B*T, H] log decay (<= 0) */                                     \
    real *beta;    /* [B*T, H] write strength */                                       \
    real *o;       /* [B*T, H, dv] core output before the norm (Stage 1 OLS reads it) */ \
    real *rstd;    /* [B*T, H] 1 / sqrt(mean(o^2) + norm_eps) */                       \
    real *z;       /* [B*T, H*dv] gated norm output, input of Wo */                    \
    real *ckpt;    /* [B, H, n_chunks, dv, dk] state entering each chunk */            \
    real *block;                                                                       \
    size_t n;                                                                          \
    real *bwork;   /* backward scratch, allocated by the first gdn_backward */         \
    size_t n_bwork;

typedef struct { GDN_CACHE_FIELDS(float) } gdn_cache;
typedef struct { GDN_CACHE_FIELDS(double) } gdn_cache_f64;

/* What a sequence carries from one call to the next (token-by-token generation). */
#define GDN_STATE_FIELDS(real)                                                         \
    int B;                                                                             \
    real *S;         /* [B, H, dv, dk] recurrent state */                              \
    real *conv_tail; /* [B, GDN_CONV_K-1, qkv_width] q|k|v projections of the last     \
                        K-1 tokens, oldest first (zeros before the start) */           \
    real *block;                                                                       \
    size_t n;

typedef struct { GDN_STATE_FIELDS(float) } gdn_state;
typedef struct { GDN_STATE_FIELDS(double) } gdn_state_f64;

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

#define GDN_DECLARE_API(real, SFX)                                                      \
    void gdn_params_alloc##SFX(gdn_params##SFX *p, const gdn_config *c);  /* zeroed */ \
    void gdn_params_free##SFX(gdn_params##SFX *p);                                     \
    void gdn_cache_alloc##SFX(gdn_cache##SFX *k, const gdn_config *c, int B, int T);   \
    void gdn_cache_free##SFX(gdn_cache##SFX *k);                                       \
    /* Core recurrence only; ckpt may be NULL when no backward follows. */             \
    void gdn_core_forward##SFX(const gdn_core_shape *s, const real *q, const real *k,  \
                               const real *v, const real *g, const real *beta,         \
                               real *o, real *ckpt);                                   \
    /* Same, starting from state [B, H, dv, dk] (NULL: zero) and leaving the final    \
     * state there. */                                                                 \
    void gdn_core_forward_state##SFX(const gdn_core_shape *s, const real *q,           \
                                     const real *k, const real *v, const real *g,      \
                                     const real *beta, real *o, real *ckpt,            \
                                     real *state);                                     \
    /* Gradients of the core from d_o, recomputing states from ckpt chunk by chunk.    \
     * Writes (overwrites) dq, dk, dv [like q, k, v], dg, dbeta [B, T, H]. */          \
    void gdn_core_backward##SFX(const gdn_core_shape *s, const real *q, const real *k, \
                                const real *v, const real *g, const real *beta,        \
                                const real *ckpt, const real *d_o, real *dq, real *dk, \
                                real *dv, real *dg, real *dbeta);                      \
    /* x [B, T, D] -> y [B, T, D]; the cache (allocated for B, T) keeps activations. */ \
    void gdn_forward##SFX(const gdn_config *c, const gdn_params##SFX *p,               \
                          gdn_cache##SFX *cache, const real *x, real *y);              \
    /* Continues sequences from `st` (recurrent state and conv history of earlier     \
     * tokens; NULL = fresh start) and updates it: for generation / chunked prefill.   \
     * Inference only: gdn_backward assumes a fresh start (zero state, no history). */ \
    void gdn_forward_state##SFX(const gdn_config *c, const gdn_params##SFX *p,         \
                                gdn_cache##SFX *cache, const real *x, real *y,         \
                                gdn_state##SFX *st);                                   \
    void gdn_state_alloc##SFX(gdn_state##SFX *st, const gdn_config *c, int B); /* zero */ \
    void gdn_state_reset##SFX(gdn_state##SFX *st);                                     \
    void gdn_state_free##SFX(gdn_state##SFX *st);                                      \
    /* From dy [B, T, D]: ACCUMULATES parameter gradients into `grad` (zero it first)  \
     * and writes dx [B, T, D] (skipped when dx is NULL). Needs the forward's cache, \
     * in which it keeps its scratch between calls. */                                 \
    void gdn_backward##SFX(const gdn_config *c, const gdn_params##SFX *p,              \
                           gdn_cache##SFX *cache, const real *x, const real *dy,       \
                           real *dx, gdn_params##SFX *grad);

GDN_DECLARE_API(float, )
GDN_DECLARE_API(double, _f64)

/* GQA expansion for weight transfer: dst [KV*group*hd, D] gets each KV head's hd rows
 * of src [KV*hd, D] repeated `group` times (group = H / KV). Also for biases (D = 1).
 * elem = sizeof one element (float or double). */
void gdn_gqa_expand(void *dst, const void *src, size_t elem, int kv_heads, int group, int hd,
                    int D);

#endif
