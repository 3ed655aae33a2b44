/* Template (included by gdn_f32.c / gdn_f64.c with `real` and SFX defined):
 * parameter and activation-cache allocation with views into one block. */

void SFX(gdn_params_alloc)(SFX(gdn_params) *p, const gdn_config *c) {
    GF_ASSERT(gdn_config_check(c) == 0);
    memset(p, 0, sizeof *p);
    size_t D = (size_t)c->D, H = (size_t)c->H, dk = (size_t)c->dk, dv = (size_t)c->dv;
    p->n = gdn_param_count(c);
    p->block = gf_calloc(p->n, sizeof(real));
    real *at = p->block;
    p->wq = at; at += H * dk * D;
    p->wk = at; at += H * dk * D;
    p->wv = at; at += H * dv * D;
    p->wg = at; at += H * dv * D;
    p->wa = at; at += H * D;
    p->wb = at; at += H * D;
    if (c->qkv_bias) {
        p->bq = at; at += H * dk;
        p->bk = at; at += H * dk;
        p->bv = at; at += H * dv;
    }
    if (c->conv) {
        p->conv_q = at; at += H * dk * GDN_CONV_K;
        p->conv_k = at; at += H * dk * GDN_CONV_K;
        p->conv_v = at; at += H * dv * GDN_CONV_K;
    }
    p->a_log = at; at += H;
    p->dt_bias = at; at += H;
    p->w_norm = at; at += dv;
    p->wo = at; at += D * H * dv;
    GF_ASSERT((size_t)(at - p->block) == p->n);
}

void SFX(gdn_params_free)(SFX(gdn_params) *p) {
    free(p->block);
    memset(p, 0, sizeof *p);
}

void SFX(gdn_cache_alloc)(SFX(gdn_cache) *k, const gdn_config *c, int B, int T) {
    GF_ASSERT(gdn_config_check(c) == 0 && B > 0 && T > 0);
    memset(k, 0, sizeof *k);
    size_t N = (size_t)B * (size_t)T, H = (size_t)c->H;
    size_t hk = H * (size_t)c->dk, hv = H * (size_t)c->dv;
    k->B = B;
    k->T = T;
    k->n_chunks = (T + c->chunk - 1) / c->chunk;
    size_t ck = (size_t)B * H * (size_t)k->n_chunks * (size_t)c->dv * (size_t)c->dk;
    k->n = N * ((size_t)gdn_in_width(c) + (size_t)gdn_qkv_width(c) + 2 * hk + 3 * hv + 3 * H) + ck;
    k->block = gf_malloc(k->n * sizeof(real));
    real *at = k->block;
    k->proj = at; at += N * (size_t)gdn_in_width(c);
    k->qkv_pre = at; at += N * (size_t)gdn_qkv_width(c);
    k->q = at; at += N * hk;
    k->k = at; at += N * hk;
    k->v = at; at += N * hv;
    k->g = at; at += N * H;
    k->beta = at; at += N * H;
    k->o = at; at += N * hv;
    k->rstd = at; at += N * H;
    k->z = at; at += N * hv;
    k->ckpt = at; at += ck;
    GF_ASSERT((size_t)(at - k->block) == k->n);
}

void SFX(gdn_cache_free)(SFX(gdn_cache) *k) {
    free(k->block);
    free(k->bwork);
    memset(k, 0, sizeof *k);
}
