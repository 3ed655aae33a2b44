/* A trainable hybrid model: the teacher's architecture (embedding, RMSNorm,
 * attention with RoPE and GQA, SwiGLU MLP, LM head) with chosen layers' token
 * mixing replaced by a train_mixer (a GDN layer, engine/train/gdn_train_mixer.h),
 * run one sequence of T <= max_T tokens at a time from position 0.
 *
 * The forward pass keeps every activation the backward pass needs, one
 * allocation per shape holding all layers ([L, max_T, ...]). Gradients are
 * ACCUMULATED into `g` (same layout as the weights) and into each mixer's own
 * gradient block, so several sequences and micro-batches sum before a step. */
#ifndef GRAFT_TRAIN_TRAIN_MODEL_H
#define GRAFT_TRAIN_TRAIN_MODEL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "model/config.h"
#include "model/weights.h"

/* A layer that replaces softmax attention, with its own parameters.
 * forward: out[T, D] from xn[T, D] (the layer's normalized input, positions
 *   0..T-1), keeping what backward needs for the same sequence.
 * backward: from dout[T, D], ADDS parameter gradients to `grads` (when
 *   want_param_grads) and writes dxn[T, D] (when dxn != NULL). */
typedef struct {
    int (*forward)(void *ud, int T, const float *xn, float *out);
    int (*backward)(void *ud, int T, const float *xn, const float *dout, float *dxn, bool want_param_grads);
    float *params; /* [n_params] one block (the optimizer updates it in place) */
    float *grads;  /* [n_params] */
    size_t n_params;
    void *ud;
} train_mixer;

typedef struct {
    model_config cfg;
    model_weights w;     /* parameters (owned unless borrowed) */
    model_weights g;     /* gradients, same layout; empty when built without grads */
    bool owns_weights, has_grads;
    const train_mixer *mixers; /* [L] or NULL; mixers[l].forward == NULL keeps attention */
    /* which parameters need gradients (frozen groups skip their dW work) */
    bool grad_attn;  /* attention projections and q/k norms of attention layers */
    bool grad_mixer; /* mixer blocks */
    bool grad_rest;  /* embedding, RMSNorm weights, MLP, final norm, LM head */
    int max_T;
    double *inv_freq; /* [hd/2] */
    /* saved activations */
    float *x_res;  /* [L+1, max_T, D] residual entering layer l; [L] = after the last layer */
    float *xn1;    /* [L, max_T, D] input_layernorm output */
    float *q_pre, *k_pre; /* [L, max_T, H*hd], [L, max_T, KV*hd] before the q/k norm (qk_norm only) */
    float *q, *k, *v;     /* [L, max_T, H*hd], [L, max_T, KV*hd] (q, k normed and rotated) */
    float *heads;  /* [L, max_T, H*hd] attention output before o_proj */
    float *probs;  /* [L, H, max_T, max_T] attention probabilities ([H, max_T, max_T] reused without grads) */
    float *x_mid;  /* [L, max_T, D] residual after the attention block */
    float *xn2;    /* [L, max_T, D] post_attention_layernorm output */
    float *gate, *up, *act; /* [L, max_T, F] gate pre-activation, up, silu(gate) * up */
    float *hidden; /* [max_T, D] final-normed */
    float *logits; /* [max_T, V] */
    float *dlogits;/* [max_T, V] the loss writes its gradient here */
    /* backward scratch */
    float *dx, *dxn, *dtmp;   /* [max_T, D] */
    float *dq, *dheads;       /* [max_T, H*hd] */
    float *dk, *dv;           /* [max_T, KV*hd] */
    float *dgate, *dup;       /* [max_T, F] */
    float *dscores;           /* [H, max_T, max_T] */
    int last_T;
    /* non-zero: train_forward / train_backward stop between layers with "cancelled"
     * (the trainer points it at its stop flag; NULL: never) */
    const atomic_int *cancel;
} train_model;

/* copy_weights: the model owns a copy of w; otherwise it borrows w (which must
 * outlive it; a borrowed model is for forward-only use, e.g. the teacher).
 * with_grads allocates the gradient block. max_T bounds sequence length. */
int train_model_init(train_model *tm, const model_config *cfg, const model_weights *w, bool copy_weights,
                     bool with_grads, const train_mixer *mixers, int max_T);
void train_model_free(train_model *tm);

bool train_model_is_mixer_layer(const train_model *tm, int l);

/* Runs tokens[0..T) and keeps activations; leaves hidden [T, D]. -1 on bad
 * tokens / length. */
int train_forward(train_model *tm, const int *tokens, int T);
/* logits [T, V] from hidden. */
void train_logits(train_model *tm, int T);
/* Residual stream after layer l (the hidden state "after the layer"), [T, D]. */
const float *train_layer_output(const train_model *tm, int l);

/* Backward of the last forward. dlogits: gradient of the loss with respect
 * to logits [T, V] (NULL: the loss does not read the logits). d_after:
 * optional [L] array of [T, D] gradients added to the residual after layer l
 * (NULL entries skipped; the alignment loss). Accumulates into g and the
 * mixers' grads. -1 when a mixer fails. */
int train_backward(train_model *tm, const int *tokens, int T, const float *dlogits, float *const *d_after);

/* Zeroes every gradient (weights and mixers). */
void train_zero_grads(train_model *tm);

#endif
