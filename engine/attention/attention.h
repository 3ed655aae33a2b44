/* Causal grouped-query softmax attention over a KV cache, with optional
 * per-head statistics accumulated on the fly (stats/attn_stats.h). */
#ifndef GRAFT_ATTENTION_ATTENTION_H
#define GRAFT_ATTENTION_ATTENTION_H

#include "stats/attn_stats.h"

typedef struct {
    int n_heads, n_kv_heads, head_dim;
} attn_shape;

/* out[T, H*hd]: for query row t (absolute position pos0 + t) attends to cache
 * rows 0 .. pos0 + t of k_cache, v_cache [*, KV*hd].
 * q[T, H*hd] already rotated. When stats != NULL, adds to layer `layer`. */
void attention_forward(float *out, const float *q, const float *k_cache, const float *v_cache,
                       const attn_shape *s, int T, int pos0, attn_stats *stats, int layer);

#endif
