/* The transformer's construction (borrowed views or owned trainable blocks)
 * and its runs: one allocation of activations per (B, T) shape. */
#include "model/transformer.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "backend/arena.h"
#include "model/rope.h"
#include "model/tf_internal.h"

static int check_shapes(const model_config *c, const gdn_config *g, const mixer_kind *kinds) {
    if (c->n_heads <= 0 || c->n_kv_heads <= 0 || c->n_heads % c->n_kv_heads != 0 || c->head_dim % 2)
        return gf_fail("unsupported head layout: %d heads, %d kv heads, head_dim %d", c->n_heads, c->n_kv_heads,
                       c->head_dim);
    for (int l = 0; kinds && l < c->n_layers; l++) {
        if (kinds[l] != MIX_GDN) continue;
        if (!g) return gf_fail("layer %d is GDN but no GDN config was given", l);
        if (gdn_config_check(g) != 0) return -1;
        if (g->D != c->dim) return gf_fail("GDN width %d differs from the model's %d", g->D, c->dim);
    }
    return 0;
}

static void set_kinds(transformer *tf, const mixer_kind *kinds) {
    tf->kind = gf_calloc((size_t)(tf->cfg.n_layers ? tf->cfg.n_layers : 1), sizeof *tf->kind);
    for (int l = 0; l < tf->cfg.n_layers; l++) tf->kind[l] = kinds ? kinds[l] : MIX_ATTN;
}

int tf_view(transformer *tf, const model *m, const gdn_config *g, const mixer_kind *kinds, const gf_buf *gdn_blocks) {
    memset(tf, 0, sizeof *tf);
    if (check_shapes(&m->cfg, g, kinds) != 0) return -1;
    tf->cfg = m->cfg;
    if (g) tf->gcfg = *g;
    tf->be = m->be;
    set_kinds(tf, kinds);
    model_views *v = &tf->w;
    v->L = m->cfg.n_layers;
    v->tok_embed = m->w.tok_embed;
    v->final_norm = m->w.final_norm;
    v->lm_head = m->w.lm_head;
    v->layers = gf_calloc((size_t)(v->L ? v->L : 1), sizeof *v->layers);
    for (int l = 0; l < v->L; l++) {
        layer_views *lv = &v->layers[l];
        *lv = m->w.layers[l];
        if (tf->kind[l] == MIX_ATTN) continue;
        lv->wq = lv->wk = lv->wv = lv->wo = lv->bq = lv->bk = lv->bv = lv->q_norm = lv->k_norm = gf_none();
        if (tf->kind[l] == MIX_NONE) continue;
        lv->gdn_block = gdn_blocks[l];
        gdn_weights_bind(&lv->gdn, g, gdn_blocks[l]);
    }
    return 0;
}

int tf_trainable(transformer *tf, const model *m, const gdn_config *g, const mixer_kind *kinds,
                 const gf_buf *gdn_blocks) {
    memset(tf, 0, sizeof *tf);
    if (check_shapes(&m->cfg, g, kinds) != 0) return -1;
    tf->cfg = m->cfg;
    if (g) tf->gcfg = *g;
    tf->be = m->be;
    set_kinds(tf, kinds);
    gf_backend *be = tf->be;
    if (param_layout_build(&tf->layout, &tf->cfg, tf->kind, g) != 0) goto fail;
    const size_t n = tf->layout.total;
    if (be_alloc(be, &tf->params, n, be_act(be)) != 0) goto oom;
    if (be_act(be) == GF_F32) tf->master = tf->params;
    else if (be_alloc(be, &tf->master, n, GF_F32) != 0) goto oom;
    if (be_alloc(be, &tf->grads, n, GF_F32) != 0) goto oom;
    be_zero(be, tf->params, n); /* the alignment padding too */
    be_zero(be, tf->grads, n);
    for (int i = 0; i < tf->layout.n; i++) {
        const param_entry *e = &tf->layout.t[i];
        gf_buf src = e->kind == TK_GDN ? gdn_blocks[e->layer] : model_view(&m->w, e->layer, e->kind);
        be_copy(be, gf_at(tf->params, e->off), src, e->n);
    }
    if (!gf_same(tf->master, tf->params)) be_copy(be, tf->master, tf->params, n);
    model_views_bind(&tf->w, &tf->layout, &tf->cfg, g, tf->params);
    model_views_bind(&tf->g, &tf->layout, &tf->cfg, g, tf->grads);
    tf->fresh = gf_calloc((size_t)tf->cfg.n_layers + 1, sizeof *tf->fresh);
    for (int k = 0; k < PGROUP_COUNT; k++) tf->train[k] = true;
    if (be_sync(be) != 0) goto fail;
    return 0;
oom:
    gf_fail_prefix("the trainable model");
fail:
    tf_free(tf);
    return -1;
}

