#include "train/train_model.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attention/attention.h"
#include "attention/attention_train.h"
#include "core/error.h"
#include "ops/ops.h"
#include "ops/ops_backward.h"

static float *fbuf(size_t n) { return gf_calloc(n ? n : 1, sizeof(float)); }

int train_model_init(train_model *tm, const model_config *cfg, const model_weights *w, bool copy_weights,
                     bool with_grads, const train_mixer *mixers, int max_T) {
    memset(tm, 0, sizeof *tm);
    if (max_T < 1) return gf_fail("sequence length must be positive, got %d", max_T);
    if (cfg->n_heads <= 0 || cfg->n_kv_heads <= 0 || cfg->n_heads % cfg->n_kv_heads != 0 || cfg->head_dim % 2)
        return gf_fail("unsupported head layout: %d heads, %d kv heads, head_dim %d", cfg->n_heads, cfg->n_kv_heads,
                       cfg->head_dim);
    {   /* refuse, rather than abort in an allocation, what cannot fit in memory */
        const double L = cfg->n_layers, T = max_T, D = cfg->dim, F = cfg->hidden_dim, H = cfg->n_heads;
        const double qkv = (double)(cfg->n_heads + 2 * cfg->n_kv_heads) * cfg->head_dim;
        const double floats = L * T * (5 * D + 2 * qkv + 3 * F) + (with_grads ? L : 1) * H * T * T +
                              2 * T * cfg->vocab_size + (with_grads ? 2.0 * model_param_count(cfg) : 0);
        const double phys = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
        if (phys > 0 && floats * 4 > phys)
            return gf_fail("training at %d tokens per sequence needs about %.1f GiB, more than this machine's %.1f GiB",
                           max_T, floats * 4 / 1073741824.0, phys / 1073741824.0);
    }
    tm->cfg = *cfg;
    tm->mixers = mixers;
    tm->max_T = max_T;
    tm->owns_weights = copy_weights;
    if (copy_weights) {
        model_weights_alloc(&tm->w, cfg);
        memcpy(tm->w.block, w->block, w->n_floats * sizeof(float));
    } else {
        tm->w = *w;
    }
    if (with_grads) {
        model_weights_alloc(&tm->g, cfg);
        tm->has_grads = true;
    }
    tm->grad_attn = tm->grad_mixer = tm->grad_rest = with_grads;
    const size_t L = cfg->n_layers, T = max_T, D = cfg->dim, F = cfg->hidden_dim, V = cfg->vocab_size;
    const size_t qd = (size_t)cfg->n_heads * cfg->head_dim, kvd = (size_t)cfg->n_kv_heads * cfg->head_dim;
    tm->inv_freq = gf_malloc((size_t)(cfg->head_dim / 2) * sizeof *tm->inv_freq);
    rope_inv_freq(tm->inv_freq, cfg);
    tm->x_res = fbuf((L + 1) * T * D);
    tm->xn1 = fbuf(L * T * D);
    if (cfg->qk_norm) {
        tm->q_pre = fbuf(L * T * qd);
        tm->k_pre = fbuf(L * T * kvd);
    }
    tm->q = fbuf(L * T * qd);
    tm->k = fbuf(L * T * kvd);
    tm->v = fbuf(L * T * kvd);
    tm->heads = fbuf(L * T * qd);
    tm->probs = fbuf((with_grads ? L : 1) * (size_t)cfg->n_heads * T * T);
    tm->x_mid = fbuf(L * T * D);
    tm->xn2 = fbuf(L * T * D);
    tm->gate = fbuf(L * T * F);
    tm->up = fbuf(L * T * F);
    tm->act = fbuf(L * T * F);
    tm->hidden = fbuf(T * D);
    tm->logits = fbuf(T * V);
    tm->dlogits = fbuf(T * V);
    if (with_grads) {
        tm->dx = fbuf(T * D);
        tm->dxn = fbuf(T * D);
        tm->dtmp = fbuf(T * D);
        tm->dq = fbuf(T * qd);
        tm->dheads = fbuf(T * qd);
        tm->dk = fbuf(T * kvd);
        tm->dv = fbuf(T * kvd);
        tm->dgate = fbuf(T * F);
        tm->dup = fbuf(T * F);
        tm->dscores = fbuf((size_t)cfg->n_heads * T * T);
    }
    return 0;
}

