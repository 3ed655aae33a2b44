/* Parameter layout and views (see layout.h). */
#include "model/layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

static const char *const kind_names[TK_COUNT] = {
    "tok_embed", "final_norm", "lm_head", "attn_norm", "ffn_norm", "w_gate", "w_up", "w_down", "wq", "wk",
    "wv",        "bq",         "bk",      "bv",        "q_norm",   "k_norm", "wo",   "gdn"};

const char *tensor_kind_name(tensor_kind k) { return (unsigned)k < TK_COUNT ? kind_names[k] : "?"; }

size_t tensor_elems(const model_config *c, const gdn_config *g, tensor_kind k) {
    const size_t D = c->dim, F = c->hidden_dim, V = c->vocab_size, hd = c->head_dim;
    const size_t qd = (size_t)c->n_heads * hd, kvd = (size_t)c->n_kv_heads * hd;
    switch (k) {
    case TK_EMBED: return V * D;
    case TK_FINAL_NORM: return D;
    case TK_LM_HEAD: return c->tied_embeddings ? 0 : V * D;
    case TK_ATTN_NORM: case TK_FFN_NORM: return D;
    case TK_GATE: case TK_UP: case TK_DOWN: return F * D;
    case TK_Q: case TK_O: return qd * D;
    case TK_K: case TK_V: return kvd * D;
    case TK_BQ: return c->qkv_bias ? qd : 0;
    case TK_BK: case TK_BV: return c->qkv_bias ? kvd : 0;
    case TK_QNORM: case TK_KNORM: return c->qk_norm ? hd : 0;
    case TK_GDN: return g ? gdn_param_count(g) : 0;
    case TK_COUNT: break;
    }
    return 0;
}

static void add(param_layout *pl, const model_config *c, const gdn_config *g, int layer, tensor_kind k,
                param_group grp) {
    const size_t n = tensor_elems(c, g, k);
    if (n == 0) return;
    param_entry *t = &pl->t[pl->n];
    if (layer >= 0) snprintf(t->name, sizeof t->name, "layers.%d.%s", layer, kind_names[k]);
    else snprintf(t->name, sizeof t->name, "%s", kind_names[k]);
    t->kind = k;
    t->layer = layer;
    t->off = pl->total;
    t->n = n;
    t->group = grp;
    pl->index[(size_t)(layer >= 0 ? layer : pl->L) * TK_COUNT + k] = pl->n;
    pl->total += (n + 15) / 16 * 16; /* 64-byte aligned views */
    pl->n++;
}

int param_layout_build(param_layout *pl, const model_config *c, const mixer_kind *kinds, const gdn_config *g) {
    memset(pl, 0, sizeof *pl);
    const int L = c->n_layers;
    for (int l = 0; kinds && l < L; l++)
        if (kinds[l] == MIX_GDN && !g) return gf_fail("layer %d is GDN but no GDN config was given", l);
    pl->L = L;
    pl->t = gf_calloc((size_t)L * 16 + 8, sizeof *pl->t);
    pl->index = gf_malloc((size_t)(L + 1) * TK_COUNT * sizeof *pl->index);
    for (int i = 0; i < (L + 1) * TK_COUNT; i++) pl->index[i] = -1;
    add(pl, c, g, -1, TK_EMBED, PGROUP_REST);
    for (int l = 0; l < L; l++) {
        add(pl, c, g, l, TK_ATTN_NORM, PGROUP_REST);
        add(pl, c, g, l, TK_FFN_NORM, PGROUP_REST);
        add(pl, c, g, l, TK_GATE, PGROUP_REST);
        add(pl, c, g, l, TK_UP, PGROUP_REST);
        add(pl, c, g, l, TK_DOWN, PGROUP_REST);
    }
    add(pl, c, g, -1, TK_FINAL_NORM, PGROUP_REST);
    add(pl, c, g, -1, TK_LM_HEAD, PGROUP_REST);
    for (int l = 0; l < L; l++) {
        if (kinds && kinds[l] == MIX_GDN) {
            add(pl, c, g, l, TK_GDN, PGROUP_GDN);
            continue;
        }
        if (kinds && kinds[l] == MIX_NONE) continue;
        static const tensor_kind attn[] = {TK_Q, TK_K, TK_V, TK_BQ, TK_BK, TK_BV, TK_QNORM, TK_KNORM, TK_O};
        for (size_t i = 0; i < sizeof attn / sizeof *attn; i++) add(pl, c, g, l, attn[i], PGROUP_ATTN);
    }
    return 0;
}