void tf_free(transformer *tf) {
    if (tf->be) {
        if (!gf_same(tf->master, tf->params)) be_free(tf->be, &tf->master);
        be_free(tf->be, &tf->params);
        be_free(tf->be, &tf->grads);
    }
    model_views_free(&tf->w);
    model_views_free(&tf->g);
    param_layout_free(&tf->layout);
    free(tf->kind);
    free(tf->fresh);
    memset(tf, 0, sizeof *tf);
}

int tf_n_gdn(const transformer *tf) {
    int n = 0;
    for (int l = 0; l < tf->cfg.n_layers; l++) n += tf->kind[l] == MIX_GDN;
    return n;
}

static int n_attn(const transformer *tf) {
    int n = 0;
    for (int l = 0; l < tf->cfg.n_layers; l++) n += tf->kind[l] == MIX_ATTN;
    return n;
}

bool tf_is_trainable(const transformer *tf) { return !gf_is_none(tf->grads); }

size_t tf_kv_bytes_per_token(const transformer *tf) {
    const size_t per = 2 * (size_t)tf->cfg.n_kv_heads * tf->cfg.head_dim * gf_dtype_size(be_act(tf->be));
    return per * (size_t)n_attn(tf);
}

size_t tf_state_bytes(const transformer *tf) {
    const gdn_config *c = &tf->gcfg;
    size_t per = (size_t)c->H * c->dv * c->dk * gf_dtype_size(GF_F32); /* as gdn_state_take carves it */
    if (c->conv) per += (size_t)(GDN_CONV_K - 1) * gdn_qkv_width(c) * gf_dtype_size(be_act(tf->be));
    return per * (size_t)tf_n_gdn(tf);
}

/* ------------------------------------------------------------- runs */

/* Carves every buffer of a run of compute type act (measuring when ar->base is none). */
/* The first layer of l's mixer kind (recompute runs share its activations). */
static int first_kind_of(const transformer *tf, int l) {
    int f = 0;
    while (tf->kind[f] != tf->kind[l]) f++;
    return f;
}

