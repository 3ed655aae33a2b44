/* Test helper: a loaded model's parameters downloaded to the host with the
 * named float views the tests read (the engine keeps them in a backend block
 * and reads them only through be_download; tests do the same, here).
 * HW(m) downloads afresh on every call into one of a ring of 16 mirrors, so a
 * pointer it returns stays valid for the next 15 calls. */
#ifndef GRAFT_TESTS_HOST_WEIGHTS_H
#define GRAFT_TESTS_HOST_WEIGHTS_H

#include <stdlib.h>
#include <string.h>

#include "model/model.h"

typedef struct {
    float *attn_norm, *wq, *wk, *wv, *wo, *bq, *bk, *bv, *q_norm, *k_norm, *ffn_norm, *w_gate, *w_up, *w_down;
} layer_weights;

typedef struct {
    float *tok_embed;       /* [V, D] */
    layer_weights *layers;  /* [L] */
    float *final_norm;      /* [D] */
    float *lm_head;         /* == tok_embed when tied */
    float *block;           /* the whole parameter block, the model's layout */
    size_t n_floats;
} model_weights;

static inline float *hw_view(const model *m, float *block, int l, tensor_kind k) {
    const param_entry *e = param_layout_find(&m->layout, l, k);
    return e ? block + e->off : NULL;
}

static inline const model_weights *HW(const model *m) {
    static model_weights ring[16];
    static int next;
    model_weights *w = &ring[next++ % 16];
    free(w->block);
    free(w->layers);
    memset(w, 0, sizeof *w);
    w->n_floats = m->layout.total;
    w->block = calloc(w->n_floats ? w->n_floats : 1, sizeof(float));
    w->layers = calloc((size_t)(m->cfg.n_layers ? m->cfg.n_layers : 1), sizeof *w->layers);
    if (!w->block || !w->layers || be_download(m->be, w->block, GF_F32, m->params, w->n_floats) != 0) abort();
    w->tok_embed = hw_view(m, w->block, -1, TK_EMBED);
    w->final_norm = hw_view(m, w->block, -1, TK_FINAL_NORM);
    w->lm_head = m->cfg.tied_embeddings ? w->tok_embed : hw_view(m, w->block, -1, TK_LM_HEAD);
    for (int l = 0; l < m->cfg.n_layers; l++) {
        layer_weights *lw = &w->layers[l];
        lw->attn_norm = hw_view(m, w->block, l, TK_ATTN_NORM);
        lw->wq = hw_view(m, w->block, l, TK_Q);
        lw->wk = hw_view(m, w->block, l, TK_K);
        lw->wv = hw_view(m, w->block, l, TK_V);
        lw->wo = hw_view(m, w->block, l, TK_O);
        lw->bq = hw_view(m, w->block, l, TK_BQ);
        lw->bk = hw_view(m, w->block, l, TK_BK);
        lw->bv = hw_view(m, w->block, l, TK_BV);
        lw->q_norm = hw_view(m, w->block, l, TK_QNORM);
        lw->k_norm = hw_view(m, w->block, l, TK_KNORM);
        lw->ffn_norm = hw_view(m, w->block, l, TK_FFN_NORM);
        lw->w_gate = hw_view(m, w->block, l, TK_GATE);
        lw->w_up = hw_view(m, w->block, l, TK_UP);
        lw->w_down = hw_view(m, w->block, l, TK_DOWN);
    }
    return w;
}

#ifdef GRAFT_STUDENT_STUDENT_H
/* Layer l's GDN parameters of a student, downloaded (a ring of 16, as HW). */
static inline const gdn_params *SL(const student *s, int l) {
    static gdn_params ring[16];
    static int next;
    gdn_params *p = &ring[next++ % 16];
    if (p->block) gdn_params_free(p);
    gdn_params_alloc(p, &s->gcfg);
    if (student_get_layer(s, l, p) != 0) abort();
    return p;
}
#endif

#endif