void param_layout_free(param_layout *pl) {
    free(pl->t);
    free(pl->index);
    memset(pl, 0, sizeof *pl);
}

const param_entry *param_layout_find(const param_layout *pl, int layer, tensor_kind k) {
    const int i = pl->index[(size_t)(layer >= 0 ? layer : pl->L) * TK_COUNT + k];
    return i >= 0 ? &pl->t[i] : NULL;
}

size_t model_param_count(const model_config *cfg) {
    size_t n = tensor_elems(cfg, NULL, TK_EMBED) + tensor_elems(cfg, NULL, TK_FINAL_NORM) +
               tensor_elems(cfg, NULL, TK_LM_HEAD);
    for (int k = TK_ATTN_NORM; k <= TK_O; k++) n += (size_t)cfg->n_layers * tensor_elems(cfg, NULL, (tensor_kind)k);
    return n;
}

void model_views_bind(model_views *v, const param_layout *pl, const model_config *c, const gdn_config *g,
                      gf_buf block) {
    memset(v, 0, sizeof *v);
    v->L = pl->L;
    v->layers = gf_calloc((size_t)(pl->L ? pl->L : 1), sizeof *v->layers);
    for (int i = 0; i < pl->n; i++) {
        const param_entry *t = &pl->t[i];
        gf_buf b = gf_at(block, t->off);
        if (t->layer < 0) {
            if (t->kind == TK_EMBED) v->tok_embed = b;
            else if (t->kind == TK_FINAL_NORM) v->final_norm = b;
            else if (t->kind == TK_LM_HEAD) v->lm_head = b;
            continue;
        }
        layer_views *lv = &v->layers[t->layer];
        switch (t->kind) {
        case TK_ATTN_NORM: lv->attn_norm = b; break;
        case TK_FFN_NORM: lv->ffn_norm = b; break;
        case TK_GATE: lv->w_gate = b; break;
        case TK_UP: lv->w_up = b; break;
        case TK_DOWN: lv->w_down = b; break;
        case TK_Q: lv->wq = b; break;
        case TK_K: lv->wk = b; break;
        case TK_V: lv->wv = b; break;
        case TK_BQ: lv->bq = b; break;
        case TK_BK: lv->bk = b; break;
        case TK_BV: lv->bv = b; break;
        case TK_QNORM: lv->q_norm = b; break;
        case TK_KNORM: lv->k_norm = b; break;
        case TK_O: lv->wo = b; break;
        case TK_GDN:
            lv->gdn_block = b;
            gdn_weights_bind(&lv->gdn, g, b);
            break;
        default: break;
        }
    }
    if (c->tied_embeddings) v->lm_head = v->tok_embed;
}

void model_views_free(model_views *v) {
    free(v->layers);
    memset(v, 0, sizeof *v);
}

gf_buf model_view(const model_views *v, int layer, tensor_kind k) {
    if (layer < 0) return k == TK_EMBED ? v->tok_embed : k == TK_FINAL_NORM ? v->final_norm
                        : k == TK_LM_HEAD ? v->lm_head : gf_none();
    const layer_views *lv = &v->layers[layer];
    switch (k) {
    case TK_ATTN_NORM: return lv->attn_norm;
    case TK_FFN_NORM: return lv->ffn_norm;
    case TK_GATE: return lv->w_gate;
    case TK_UP: return lv->w_up;
    case TK_DOWN: return lv->w_down;
    case TK_Q: return lv->wq;
    case TK_K: return lv->wk;
    case TK_V: return lv->wv;
    case TK_BQ: return lv->bq;
    case TK_BK: return lv->bk;
    case TK_BV: return lv->bv;
    case TK_QNORM: return lv->q_norm;
    case TK_KNORM: return lv->k_norm;
    case TK_O: return lv->wo;
    case TK_GDN: return lv->gdn_block;
    default: return gf_none();
    }
}