void train_model_free(train_model *tm) {
    if (tm->owns_weights) model_weights_free(&tm->w);
    if (tm->has_grads) model_weights_free(&tm->g);
    float *bufs[] = {tm->x_res, tm->xn1, tm->q_pre, tm->k_pre, tm->q, tm->k, tm->v, tm->heads, tm->x_mid,
                     tm->xn2, tm->gate, tm->up, tm->act, tm->hidden, tm->logits, tm->dlogits, tm->dx, tm->dxn,
                     tm->dtmp, tm->dq, tm->dheads, tm->dk, tm->dv, tm->dgate, tm->dup, tm->probs, tm->dscores};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) free(bufs[i]);
    free(tm->inv_freq);
    memset(tm, 0, sizeof *tm);
}

bool train_model_is_mixer_layer(const train_model *tm, int l) {
    return tm->mixers && tm->mixers[l].forward;
}

const float *train_layer_output(const train_model *tm, int l) {
    return tm->x_res + (size_t)(l + 1) * tm->max_T * tm->cfg.dim;
}

/* Per-layer views of the saved activations. */
typedef struct {
    float *x_in, *xn1, *q_pre, *k_pre, *q, *k, *v, *heads, *x_mid, *xn2, *gate, *up, *act, *x_out;
} layer_acts;

static layer_acts acts_of(const train_model *tm, int l) {
    const model_config *c = &tm->cfg;
    const size_t T = tm->max_T, D = c->dim, F = c->hidden_dim;
    const size_t qd = (size_t)c->n_heads * c->head_dim, kvd = (size_t)c->n_kv_heads * c->head_dim;
    layer_acts a;
    a.x_in = tm->x_res + (size_t)l * T * D;
    a.x_out = tm->x_res + (size_t)(l + 1) * T * D;
    a.xn1 = tm->xn1 + (size_t)l * T * D;
    a.q_pre = tm->q_pre ? tm->q_pre + (size_t)l * T * qd : NULL;
    a.k_pre = tm->k_pre ? tm->k_pre + (size_t)l * T * kvd : NULL;
    a.q = tm->q + (size_t)l * T * qd;
    a.k = tm->k + (size_t)l * T * kvd;
    a.v = tm->v + (size_t)l * T * kvd;
    a.heads = tm->heads + (size_t)l * T * qd;
    a.x_mid = tm->x_mid + (size_t)l * T * D;
    a.xn2 = tm->xn2 + (size_t)l * T * D;
    a.gate = tm->gate + (size_t)l * T * F;
    a.up = tm->up + (size_t)l * T * F;
    a.act = tm->act + (size_t)l * T * F;
    return a;
}

static float *probs_of(const train_model *tm, int l) {
    const size_t per = (size_t)tm->cfg.n_heads * tm->max_T * tm->max_T;
    return tm->probs + (tm->has_grads ? (size_t)l * per : 0);
}

