#include "model/weights.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

/* Walks the layout once; with base == NULL it only counts. */
static size_t layout(model_weights *w, const model_config *c, float *base) {
    size_t off = 0;
#define TAKE(ptr, n)                                   \
    do {                                               \
        if (base) (ptr) = base + off;                  \
        off += (size_t)(n);                            \
    } while (0)
    const size_t D = c->dim, F = c->hidden_dim, V = c->vocab_size;
    const size_t qd = (size_t)c->n_heads * c->head_dim, kvd = (size_t)c->n_kv_heads * c->head_dim;
    float *tok_embed = NULL, *final_norm = NULL, *lm_head = NULL;
    TAKE(tok_embed, V * D);
    for (int l = 0; l < c->n_layers; l++) {
        layer_weights tmp, *lw = base ? &w->layers[l] : &tmp;
        TAKE(lw->attn_norm, D);
        TAKE(lw->wq, qd * D);
        TAKE(lw->wk, kvd * D);
        TAKE(lw->wv, kvd * D);
        TAKE(lw->wo, D * qd);
        if (c->qkv_bias) {
            TAKE(lw->bq, qd);
            TAKE(lw->bk, kvd);
            TAKE(lw->bv, kvd);
        }
        if (c->qk_norm) {
            TAKE(lw->q_norm, c->head_dim);
            TAKE(lw->k_norm, c->head_dim);
        }
        TAKE(lw->ffn_norm, D);
        TAKE(lw->w_gate, F * D);
        TAKE(lw->w_up, F * D);
        TAKE(lw->w_down, D * F);
    }
    TAKE(final_norm, D);
    if (!c->tied_embeddings) TAKE(lm_head, V * D);
#undef TAKE
    if (base) {
        w->tok_embed = tok_embed;
        w->final_norm = final_norm;
        w->lm_head = c->tied_embeddings ? tok_embed : lm_head;
    }
    return off;
}

void model_weights_alloc(model_weights *w, const model_config *cfg) {
    memset(w, 0, sizeof *w);
    w->n_floats = layout(w, cfg, NULL);
    w->block = gf_calloc(w->n_floats, sizeof(float));
    w->layers = gf_calloc((size_t)cfg->n_layers, sizeof *w->layers);
    layout(w, cfg, w->block);
}

void model_weights_free(model_weights *w) {
    free(w->block);
    free(w->layers);
    memset(w, 0, sizeof *w);
}

size_t model_param_count(const model_config *cfg) { return layout(NULL, cfg, NULL); }
