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

/* The one parameter layout of a GDN layer: every column of it, in block
 * order (the host block, the backend buffers, Stage 2's optimizer spans, the
 * student folder's tensors all follow it). X(ctx..., field, name, rows, cols,
 * taps, when, group, file_rank, doc):
 *   field      the gdn_params view (PyTorch [out, in] row-major)
 *   name       fla's GatedDeltaNet name, after "model.layers.N.linear_attn."
 *   rows, cols, taps  the shape in GDN_DIM_* (cols / taps ONE when absent)
 *   when       ALWAYS, BIAS (gdn_config.qkv_bias) or CONV (gdn_config.conv)
 *   group      Stage 2's optimizer span: neighbours of one group are one span
 *   file_rank  place in the student folder's model.safetensors
 *   doc        what it is (docs/student-format.md prints the table)
 * conv's file shape is [C, 1, K] (PyTorch's depthwise Conv1d); o_norm's
 * weight is shared by all heads.
 * wq..wb are consecutive (the fused input projection W_in [gdn_in_width, D]),
 * so are bq bk bv and conv_q conv_k conv_v (what be_gdn_prep takes). */
#define GDN_PARAM_LIST(X, a, b, d)                                                                        \
    X(a, b, d, wq, "q_proj.weight", HK, D, ONE, ALWAYS, QKV_W, 0, "Wq")                                  \
    X(a, b, d, wk, "k_proj.weight", HK, D, ONE, ALWAYS, QKV_W, 1, "Wk (KV heads repeated per query group)") \
    X(a, b, d, wv, "v_proj.weight", HV, D, ONE, ALWAYS, QKV_W, 2, "Wv")                                  \
    X(a, b, d, wg, "g_proj.weight", HV, D, ONE, ALWAYS, GATE_W, 5, "Wg (output gate)")                   \
    X(a, b, d, wa, "a_proj.weight", H, D, ONE, ALWAYS, GATE_W, 3, "Wa (decay input)")                    \
    X(a, b, d, wb, "b_proj.weight", H, D, ONE, ALWAYS, GATE_W, 4, "Wb (write gate beta)")                \
    X(a, b, d, bq, "q_proj.bias", HK, ONE, ONE, BIAS, QKV_BIAS, 10, "q bias")                            \
    X(a, b, d, bk, "k_proj.bias", HK, ONE, ONE, BIAS, QKV_BIAS, 11, "k bias")                            \
    X(a, b, d, bv, "v_proj.bias", HV, ONE, ONE, BIAS, QKV_BIAS, 12, "v bias")                            \
    X(a, b, d, conv_q, "q_conv1d.weight", HK, ONE, CONV_K, CONV, CONV, 13, "causal depthwise conv of q")         \
    X(a, b, d, conv_k, "k_conv1d.weight", HK, ONE, CONV_K, CONV, CONV, 14, "conv of k")                  \
    X(a, b, d, conv_v, "v_conv1d.weight", HV, ONE, CONV_K, CONV, CONV, 15, "conv of v")                  \
    X(a, b, d, a_log, "A_log", H, ONE, ONE, ALWAYS, DECAY, 7, "decay rate log")                          \
    X(a, b, d, dt_bias, "dt_bias", H, ONE, ONE, ALWAYS, DECAY, 8, "decay bias")                          \
    X(a, b, d, w_norm, "o_norm.weight", DV, ONE, ONE, ALWAYS, FROZEN, 9, "per-head RMSNorm weight, shared by heads") \
    X(a, b, d, wo, "o_proj.weight", D, HV, ONE, ALWAYS, FROZEN, 6, "Wo (the teacher's o_proj)")

#define GDN_P_ENUM_(a, b, d, field, ...) GDN_P_##field,
typedef enum { GDN_PARAM_LIST(GDN_P_ENUM_, _, _, _) GDN_P_COUNT } gdn_param_id;
#undef GDN_P_ENUM_

/* Sizes the layout speaks in: hidden D, heads H, H*dk, H*dv, dv, the conv taps, 1. */
typedef enum { GDN_DIM_D, GDN_DIM_H, GDN_DIM_HK, GDN_DIM_HV, GDN_DIM_DV, GDN_DIM_CONV_K, GDN_DIM_ONE } gdn_dim;
typedef enum { GDN_WHEN_ALWAYS, GDN_WHEN_BIAS, GDN_WHEN_CONV } gdn_when;
/* Stage 2's spans: the weights of q/k/v and their biases take lr_qkv, the
 * gates', conv's and decay's lr_gates; w_norm and wo stay frozen. */
typedef enum {
    GDN_GROUP_QKV_W, GDN_GROUP_GATE_W, GDN_GROUP_QKV_BIAS, GDN_GROUP_CONV, GDN_GROUP_DECAY, GDN_GROUP_FROZEN
} gdn_group;

/* The learning rate a group trains with (student_settings.lr_qkv / lr_gates), or none. */
typedef enum { GDN_LR_QKV, GDN_LR_GATES, GDN_LR_FROZEN } gdn_lr;
gdn_lr gdn_group_lr(gdn_group g);

typedef struct {
    const char *field;      /* "wq" */
    const char *name;       /* "q_proj.weight" */
    gdn_dim rows, cols, taps;
    gdn_when when;
    gdn_group group;
    int file_rank;
    const char *doc;
} gdn_param_desc;
extern const gdn_param_desc gdn_param_descs[GDN_P_COUNT];

/* Whether config c has parameter i; its element count; its offset into the
 * block (the block's end for an absent one); gdn_param_count sums them all. */
int gdn_param_present(const gdn_config *c, gdn_param_id i);
size_t gdn_param_size(const gdn_config *c, gdn_param_id i);
size_t gdn_param_offset(const gdn_config *c, gdn_param_id i);
size_t gdn_dim_size(const gdn_config *c, gdn_dim d);
/* Floats in one parameter block (options included only when enabled). */
size_t gdn_param_count(const gdn_config *c);

/* Parameters of one layer: views into one allocation `block` (one per
 * GDN_PARAM_LIST row, NULL when c leaves it out). The same struct holds
 * gradients. */
#define GDN_P_FIELD_(real, b, d, field, ...) real *field;
#define GDN_PARAMS_FIELDS(real)                                                        \
    GDN_PARAM_LIST(GDN_P_FIELD_, real, _, _)                                           \
    real *block;   /* the one allocation */                                            \
    size_t n;      /* floats in block */

typedef struct { GDN_PARAMS_FIELDS(float) } gdn_params;

/* Points the views of p (a gdn_params, or the float64 reference's
 * gdn_params_f64) into block, in the one layout every element type shares;
 * p->n = gdn_param_count(c) elements. */
#define GDN_P_CARVE_(p, c, blk, field, ...) \
    (p)->field = gdn_param_present(c, GDN_P_##field) ? (blk) + gdn_param_offset(c, GDN_P_##field) : NULL;
#define GDN_PARAMS_CARVE(p, c, blk)                                                    \
    do {                                                                               \
        (p)->block = (blk);                                                            \
        (p)->n = gdn_param_count(c);                                                   \
        GDN_PARAM_LIST(GDN_P_CARVE_, p, c, blk)                                        \
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
