#include "model/forward.h"

#include <stdlib.h>
#include <string.h>

#include "attention/attention.h"
#include "core/error.h"
#include "ops/ops.h"

int forward_ctx_init(forward_ctx *c, const model *m, int max_T) {
    memset(c, 0, sizeof *c);
    const model_config *k = &m->cfg;
    if (max_T <= 0) return gf_fail("context length must be positive, got %d", max_T);
    c->m = m;
    c->max_T = max_T;
    const size_t D = k->dim, F = k->hidden_dim, T = max_T;
    const size_t qd = (size_t)k->n_heads * k->head_dim, kvd = (size_t)k->n_kv_heads * k->head_dim;
    c->inv_freq = gf_malloc((size_t)(k->head_dim / 2) * sizeof *c->inv_freq);
    rope_inv_freq(c->inv_freq, k);
    c->k_cache = gf_malloc((size_t)k->n_layers * T * kvd * sizeof(float));
    c->v_cache = gf_malloc((size_t)k->n_layers * T * kvd * sizeof(float));
    c->x = gf_malloc(T * D * sizeof(float));
    c->xn = gf_malloc(T * D * sizeof(float));
    c->q = gf_malloc(T * qd * sizeof(float));
    c->heads = gf_malloc(T * qd * sizeof(float));
    c->tmp = gf_malloc(T * D * sizeof(float));
    c->gate = gf_malloc(T * F * sizeof(float));
    c->up = gf_malloc(T * F * sizeof(float));
    c->hidden = gf_malloc(T * D * sizeof(float));
    return 0;
}

void forward_ctx_free(forward_ctx *c) {
    free(c->inv_freq);
    free(c->k_cache);
    free(c->v_cache);
    free(c->x);
    free(c->xn);
    free(c->q);
    free(c->heads);
    free(c->tmp);
    free(c->gate);
    free(c->up);
    free(c->hidden);
    memset(c, 0, sizeof *c);
}

int model_forward(forward_ctx *c, const int *tokens, int T, int pos0, attn_stats *stats,
                  const forward_hooks *hooks) {
    const model *m = c->m;
    const model_config *k = &m->cfg;
    if (T <= 0) return gf_fail("empty input");
    if (pos0 < 0 || pos0 + T > c->max_T)
        return gf_fail("positions %d..%d exceed the context of %d", pos0, pos0 + T - 1, c->max_T);
    const int D = k->dim, F = k->hidden_dim, H = k->n_heads, KV = k->n_kv_heads, hd = k->head_dim;
    const int qd = H * hd, kvd = KV * hd;
    for (int t = 0; t < T; t++) {
        if (tokens[t] < 0 || tokens[t] >= k->vocab_size)
            return gf_fail("token id %d at position %d is outside the vocabulary of %d", tokens[t], pos0 + t,
                           k->vocab_size);
        memcpy(c->x + (size_t)t * D, m->w.tok_embed + (size_t)tokens[t] * D, (size_t)D * sizeof(float));
    }
    const attn_shape shape = {H, KV, hd};
    for (int l = 0; l < k->n_layers; l++) {
        if (c->cancel && atomic_load(c->cancel)) return gf_fail("cancelled");
        const layer_weights *w = &m->w.layers[l];
        float *kc = c->k_cache + (size_t)l * c->max_T * kvd;
        float *vc = c->v_cache + (size_t)l * c->max_T * kvd;
        float *knew = kc + (size_t)pos0 * kvd; /* [T, KV*hd] rows appended to the cache */
        float *vnew = vc + (size_t)pos0 * kvd;

        op_rmsnorm(c->xn, c->x, w->attn_norm, T, D, k->norm_eps);
        if (c->mixers && c->mixers[l].fn) {
            if (c->mixers[l].fn(c->mixers[l].ud, l, T, pos0, c->xn, c->tmp) != 0) return -1;
            op_add(c->x, c->tmp, (size_t)T * D);
            goto mlp;
        }
        op_linear(c->q, c->xn, w->wq, w->bq, T, D, qd);
        op_linear(knew, c->xn, w->wk, w->bk, T, D, kvd);
        op_linear(vnew, c->xn, w->wv, w->bv, T, D, kvd);
        if (k->qk_norm) {
            op_head_rmsnorm(c->q, w->q_norm, T, H, hd, k->norm_eps);
            op_head_rmsnorm(knew, w->k_norm, T, KV, hd, k->norm_eps);
        }
        op_rope(c->q, c->inv_freq, T, H, hd, pos0, k->rope_pairing);
        op_rope(knew, c->inv_freq, T, KV, hd, pos0, k->rope_pairing);
        attention_forward(c->heads, c->q, kc, vc, &shape, T, pos0, stats, l);
        op_linear(c->tmp, c->heads, w->wo, NULL, T, qd, D);
        if (hooks && hooks->after_attention) hooks->after_attention(hooks->ud, l, T, c->xn, c->heads, c->tmp);
        op_add(c->x, c->tmp, (size_t)T * D);
    mlp:
        op_rmsnorm(c->xn, c->x, w->ffn_norm, T, D, k->norm_eps);
        op_linear(c->gate, c->xn, w->w_gate, NULL, T, D, F);
        op_linear(c->up, c->xn, w->w_up, NULL, T, D, F);
        op_swiglu(c->gate, c->up, T, F);
        op_linear(c->tmp, c->gate, w->w_down, NULL, T, F, D);
        op_add(c->x, c->tmp, (size_t)T * D);
    }
    op_rmsnorm(c->hidden, c->x, m->w.final_norm, T, D, k->norm_eps);
    c->last_T = T;
    return 0;
}

void model_logits(const forward_ctx *c, int row0, int n, float *logits) {
    const model_config *k = &c->m->cfg;
    op_linear(logits, c->hidden + (size_t)row0 * k->dim, c->m->w.lm_head, NULL, n, k->dim, k->vocab_size);
}