/* keeps_wy: the run's backend keeps the GDN WY products for the backward (be_gdn_keeps_wy) */
static void carve(tf_run *r, arena *ar, gf_dtype act, bool keeps_wy) {
    const transformer *tf = r->tf;
    const model_config *c = &tf->cfg;
    const int L = c->n_layers, B = r->o.B, T = r->o.T, S = r->o.S;
    const size_t N = (size_t)B * T, D = c->dim, F = c->hidden_dim, V = c->vocab_size;
    const size_t qd = (size_t)c->n_heads * c->head_dim, kvd = (size_t)c->n_kv_heads * c->head_dim;
    const bool train = r->o.train;
    const int n_gdn = tf_n_gdn(tf), n_att = n_attn(tf);

    r->rope = arena_take(ar, (size_t)S * c->head_dim, GF_F32);
    r->tokens = arena_take(ar, N, GF_I32);
    r->hidden = arena_take(ar, N * D, act);
    r->logits = arena_take(ar, (size_t)r->o.logit_rows * V, act);
    r->stats = r->o.stats ? arena_take(ar, (size_t)L * c->n_heads * GF_STAT_COUNT, GF_F64) : gf_none();
    if (!train) { /* one layer's activations, shared; the cache and GDN state per layer */
        layer_acts sh;
        memset(&sh, 0, sizeof sh);
        sh.x_in = sh.x_mid = sh.x_out = arena_take(ar, N * D, act);
        sh.xn1 = sh.xn2 = arena_take(ar, N * D, act);
        sh.mix_out = arena_take(ar, N * D, act);
        sh.gate = arena_take(ar, N * F, act);
        sh.up = arena_take(ar, N * F, act);
        if (n_att) {
            sh.q = arena_take(ar, N * qd, act);
            sh.heads = arena_take(ar, N * qd, act);
            sh.knew = arena_take(ar, N * kvd, act);
            sh.vnew = arena_take(ar, N * kvd, act);
        }
        if (n_gdn) gdn_acts_take(&sh.gdn, ar, &tf->gcfg, B, T, GDN_KEEP_NOTHING, act);
        r->kv_bytes = r->state_bytes = 0;
        for (int l = 0; l < L; l++) {
            r->la[l] = sh;
            const size_t at = ar->off;
            if (tf->kind[l] == MIX_ATTN) {
                r->la[l].k = arena_take(ar, (size_t)B * S * kvd, act);
                r->la[l].v = arena_take(ar, (size_t)B * S * kvd, act);
                r->kv_bytes += ar->off - at;
            } else if (r->o.decode) {
                gdn_state_take(&r->la[l].gst, ar, &tf->gcfg, B, act);
                r->state_bytes += ar->off - at;
            }
        }
        return;
    }
    /* training: what each layer's backward needs; with recompute, one set that
     * every layer's forward fills again just before its backward */
    gf_buf x = arena_take(ar, (size_t)(L + 1) * N * D, act); /* residual entering each layer, then the output */
    const bool shared = r->o.recompute;
    layer_acts first_gdn = {0}, first_attn = {0}; /* with recompute: the first GDN / attention layer's sets */
    for (int l = 0; l < L; l++) {
        layer_acts *a = &r->la[l];
        memset(a, 0, sizeof *a);
        a->x_in = gf_at(x, (size_t)l * N * D);
        a->x_out = gf_at(x, (size_t)(l + 1) * N * D);
        if (shared && l > 0) {
            a->x_mid = a->mix_out = r->la[0].x_mid;
            a->xn1 = r->la[0].xn1, a->xn2 = r->la[0].xn2, a->gate = r->la[0].gate, a->up = r->la[0].up;
            a->act = r->la[0].act, a->rstd1 = r->la[0].rstd1, a->rstd2 = r->la[0].rstd2;
        } else {
            a->x_mid = a->mix_out = arena_take(ar, N * D, act);
            a->xn1 = arena_take(ar, N * D, act);
            a->xn2 = arena_take(ar, N * D, act);
            a->rstd1 = arena_take(ar, N, GF_F32); /* the backward reads them instead of a pass over x */
            a->rstd2 = arena_take(ar, N, GF_F32);
            a->gate = arena_take(ar, N * F, act);
            a->up = arena_take(ar, N * F, act);
            a->act = arena_take(ar, N * F, act); /* the backward's dW of down needs it: kept, not recomputed */
        }
        const bool taken = shared && l > 0 && first_kind_of(tf, l) < l;
        if (tf->kind[l] == MIX_GDN) {
            if (taken) a->gdn = first_gdn.gdn;
            else gdn_acts_take(&a->gdn, ar, &tf->gcfg, B, T, gdn_keep_for(true, keeps_wy), act), first_gdn = *a;
        }
        if (tf->kind[l] != MIX_ATTN) continue;
        if (taken) {
            a->q = first_attn.q, a->heads = first_attn.heads, a->k = first_attn.k, a->v = first_attn.v;
            a->lse = first_attn.lse, a->q_pre = first_attn.q_pre, a->k_pre = first_attn.k_pre;
            a->rstd_q = first_attn.rstd_q, a->rstd_k = first_attn.rstd_k;
            continue;
        }
        a->q = arena_take(ar, N * qd, act);
        a->heads = arena_take(ar, N * qd, act);
        a->k = arena_take(ar, N * kvd, act);
        a->v = arena_take(ar, N * kvd, act);
        a->lse = arena_take(ar, N * c->n_heads, GF_F32);
        if (c->qk_norm) {
            a->q_pre = arena_take(ar, N * qd, act);
            a->k_pre = arena_take(ar, N * kvd, act);
            a->rstd_q = arena_take(ar, N * c->n_heads, GF_F32);
            a->rstd_k = arena_take(ar, N * c->n_kv_heads, GF_F32);
        }
        first_attn = *a;
    }
    r->dhidden = arena_take(ar, N * D, act);
    r->rstd_final = arena_take(ar, N, GF_F32);
    r->dx = arena_take(ar, N * D, act);
    r->dxn = arena_take(ar, N * D, act);
    r->dact = arena_take(ar, N * F, act);
    r->dup = arena_take(ar, N * F, act);
    if (n_att) {
        r->dheads = arena_take(ar, N * qd, act);
        r->dq = arena_take(ar, N * qd, act);
        r->dk = arena_take(ar, N * kvd, act);
        r->dv = arena_take(ar, N * kvd, act);
    }
    if (n_gdn) gdn_scratch_take(&r->gs, ar, &tf->gcfg, B, T, act);
}

int tf_logit_rows(size_t N, int vocab_size, bool device) {
    const size_t cap = (device ? TF_LOGIT_CHUNK_DEVICE : TF_LOGIT_CHUNK) / (size_t)(vocab_size > 0 ? vocab_size : 1);
    return (int)(N < cap ? N : cap > 0 ? cap : 1);
}

