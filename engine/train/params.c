#include "train/params.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

static void add(param_list *pl, const char *name, int layer, float *p, float *g, size_t n, param_group grp,
                bool gdn) {
    if (!p || n == 0) return;
    pl->t = gf_realloc(pl->t, (size_t)(pl->n + 1) * sizeof *pl->t);
    param_tensor *t = &pl->t[pl->n++];
    if (layer >= 0) snprintf(t->name, sizeof t->name, "layers.%d.%s", layer, name);
    else snprintf(t->name, sizeof t->name, "%s", name);
    t->p = p;
    t->g = g;
    t->n = n;
    t->group = grp;
    t->is_gdn = gdn;
    pl->total += n;
}

void param_list_build(param_list *pl, train_model *tm) {
    memset(pl, 0, sizeof *pl);
    const model_config *c = &tm->cfg;
    const size_t D = c->dim, F = c->hidden_dim, V = c->vocab_size, hd = c->head_dim;
    const size_t qd = (size_t)c->n_heads * hd, kvd = (size_t)c->n_kv_heads * hd;
    add(pl, "tok_embed", -1, tm->w.tok_embed, tm->g.tok_embed, V * D, PGROUP_REST, false);
    for (int l = 0; l < c->n_layers; l++) {
        layer_weights *w = &tm->w.layers[l], *g = &tm->g.layers[l];
        add(pl, "attn_norm", l, w->attn_norm, g->attn_norm, D, PGROUP_REST, false);
        if (train_model_is_mixer_layer(tm, l)) {
            const train_mixer *m = &tm->mixers[l];
            add(pl, "gdn", l, m->params, m->grads, m->n_params, PGROUP_MIXER, true);
        } else {
            add(pl, "wq", l, w->wq, g->wq, qd * D, PGROUP_MIXER, false);
            add(pl, "wk", l, w->wk, g->wk, kvd * D, PGROUP_MIXER, false);
            add(pl, "wv", l, w->wv, g->wv, kvd * D, PGROUP_MIXER, false);
            add(pl, "wo", l, w->wo, g->wo, D * qd, PGROUP_MIXER, false);
            add(pl, "bq", l, w->bq, g->bq, qd, PGROUP_MIXER, false);
            add(pl, "bk", l, w->bk, g->bk, kvd, PGROUP_MIXER, false);
            add(pl, "bv", l, w->bv, g->bv, kvd, PGROUP_MIXER, false);
            add(pl, "q_norm", l, w->q_norm, g->q_norm, hd, PGROUP_MIXER, false);
            add(pl, "k_norm", l, w->k_norm, g->k_norm, hd, PGROUP_MIXER, false);
        }
        add(pl, "ffn_norm", l, w->ffn_norm, g->ffn_norm, D, PGROUP_REST, false);
        add(pl, "w_gate", l, w->w_gate, g->w_gate, F * D, PGROUP_REST, false);
        add(pl, "w_up", l, w->w_up, g->w_up, F * D, PGROUP_REST, false);
        add(pl, "w_down", l, w->w_down, g->w_down, D * F, PGROUP_REST, false);
    }
    add(pl, "final_norm", -1, tm->w.final_norm, tm->g.final_norm, D, PGROUP_REST, false);
    if (!c->tied_embeddings) add(pl, "lm_head", -1, tm->w.lm_head, tm->g.lm_head, V * D, PGROUP_REST, false);
}

void param_list_free(param_list *pl) {
    free(pl->t);
    memset(pl, 0, sizeof *pl);
}
