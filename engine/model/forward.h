/* The teacher forward pass on CPU: one sequence at a time, causal, with a KV
 * cache so the same code runs whole sequences (pos0 = 0) and token-by-token
 * generation (pos0 = tokens so far). Per-head attention statistics are
 * accumulated when asked. */
#ifndef GRAFT_MODEL_FORWARD_H
#define GRAFT_MODEL_FORWARD_H

#include <stdatomic.h>

#include "model/model.h"
#include "stats/attn_stats.h"

/* Called after each layer's attention block (before the residual add), for
 * calibration and alignment, which need the teacher's per-layer tensors. */
typedef struct {
    void (*after_attention)(void *ud, int layer, int T,
                            const float *xn,       /* [T, D] input_layernorm output */
                            const float *heads,    /* [T, H*hd] per-head outputs before o_proj */
                            const float *attn_out);/* [T, D] after o_proj */
    void *ud;
} forward_hooks;

/* Replaces the softmax attention of chosen layers (the hybrid student's GDN
 * layers). fn writes out[T, D] (the mixer's output after its own output
 * projection, added to the residual by the caller) from xn[T, D], the layer's
 * normalized input, for positions pos0 .. pos0+T-1. Returns 0 or -1. */
typedef struct {
    int (*fn)(void *ud, int layer, int T, int pos0, const float *xn, float *out);
    void *ud;
} layer_mixer;

typedef struct {
    const model *m;
    const layer_mixer *mixers; /* [L] or NULL; mixers[l].fn == NULL keeps attention */
    const atomic_int *cancel;  /* NULL, or non-zero: model_forward stops between layers with "cancelled" */
    int max_T;      /* cache capacity (positions) */
    double *inv_freq; /* [hd/2] */
    float *k_cache, *v_cache; /* [L, max_T, KV*hd] rotated keys, values */
    /* activations for up to max_T rows */
    float *x;       /* [max_T, D] residual stream */
    float *xn;      /* [max_T, D] normalized */
    float *q;       /* [max_T, H*hd] */
    float *heads;   /* [max_T, H*hd] */
    float *tmp;     /* [max_T, D] */
    float *gate, *up; /* [max_T, F] */
    float *hidden;  /* [max_T, D] final-normed hidden states of the last call */
    int last_T;
} forward_ctx;

int forward_ctx_init(forward_ctx *c, const model *m, int max_T);
void forward_ctx_free(forward_ctx *c);

/* Runs tokens[0..T) at positions pos0 .. pos0+T-1 (the cache must hold
 * positions 0 .. pos0-1 from earlier calls). Leaves c->hidden [T, D].
 * Returns -1 with an error for out-of-range tokens or positions. */
int model_forward(forward_ctx *c, const int *tokens, int T, int pos0, attn_stats *stats,
                  const forward_hooks *hooks);

/* logits[n, V] for rows row0 .. row0+n-1 of c->hidden. */
void model_logits(const forward_ctx *c, int row0, int n, float *logits);

#endif
