/* The Transformer block, forward and backward, for every use (inference with
 * a KV cache / GDN state, statistics, captures, training):
 *   x_mid = x + mixer(rmsnorm(x))            mixer: attention or GDN (block_attn.c, block_gdn.c)
 *   x_out = x_mid + down(silu(gate(h)) * up(h)),  h = rmsnorm(x_mid)
 * and the model around it: embedding, final norm, LM head. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "model/tf_internal.h"

static const mixer_ops *mixer_of(const transformer *tf, int l) {
    return tf->kind[l] == MIX_GDN ? &gdn_mixer : tf->kind[l] == MIX_NONE ? &none_mixer : &attn_mixer;
}

/* No token mixing: the block adds nothing before its MLP. */
static int none_forward(tf_run *r, int l, int B, int T, int pos0, const tf_hooks *h, gf_buf out, gf_buf add) {
    (void)l, (void)pos0, (void)h;
    const size_t n = (size_t)B * T * r->tf->cfg.dim;
    if (gf_is_none(add)) be_zero(r->tf->be, out, n);
    else if (add.ptr != out.ptr) be_copy(r->tf->be, out, add, n);
    return 0;
}
static void none_backward(tf_run *r, int l, gf_buf dout, gf_buf dxn) {
    (void)l, (void)dout;
    be_zero(r->tf->be, dxn, (size_t)r->B * r->T * r->tf->cfg.dim);
}
const mixer_ops none_mixer = {none_forward, none_backward};

static int block_forward(tf_run *r, int l, int B, int T, int pos0, const tf_hooks *h) {
    const transformer *tf = r->tf;
    gf_backend *be = tf->be;
    const model_config *c = &tf->cfg;
    const layer_views *w = &tf->w.layers[l];
    const layer_acts *a = &r->la[l];
    const int N = B * T, D = c->dim, F = c->hidden_dim;
    const bool train = r->o.train;
    /* The product that ends each sublayer adds the residual in its epilogue (y = x W^T + r), a pass
     * over [N, D] fewer than writing the sublayer's output apart and adding it. Inference: x_in,
     * x_mid and x_out are one buffer (x += ...). Training keeps the three apart for the backward
     * (x_mid = mixer + x_in, x_out = down + x_mid). A capture hook (on_attention) reads the
     * attention's own output, written to mix_out (x_mid itself in training), and the residual is
     * added after it. */
    const bool hooked = tf->kind[l] == MIX_ATTN && h && h->on_attention;
    be_rmsnorm(be, a->xn1, a->rstd1, a->x_in, w->attn_norm, N, D, c->norm_eps);
    if (mixer_of(tf, l)->forward(r, l, B, T, pos0, h, hooked ? a->mix_out : a->x_mid, hooked ? gf_none() : a->x_in) != 0)
        return -1;
    if (hooked) be_add(be, a->x_mid, train ? a->x_in : a->mix_out, (size_t)N * D);
    be_rmsnorm(be, a->xn2, a->rstd2, a->x_mid, w->ffn_norm, N, D, c->norm_eps);
    be_linear(be, a->gate, a->xn2, w->w_gate, gf_none(), N, D, F, false);
    be_linear(be, a->up, a->xn2, w->w_up, gf_none(), N, D, F, false);
    const gf_buf act = train ? a->act : a->gate; /* training keeps gate's pre-activation and act */
    be_swiglu(be, act, a->gate, a->up, (size_t)N * F);
    be_linear_add(be, a->x_out, act, w->w_down, gf_none(), N, F, D, a->x_mid);
    return 0;
}

int tf_forward(tf_run *r, const int *tokens, int B, int T, int pos0, const tf_hooks *h) {
    transformer *tf = r->tf;
    gf_backend *be = tf->be;
    const model_config *c = &tf->cfg;
    const int L = c->n_layers, D = c->dim;
    if (B < 1 || B > r->o.B || T < 1 || T > r->o.T)
        return gf_fail("%d sequences of %d tokens; this run holds 1..%d of 1..%d", B, T, r->o.B, r->o.T);
    if (pos0 < 0 || pos0 + T > r->o.S)
        return gf_fail("positions %d..%d exceed the context of %d", pos0, pos0 + T - 1, r->o.S);
    if (r->o.train && pos0 != 0) return gf_fail("a training forward starts at position 0");
    if (pos0 > 0 && tf_n_gdn(tf) > 0) {
        if (!r->o.decode) return gf_fail("continuing at position %d needs a decode run (GDN state)", pos0);
        if (pos0 != r->pos || B != r->B)
            return gf_fail("gdn layer: position %d does not continue the recurrent state at %d", pos0, r->pos);
    }
    for (int i = 0; i < B * T; i++)
        if (tokens[i] < 0 || tokens[i] >= c->vocab_size)
            return gf_fail("token id %d at position %d is outside the vocabulary of %d", tokens[i], pos0 + i % T,
                           c->vocab_size);
    const int N = B * T;
    if (be_upload(be, r->tokens, tokens, GF_I32, (size_t)N) != 0) return -1;
    be_embedding(be, r->la[0].x_in, tf->w.tok_embed, r->tokens, N, D);
    if (pos0 == 0 && r->o.decode)
        for (int l = 0; l < L; l++)
            if (tf->kind[l] == MIX_GDN) gdn_state_zero(be, &r->la[l].gst, &tf->gcfg, B);
    for (int l = 0; l < L; l++) {
        if (r->o.cancel && atomic_load(r->o.cancel)) return gf_fail("cancelled");
        if (block_forward(r, l, B, T, pos0, h) != 0) return -1;
        if (h && h->after_layer && !gf_is_none(h->after_layer[l]))
            be_copy(be, h->after_layer[l], r->la[l].x_out, (size_t)N * D);
    }
    be_rmsnorm(be, r->hidden, r->rstd_final, r->la[L - 1].x_out, tf->w.final_norm, N, D, c->norm_eps);
    if (r->o.train) be_zero(be, r->dhidden, (size_t)N * D);
    r->have_dhidden = false;
    r->B = B, r->T = T, r->pos0 = pos0, r->pos = pos0 + T;
    if (r->o.stats) r->stat_rows += N;
    return be_check(be);
}