int train_forward(train_model *tm, const int *tokens, int T) {
    const model_config *c = &tm->cfg;
    if (T < 1 || T > tm->max_T) return gf_fail("sequence of %d tokens, the model holds 1..%d", T, tm->max_T);
    const int D = c->dim, F = c->hidden_dim, H = c->n_heads, KV = c->n_kv_heads, hd = c->head_dim;
    const int qd = H * hd, kvd = KV * hd;
    for (int t = 0; t < T; t++) {
        if (tokens[t] < 0 || tokens[t] >= c->vocab_size)
            return gf_fail("token id %d at position %d is outside the vocabulary of %d", tokens[t], t, c->vocab_size);
        memcpy(tm->x_res + (size_t)t * D, tm->w.tok_embed + (size_t)tokens[t] * D, (size_t)D * sizeof(float));
    }
    const attn_shape shape = {H, KV, hd};
    for (int l = 0; l < c->n_layers; l++) {
        if (tm->cancel && atomic_load(tm->cancel)) return gf_fail("cancelled");
        const layer_weights *w = &tm->w.layers[l];
        layer_acts a = acts_of(tm, l);
        op_rmsnorm(a.xn1, a.x_in, w->attn_norm, T, D, c->norm_eps);
        if (train_model_is_mixer_layer(tm, l)) {
            const train_mixer *m = &tm->mixers[l];
            if (m->forward(m->ud, T, a.xn1, a.x_mid) != 0) return -1;
        } else {
            float *qp = c->qk_norm ? a.q_pre : a.q, *kp = c->qk_norm ? a.k_pre : a.k;
            op_linear(qp, a.xn1, w->wq, w->bq, T, D, qd);
            op_linear(kp, a.xn1, w->wk, w->bk, T, D, kvd);
            op_linear(a.v, a.xn1, w->wv, w->bv, T, D, kvd);
            if (c->qk_norm) {
                memcpy(a.q, qp, (size_t)T * qd * sizeof(float));
                memcpy(a.k, kp, (size_t)T * kvd * sizeof(float));
                op_head_rmsnorm(a.q, w->q_norm, T, H, hd, c->norm_eps);
                op_head_rmsnorm(a.k, w->k_norm, T, KV, hd, c->norm_eps);
            }
            op_rope(a.q, tm->inv_freq, T, H, hd, 0, c->rope_pairing);
            op_rope(a.k, tm->inv_freq, T, KV, hd, 0, c->rope_pairing);
            attention_train_forward(a.heads, probs_of(tm, l), a.q, a.k, a.v, &shape, T);
            op_linear(a.x_mid, a.heads, w->wo, NULL, T, qd, D);
        }
        op_add(a.x_mid, a.x_in, (size_t)T * D); /* x_mid = x_in + mixer(xn1) */
        op_rmsnorm(a.xn2, a.x_mid, w->ffn_norm, T, D, c->norm_eps);
        op_linear(a.gate, a.xn2, w->w_gate, NULL, T, D, F);
        op_linear(a.up, a.xn2, w->w_up, NULL, T, D, F);
        memcpy(a.act, a.gate, (size_t)T * F * sizeof(float));
        op_swiglu(a.act, a.up, T, F);
        op_linear(a.x_out, a.act, w->w_down, NULL, T, F, D);
        op_add(a.x_out, a.x_mid, (size_t)T * D);
    }
    op_rmsnorm(tm->hidden, tm->x_res + (size_t)c->n_layers * tm->max_T * D, tm->w.final_norm, T, D, c->norm_eps);
    tm->last_T = T;
    return 0;
}

void train_logits(train_model *tm, int T) {
    op_linear(tm->logits, tm->hidden, tm->w.lm_head, NULL, T, tm->cfg.dim, tm->cfg.vocab_size);
}

void train_zero_grads(train_model *tm) {
    if (tm->has_grads) memset(tm->g.block, 0, tm->g.n_floats * sizeof(float));
    if (tm->mixers)
        for (int l = 0; l < tm->cfg.n_layers; l++)
            if (tm->mixers[l].grads) memset(tm->mixers[l].grads, 0, tm->mixers[l].n_params * sizeof(float));
}

/* The lowest layer whose parameters (or whose inputs' parameters) need a
 * gradient: backward stops there. */
static int lowest_needed_layer(const train_model *tm) {
    if (tm->grad_rest) return 0;
    for (int l = 0; l < tm->cfg.n_layers; l++)
        if (train_model_is_mixer_layer(tm, l) ? tm->grad_mixer : tm->grad_attn) return l;
    return tm->cfg.n_layers;
}

#define G(ptr) (want ? (ptr) : NULL)

