/* Weight transfer from a teacher attention layer into a GDN layer (METHOD.md
 * section 3): Wq <- q_proj; Wk, Wv <- k_proj, v_proj with each KV head repeated
 * for its query group; Wo <- o_proj; w_norm = 1; q/k/v biases copied the same
 * way when the GDN keeps them (cfg.qkv_bias); the short conv, when on, starts
 * as the identity (tap K-1 = 1). Wa, Wb, Wg, A_log, dt_bias are left untouched:
 * they belong to the chosen initialization. */
#ifndef GRAFT_STUDENT_GDN_TRANSFER_H
#define GRAFT_STUDENT_GDN_TRANSFER_H

#include "gdn/gdn.h"
#include "model/config.h"

/* A teacher attention layer's weights on the host (downloaded by the caller):
 * wq [H*hd, D], wk, wv [KV*hd, D], wo [D, H*hd]; biases NULL when absent. */
typedef struct {
    const float *wq, *wk, *wv, *wo, *bq, *bk, *bv;
} attn_host_weights;

/* 0, or -1 with a message when the shapes disagree (D, H, head_dim, KV groups,
 * or biases asked for but absent in the teacher). */
int gdn_transfer_from_attention(gdn_params *p, const gdn_config *c, const model_config *mc,
                                const attn_host_weights *w);

#endif
