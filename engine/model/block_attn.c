/* The attention mixer: q, k, v projections (+ biases), q/k RMSNorm (Qwen3),
 * RoPE, causal GQA softmax attention over the KV cache (statistics on the
 * way when the run keeps them), o_proj; and its backward. */
#include "model/tf_internal.h"

static int attn_forward(tf_run *r, int l, int B, int T, int pos0, const tf_hooks *h, gf_buf out, gf_buf add) {
    const transformer *tf = r->tf;
    gf_backend *be = tf->be;
    const model_config *c = &tf->cfg;
    const layer_views *w = &tf->w.layers[l];
    const layer_acts *a = &r->la[l];
    const int N = B * T, D = c->dim, H = c->n_heads, KV = c->n_kv_heads, hd = c->head_dim;
    const int qd = H * hd, kvd = KV * hd, S = r->o.S;
    const bool train = r->o.train;
    /* new keys / values go straight into the cache when its rows are contiguous */
    const bool direct = train || B == 1 || (pos0 == 0 && T == S);
    const gf_buf knew = direct ? gf_at(a->k, (size_t)pos0 * kvd) : a->knew;
    const gf_buf vnew = direct ? gf_at(a->v, (size_t)pos0 * kvd) : a->vnew;
    const gf_buf qp = c->qk_norm && train ? a->q_pre : a->q, kp = c->qk_norm && train ? a->k_pre : knew;
    be_linear(be, qp, a->xn1, w->wq, w->bq, N, D, qd, false);
    be_linear(be, kp, a->xn1, w->wk, w->bk, N, D, kvd, false);
    be_linear(be, vnew, a->xn1, w->wv, w->bv, N, D, kvd, false);
    if (c->qk_norm) {
        be_rmsnorm(be, a->q, a->rstd_q, qp, w->q_norm, N * H, hd, c->norm_eps);
        be_rmsnorm(be, knew, a->rstd_k, kp, w->k_norm, N * KV, hd, c->norm_eps);
    }
    be_rope(be, a->q, r->rope, B, T, H, hd, pos0, c->rope_pairing, false);
    be_rope(be, knew, r->rope, B, T, KV, hd, pos0, c->rope_pairing, false);
    if (!direct)
        for (int b = 0; b < B; b++) {
            be_copy(be, gf_at(a->k, ((size_t)b * S + pos0) * kvd), gf_at(knew, (size_t)b * T * kvd), (size_t)T * kvd);
            be_copy(be, gf_at(a->v, ((size_t)b * S + pos0) * kvd), gf_at(vnew, (size_t)b * T * kvd), (size_t)T * kvd);
        }
    const gf_attn_shape sh = {B, T, H, KV, hd, pos0, train ? T : S};
    const gf_buf stats = gf_is_none(r->stats) ? gf_none() : gf_at(r->stats, (size_t)l * H * GF_STAT_COUNT);
    be_attention(be, a->heads, train ? a->lse : gf_none(), stats, a->q, a->k, a->v, &sh);
    be_linear_add(be, out, a->heads, w->wo, gf_none(), N, qd, D, add);
    if (h && h->on_attention) return h->on_attention(h->ud, l, a->xn1, a->heads, out, N); /* never with add */
    return 0;
}

static void attn_backward(tf_run *r, int l, gf_buf dout, gf_buf dxn) {
    transformer *tf = r->tf;
    gf_backend *be = tf->be;
    const model_config *c = &tf->cfg;
    const layer_views *w = &tf->w.layers[l], *gw = &tf->g.layers[l];
    const layer_acts *a = &r->la[l];
    const int B = r->B, T = r->T, N = B * T, D = c->dim, H = c->n_heads, KV = c->n_kv_heads, hd = c->head_dim;
    const int qd = H * hd, kvd = KV * hd;
    const float eps = c->norm_eps;
    const bool want = tf->train[PGROUP_ATTN];
    const bool add_dW = !(want && tf_grads_take_fresh(tf, l, TF_FRESH_MIXER));
#define G(view) (want ? (view) : gf_none())
    be_linear_backward(be, r->dheads, G(gw->wo), gf_none(), dout, a->heads, w->wo, N, qd, D, false, add_dW);
    const gf_attn_shape sh = {B, T, H, KV, hd, 0, T};
    be_attention_backward(be, r->dq, r->dk, r->dv, r->dheads, a->heads, a->lse, a->q, a->k, a->v, &sh);
    be_rope(be, r->dq, r->rope, B, T, H, hd, 0, c->rope_pairing, true);
    be_rope(be, r->dk, r->rope, B, T, KV, hd, 0, c->rope_pairing, true);
    if (c->qk_norm) {
        be_rmsnorm_backward(be, r->dq, G(gw->q_norm), r->dq, a->q_pre, w->q_norm, a->rstd_q, N * H, hd, eps, false);
        be_rmsnorm_backward(be, r->dk, G(gw->k_norm), r->dk, a->k_pre, w->k_norm, a->rstd_k, N * KV, hd, eps, false);
    }
    be_linear_backward(be, dxn, G(gw->wq), G(gw->bq), r->dq, a->xn1, w->wq, N, D, qd, false, add_dW);
    be_linear_backward(be, dxn, G(gw->wk), G(gw->bk), r->dk, a->xn1, w->wk, N, D, kvd, true, add_dW);
    be_linear_backward(be, dxn, G(gw->wv), G(gw->bv), r->dv, a->xn1, w->wv, N, D, kvd, true, add_dW);
#undef G
}

const mixer_ops attn_mixer = {attn_forward, attn_backward};