int train_backward(train_model *tm, const int *tokens, int T, const float *dlogits, float *const *d_after) {
    GF_ASSERT(tm->has_grads && T == tm->last_T);
    const model_config *c = &tm->cfg;
    const int D = c->dim, F = c->hidden_dim, H = c->n_heads, KV = c->n_kv_heads, hd = c->head_dim;
    const int qd = H * hd, kvd = KV * hd, L = c->n_layers;
    const float eps = c->norm_eps;
    const int floor_l = lowest_needed_layer(tm);
    float *dx = tm->dx;
    bool want = tm->grad_rest;
    memset(dx, 0, (size_t)T * D * sizeof(float));
    if (dlogits) {
        /* logits = hidden lm_head^T; hidden = rmsnorm(x_res[L]) */
        op_linear_backward(tm->dtmp, G(tm->g.lm_head), NULL, dlogits, tm->hidden, tm->w.lm_head, T, D,
                           c->vocab_size, false);
        op_rmsnorm_backward(dx, G(tm->g.final_norm), tm->dtmp, tm->x_res + (size_t)L * tm->max_T * D,
                            tm->w.final_norm, T, D, eps, false);
    }
    const attn_shape shape = {H, KV, hd};
    for (int l = L - 1; l >= floor_l; l--) {
        if (tm->cancel && atomic_load(tm->cancel)) return gf_fail("cancelled");
        const layer_weights *w = &tm->w.layers[l];
        layer_weights *gw = &tm->g.layers[l];
        layer_acts a = acts_of(tm, l);
        if (d_after && d_after[l]) op_add(dx, d_after[l], (size_t)T * D);
        want = tm->grad_rest;
        /* MLP: x_out = x_mid + down(silu(gate(xn2)) * up(xn2)); dx passes through */
        op_linear_backward(tm->dgate, G(gw->w_down), NULL, dx, a.act, w->w_down, T, F, D, false);
        op_swiglu_backward(tm->dgate, tm->dup, tm->dgate, a.gate, a.up, T, F);
        op_linear_backward(tm->dxn, G(gw->w_gate), NULL, tm->dgate, a.xn2, w->w_gate, T, D, F, false);
        op_linear_backward(tm->dxn, G(gw->w_up), NULL, tm->dup, a.xn2, w->w_up, T, D, F, true);
        op_rmsnorm_backward(dx, G(gw->ffn_norm), tm->dxn, a.x_mid, w->ffn_norm, T, D, eps, true);
        /* token mixing: x_mid = x_in + mixer(xn1) */
        const bool need_dx = l > floor_l || tm->grad_rest;
        if (train_model_is_mixer_layer(tm, l)) {
            const train_mixer *m = &tm->mixers[l];
            if (m->backward(m->ud, T, a.xn1, dx, tm->dxn, tm->grad_mixer) != 0) return -1;
        } else {
            want = tm->grad_attn;
            op_linear_backward(tm->dheads, G(gw->wo), NULL, dx, a.heads, w->wo, T, qd, D, false);
            attention_train_backward(tm->dq, tm->dk, tm->dv, tm->dheads, probs_of(tm, l), a.q, a.k, a.v, &shape, T,
                                     tm->dscores);
            op_rope_backward(tm->dq, tm->inv_freq, T, H, hd, 0, c->rope_pairing);
            op_rope_backward(tm->dk, tm->inv_freq, T, KV, hd, 0, c->rope_pairing);
            if (c->qk_norm) {
                op_rmsnorm_backward(tm->dq, G(gw->q_norm), tm->dq, a.q_pre, w->q_norm, T * H, hd, eps, false);
                op_rmsnorm_backward(tm->dk, G(gw->k_norm), tm->dk, a.k_pre, w->k_norm, T * KV, hd, eps, false);
            }
            op_linear_backward(tm->dxn, G(gw->wq), G(gw->bq), tm->dq, a.xn1, w->wq, T, D, qd, false);
            op_linear_backward(tm->dxn, G(gw->wk), G(gw->bk), tm->dk, a.xn1, w->wk, T, D, kvd, true);
            op_linear_backward(tm->dxn, G(gw->wv), G(gw->bv), tm->dv, a.xn1, w->wv, T, D, kvd, true);
        }
        want = tm->grad_rest;
        if (need_dx || want) op_rmsnorm_backward(need_dx ? dx : NULL, G(gw->attn_norm), tm->dxn, a.x_in,
                                                 w->attn_norm, T, D, eps, true);
    }
    if (tm->grad_rest) op_embedding_backward(tm->g.tok_embed, dx, tokens, T, D);
    return 0;
}
