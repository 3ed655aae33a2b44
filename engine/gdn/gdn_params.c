/* Host parameters of a GDN layer: one zeroed block and its named views. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "gdn/gdn.h"

void gdn_params_views(gdn_params *p, const gdn_config *c, float *block) {
    size_t D = (size_t)c->D, H = (size_t)c->H, dk = (size_t)c->dk, dv = (size_t)c->dv;
    memset(p, 0, sizeof *p);
    p->block = block;
    p->n = gdn_param_count(c);
    float *at = block;
    p->wq = at, at += H * dk * D;
    p->wk = at, at += H * dk * D;
    p->wv = at, at += H * dv * D;
    p->wg = at, at += H * dv * D;
    p->wa = at, at += H * D;
    p->wb = at, at += H * D;
    if (c->qkv_bias) {
        p->bq = at, at += H * dk;
        p->bk = at, at += H * dk;
        p->bv = at, at += H * dv;
    }
    if (c->conv) {
        p->conv_q = at, at += H * dk * GDN_CONV_K;
        p->conv_k = at, at += H * dk * GDN_CONV_K;
        p->conv_v = at, at += H * dv * GDN_CONV_K;
    }
    p->a_log = at, at += H;
    p->dt_bias = at, at += H;
    p->w_norm = at, at += dv;
    p->wo = at, at += D * H * dv;
    GF_ASSERT((size_t)(at - block) == p->n);
}

void gdn_params_alloc(gdn_params *p, const gdn_config *c) {
    GF_ASSERT(gdn_config_check(c) == 0);
    gdn_params_views(p, c, gf_calloc(gdn_param_count(c), sizeof(float)));
}

void gdn_params_free(gdn_params *p) {
    free(p->block);
    memset(p, 0, sizeof *p);
}