/* The options a run really has: S at least T (T when training), logit rows
 * tf_logit_rows when not given. */
static tf_run_opts run_opts(const model_config *c, const tf_run_opts *o, bool device) {
    tf_run_opts r = *o;
    if (r.S < r.T || r.train) r.S = r.T;
    if (r.logit_rows <= 0) r.logit_rows = tf_logit_rows((size_t)r.B * r.T, c->vocab_size, device);
    return r;
}

size_t tf_run_measure(const model_config *c, const gdn_config *g, const mixer_kind *kinds, const tf_run_opts *o,
                      gf_dtype act, bool device) {
    transformer tf;
    memset(&tf, 0, sizeof tf);
    tf.cfg = *c;
    if (g) tf.gcfg = *g;
    set_kinds(&tf, kinds);
    tf_run r;
    memset(&r, 0, sizeof r);
    r.tf = &tf;
    r.o = run_opts(c, o, device);
    r.la = gf_calloc((size_t)(c->n_layers ? c->n_layers : 1), sizeof *r.la);
    arena ar = {gf_none(), 0};
    carve(&r, &ar, act, device); /* be_gdn_keeps_wy: a device keeps the WY products */
    free(r.la);
    free(tf.kind);
    return ar.off;
}

int tf_run_open(tf_run **out, transformer *tf, const tf_run_opts *o) {
    *out = NULL;
    const model_config *c = &tf->cfg;
    if (o->B < 1 || o->T < 1) return gf_fail("a run needs at least one sequence of one token (got %d x %d)", o->B, o->T);
    if (o->train && !tf_is_trainable(tf)) return gf_fail("training needs a trainable model");
    if (o->train && o->decode) return gf_fail("a training run carries no decode state");
    if (o->recompute && (!o->train || o->stats))
        return gf_fail("recomputing activations is for training runs without statistics");
    tf_run *r = gf_calloc(1, sizeof *r);
    r->tf = tf;
    r->o = run_opts(c, o, !be_is_host(tf->be));
    r->la = gf_calloc((size_t)(c->n_layers ? c->n_layers : 1), sizeof *r->la);
    arena ar = {gf_none(), 0};
    const gf_dtype act = be_act(tf->be);
    carve(r, &ar, act, be_gdn_keeps_wy(tf->be));
    r->bytes = ar.off;
    if (be_alloc(tf->be, &r->arena, (r->bytes + 3) / 4, GF_F32) != 0) {
        gf_fail_prefix(o->train ? "training activations" : "activations");
        free(r->la);
        free(r);
        return -1;
    }
    ar = (arena){r->arena, 0};
    carve(r, &ar, act, be_gdn_keeps_wy(tf->be));
    float *tab = malloc((size_t)r->o.S * c->head_dim * sizeof *tab);
    if (!tab) {
        gf_fail("out of memory: the RoPE table for %d positions", r->o.S);
        tf_run_close(r);
        return -1;
    }
    rope_table(tab, c, r->o.S);
    be_upload(tf->be, r->rope, tab, GF_F32, (size_t)r->o.S * c->head_dim);
    free(tab);
    if (!gf_is_none(r->stats)) be_zero(tf->be, r->stats, (size_t)c->n_layers * c->n_heads * GF_STAT_COUNT);
    *out = r;
    return 0;
}

void tf_run_close(tf_run *r) {
    if (!r) return;
    be_free(r->tf->be, &r->arena);
    free(r->la);
    free(r);
}

void tf_run_bytes(const tf_run *r, size_t *total, size_t *kv_cache, size_t *gdn_state) {
    if (total) *total = r->bytes;
    if (kv_cache) *kv_cache = r->kv_bytes;
    if (gdn_state) *gdn_state = r->state_bytes;
}

gf_buf tf_run_logits(const tf_run *r, int *rows) {
    if (rows) *rows = r->o.logit_rows;
    return r->logits;
}
gf_buf tf_run_layer_output(const tf_run *r, int l) { return r->la[l].x_out; }

int tf_run_stats(tf_run *r, double *out, long *rows) {
    const model_config *c = &r->tf->cfg;
    if (gf_is_none(r->stats)) return gf_fail("this run keeps no statistics");
    if (rows) *rows = r->stat_rows;
    return be_download(r->tf->be, out, GF_F64, r->stats, (size_t)c->n_layers * c->n_heads * GF_STAT_COUNT);
}
