/* One Gated DeltaNet layer on a backend (METHOD.md section 3; engine/gdn/gdn.h
 * for the algebra): y = Wo gated_norm(core(prep(x W_in^T))). The forward and
 * backward here are the only GDN layer there is: the hybrid Transformer's GDN
 * mixer (engine/model/block_gdn.c) and Stage 2's per-layer training both call
 * them. Weights are views into a block of gdn_param_count elements laid out as
 * gdn_params; activations are views carved by the caller (gdn_acts_take). */
#ifndef GRAFT_GDN_GDN_LAYER_H
#define GRAFT_GDN_GDN_LAYER_H

#include <stdbool.h>

#include "backend/backend.h"
#include "gdn/gdn.h"
#include "backend/arena.h"

typedef struct {
    gf_buf win;           /* [in_width, D]  wq | wk | wv | wg | wa | wb */
    gf_buf bqkv;          /* [qkv] or none */
    gf_buf conv;          /* [qkv, GDN_CONV_K] or none */
    gf_buf a_log, dt_bias;/* [H] */
    gf_buf w_norm;        /* [dv] */
    gf_buf wo;            /* [D, H*dv] */
} gdn_weights;

/* Views of block (gdn_params layout); a none block gives none views. */
void gdn_weights_bind(gdn_weights *w, const gdn_config *c, gf_buf block);

/* What the forward keeps for the backward (ACT unless noted). */
typedef struct {
    int B, T;
    gf_buf proj;      /* [N, in_width] */
    gf_buf qkv_pre;   /* [N, qkv] */
    gf_buf q, k;      /* [N, H*dk] */
    gf_buf v, o, z;   /* [N, H*dv] */
    gf_buf g, beta;   /* F32 [N, H] */
    gf_buf rstd;      /* F32 [N, H] */
    gf_buf ckpt;      /* F32 (gf_gdn_ckpt_floats): the states [B, H, n_chunks, dv, dk], then with
                         keep_wy the chunks' WY products; none when no backward follows */
    bool keep_wy;
} gdn_acts;

/* Backward scratch (ACT unless noted). */
typedef struct {
    gf_buf dz;        /* [N, H*dv], then d_o */
    gf_buf dproj;     /* [N, in_width] */
    gf_buf dq, dk;    /* [N, H*dk] */
    gf_buf dv;        /* [N, H*dv] */
    gf_buf dg, dbeta; /* F32 [N, H] */
} gdn_scratch;

/* Carried between calls (decode): the recurrent state and the conv history. */
typedef struct {
    gf_buf S;         /* F32 [B, H, dv, dk] */
    gf_buf tail;      /* ACT [B, GDN_CONV_K-1, qkv]; none without the conv */
} gdn_state;

/* What the forward keeps for a backward: nothing (none follows), the state
 * entering each chunk, or those and every chunk's WY products (where the
 * backend's backward starts from them: be_gdn_keeps_wy). */
typedef enum { GDN_KEEP_NOTHING, GDN_KEEP_STATES, GDN_KEEP_STATES_WY } gdn_keep;
static inline gdn_keep gdn_keep_for(bool backward, bool keeps_wy) {
    return !backward ? GDN_KEEP_NOTHING : keeps_wy ? GDN_KEEP_STATES_WY : GDN_KEEP_STATES;
}
void gdn_acts_take(gdn_acts *a, arena *ar, const gdn_config *c, int B, int T, gdn_keep keep, gf_dtype act);
void gdn_scratch_take(gdn_scratch *s, arena *ar, const gdn_config *c, int B, int T, gf_dtype act);
void gdn_state_take(gdn_state *s, arena *ar, const gdn_config *c, int B, gf_dtype act);
void gdn_state_zero(gf_backend *be, const gdn_state *s, const gdn_config *c, int B);

/* x [B*T, D] -> y [B*T, D] (acts sized for B, T with a->B, a->T), plus y_add
 * [B*T, D] in the out-projection's epilogue when given (it may be y: y +=).
 * st (may be NULL): continue from it and update it (then no backward may
 * follow). */
void gdn_layer_forward(gf_backend *be, const gdn_config *c, const gdn_weights *w, const gdn_acts *a, gf_buf x,
                       gf_buf y, gf_buf y_add, const gdn_state *st);
/* From dy: ACCUMULATES into the gradient views of g (none views skipped),
 * except that W_in's and Wo's are written, not added, when !accumulate_dW
 * (the step's first gradient of them: tf_zero_grads), and writes dx (+= when
 * accumulate_dx; none: skipped). */
void gdn_layer_backward(gf_backend *be, const gdn_config *c, const gdn_weights *w, const gdn_weights *g,
                        const gdn_acts *a, const gdn_scratch *s, gf_buf x, gf_buf dy, gf_buf dx, bool accumulate_dx,
                        bool accumulate_dW);

/* Host convenience (Stage 1, tests): runs host parameters p on host x
 * [B*T, D] on be; y [B*T, D] and o [B*T, H*dv] (the core output before the
 * gated norm) are downloaded when not NULL. -1 on out of memory. */
int gdn_layer_run_host(gf_backend *be, const gdn_config *c, const gdn_params *p, const float *x, int B, int T,
                       float *y, float *o);

#endif
