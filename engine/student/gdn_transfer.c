/* Teacher attention -> GDN weight transfer (see gdn_transfer.h). */
#include "student/gdn_transfer.h"

#include <string.h>

#include "core/error.h"

int gdn_transfer_from_attention(gdn_params *p, const gdn_config *c, const model_config *mc,
                                const attn_host_weights *w) {
    int H = mc->n_heads, KV = mc->n_kv_heads, hd = mc->head_dim, D = mc->dim;
    if (c->D != D || c->H != H || c->dk != hd || c->dv != hd)
        return gf_fail("gdn transfer: GDN D %d H %d dk %d dv %d does not match the teacher's "
                       "D %d H %d head_dim %d", c->D, c->H, c->dk, c->dv, D, H, hd);
    if (KV <= 0 || H % KV != 0)
        return gf_fail("gdn transfer: %d query heads are not a multiple of %d KV heads", H, KV);
    if (c->qkv_bias && (!w->bq || !w->bk || !w->bv))
        return gf_fail("gdn transfer: q/k/v biases requested but the teacher has none");
    size_t qd = (size_t)H * hd;
    memcpy(p->wq, w->wq, qd * D * sizeof(float));
    gdn_gqa_expand(p->wk, w->wk, sizeof(float), KV, H / KV, hd, D);
    gdn_gqa_expand(p->wv, w->wv, sizeof(float), KV, H / KV, hd, D);
    memcpy(p->wo, w->wo, (size_t)D * qd * sizeof(float));
    for (int j = 0; j < hd; j++) p->w_norm[j] = 1.0f;
    if (c->qkv_bias) {
        memcpy(p->bq, w->bq, qd * sizeof(float));
        gdn_gqa_expand(p->bk, w->bk, sizeof(float), KV, H / KV, hd, 1);
        gdn_gqa_expand(p->bv, w->bv, sizeof(float), KV, H / KV, hd, 1);
    }
    if (c->conv) {
        size_t ch = (size_t)gdn_qkv_width(c);
        memset(p->conv_q, 0, ch * GDN_CONV_K * sizeof(float));
        for (size_t i = 0; i < ch; i++) p->conv_q[i * GDN_CONV_K + GDN_CONV_K - 1] = 1.0f;
    }
    return 0;
}
