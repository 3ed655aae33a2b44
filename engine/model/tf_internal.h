/* The transformer's run and block functions (engine/model only). */
#ifndef GRAFT_MODEL_TF_INTERNAL_H
#define GRAFT_MODEL_TF_INTERNAL_H

#include "model/transformer.h"

/* Views of one layer's activations in a run. Training: distinct per layer
 * (what the backward needs). Inference: every layer shares one set (the
 * residual x is updated in place) except its KV cache / GDN state. */
typedef struct {
    gf_buf x_in, x_mid, x_out;   /* [N, D] residual entering, after the mixer, after the MLP */
    gf_buf xn1, xn2;             /* [N, D] input_layernorm / post_attention_layernorm outputs */
    gf_buf rstd1, rstd2;         /* F32 [N]: their 1/rms, kept for the backward (training; none in inference) */
    gf_buf gate, up, act;        /* [N, F]; act = silu(gate) * up, kept for the backward (training) */
    gf_buf mix_out;              /* [N, D] where the mixer writes when it does not add (x_mid in training) */
    /* attention */
    gf_buf q, q_pre, k_pre;      /* [N, H*hd], [N, H*hd], [N, KV*hd] (pre: before q/k norm, training) */
    gf_buf rstd_q, rstd_k;       /* F32 [N*H], [N*KV]: the q/k norms' 1/rms (training with qk_norm) */
    gf_buf heads;                /* [N, H*hd] */
    gf_buf k, v;                 /* [B, S, KV*hd]: the cache (inference) or saved keys / values (training) */
    gf_buf knew, vnew;           /* [N, KV*hd] new rows before they go into the cache */
    gf_buf lse;                  /* F32 [B, H, T] (training) */
    /* GDN */
    gdn_acts gdn;
    gdn_state gst;               /* decode runs */
} layer_acts;

struct tf_run {
    transformer *tf;
    tf_run_opts o;               /* capacity */
    gf_buf arena;                /* the one allocation */
    size_t bytes;
    size_t kv_bytes, state_bytes; /* of bytes: the KV cache and the GDN state (decode runs), as carved */
    gf_buf rope;                 /* F32 [S, hd/2, 2] */
    gf_buf tokens;               /* I32 [N] */
    gf_buf hidden, dhidden;      /* [N, D] */
    gf_buf rstd_final;           /* F32 [N]: the final norm's 1/rms (training) */
    gf_buf logits;               /* [logit_rows, V] */
    gf_buf stats;                /* F64 [L, H, GF_STAT_COUNT] */
    long stat_rows;
    layer_acts *la;              /* [L] */
    /* backward scratch (training) */
    gf_buf dx, dxn;              /* [N, D] */
    gf_buf dact, dup;            /* [N, F] */
    gf_buf dheads, dq;           /* [N, H*hd] */
    gf_buf dk, dv;               /* [N, KV*hd] */
    gdn_scratch gs;
    /* the last forward */
    int B, T, pos0, pos;
    bool have_dhidden;
};

/* One mixer kind: forward writes its output [N, D] from a->xn1 (rows of B x T
 * at pos0; with state in decode runs) to out, plus add [N, D] when given (the
 * residual, through its last product's epilogue; add may be out);
 * backward writes dxn [N, D] from dout (the gradient of its output) and
 * accumulates its parameter gradients. */
typedef struct {
    int (*forward)(tf_run *r, int l, int B, int T, int pos0, const tf_hooks *h, gf_buf out, gf_buf add);
    void (*backward)(tf_run *r, int l, gf_buf dout, gf_buf dxn);
} mixer_ops;

extern const mixer_ops attn_mixer, gdn_mixer, none_mixer;

/* The gradient block's fresh marks (engine/model/grads.c), a slot per layer
 * (its MLP's and its mixer's weight matrices) and slot L for the LM head. */
enum { TF_FRESH_MLP = 1, TF_FRESH_MIXER = 2, TF_FRESH_HEAD = 4 };
/* Whether slot l's part was fresh: its first gradient writes rather than adds
 * (accumulate_dW = !it). Clears the mark. */
bool tf_grads_take_fresh(transformer *tf, int l, unsigned part);
/* Zeroes slot l's part if still fresh (the backward did not write it). */
void tf_grads_settle(transformer *tf, int l, unsigned part);
/* The lowest layer whose parameters (or whose inputs' parameters) need a
 * gradient: the backward stops there. */
int tf_lowest_needed_layer(const transformer *tf);

#endif