void tf_logits(tf_run *r, int row0, int n, gf_buf out) {
    const model_config *c = &r->tf->cfg;
    be_linear(r->tf->be, out, gf_at(r->hidden, (size_t)row0 * c->dim), r->tf->w.lm_head, gf_none(), n, c->dim,
              c->vocab_size, false);
}

void tf_lm_head_backward(tf_run *r, int row0, int n, gf_buf dlogits) {
    transformer *tf = r->tf;
    const model_config *c = &tf->cfg;
    const size_t at = (size_t)row0 * c->dim;
    const bool rest = tf->train[PGROUP_REST];
    const bool add_dW = !(rest && tf_grads_take_fresh(tf, c->n_layers, TF_FRESH_HEAD));
    be_linear_backward(tf->be, gf_at(r->dhidden, at), rest ? tf->g.lm_head : gf_none(), gf_none(), dlogits,
                       gf_at(r->hidden, at), tf->w.lm_head, n, c->dim, c->vocab_size, true, add_dW);
    r->have_dhidden = true;
}

int tf_backward(tf_run *r, const gf_buf *d_after) {
    transformer *tf = r->tf;
    gf_backend *be = tf->be;
    const model_config *c = &tf->cfg;
    if (!r->o.train) return gf_fail("backward needs a training run");
    const int L = c->n_layers, D = c->dim, F = c->hidden_dim, N = r->B * r->T;
    const float eps = c->norm_eps;
    const bool rest = tf->train[PGROUP_REST];
#define G(view) (rest ? (view) : gf_none())
    if (r->have_dhidden)
        be_rmsnorm_backward(be, r->dx, G(tf->g.final_norm), r->dhidden, r->la[L - 1].x_out, tf->w.final_norm,
                            r->rstd_final, N, D, eps, false);
    else
        be_zero(be, r->dx, (size_t)N * D);
    const int floor_l = tf_lowest_needed_layer(tf);
    for (int l = L - 1; l >= floor_l; l--) {
        if (r->o.cancel && atomic_load(r->o.cancel)) return gf_fail("cancelled");
        const layer_views *w = &tf->w.layers[l], *gw = &tf->g.layers[l];
        const layer_acts *a = &r->la[l];
        /* recompute: the layer's activations again from its kept input (x_out is rewritten with the
         * value it holds: the kernels are deterministic); no hooks, they ran in the forward */
        if (r->o.recompute && block_forward(r, l, r->B, r->T, 0, NULL) != 0) return -1;
        if (d_after && !gf_is_none(d_after[l])) be_add(be, r->dx, d_after[l], (size_t)N * D);
        /* MLP: x_out = x_mid + down(silu(gate) * up); dx passes through */
        const bool add_dW = !(rest && tf_grads_take_fresh(tf, l, TF_FRESH_MLP));
        be_linear_backward(be, r->dact, G(gw->w_down), gf_none(), r->dx, a->act, w->w_down, N, F, D, false, add_dW);
        be_swiglu_backward(be, r->dact, r->dup, r->dact, a->gate, a->up, (size_t)N * F);
        be_linear_backward(be, r->dxn, G(gw->w_gate), gf_none(), r->dact, a->xn2, w->w_gate, N, D, F, false,
                           add_dW);
        be_linear_backward(be, r->dxn, G(gw->w_up), gf_none(), r->dup, a->xn2, w->w_up, N, D, F, true, add_dW);
        be_rmsnorm_backward(be, r->dx, G(gw->ffn_norm), r->dxn, a->x_mid, w->ffn_norm, a->rstd2, N, D, eps, true);
        /* token mixing: x_mid = x_in + mixer(xn1) */
        mixer_of(tf, l)->backward(r, l, r->dx, r->dxn);
        const bool need_dx = l > floor_l || rest;
        be_rmsnorm_backward(be, need_dx ? r->dx : gf_none(), G(gw->attn_norm), r->dxn, a->x_in, w->attn_norm,
                            a->rstd1, N, D, eps, true);
    }
    tf_grads_settle(tf, L, TF_FRESH_HEAD); /* no LM head gradient this step: zeros before the embedding adds */
    if (rest) be_embedding_backward(be, tf->g.tok_embed, r->dx, r->tokens, N, D);
    for (int l = 0; l < L; l++) { /* what tf_zero_grads expected this backward to write and it did not */
        tf_grads_settle(tf, l, TF_FRESH_MLP);
        tf_grads_settle(tf, l, TF_FRESH_MIXER);
    }
#undef G
    return be_check(be);
}
