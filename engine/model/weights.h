/* Teacher weights in float32, one allocation with named views (the llm.c habit).
 * Every linear weight is stored as PyTorch does: [out, in], row-major,
 * so y = W x is an sgemm with W transposed. */
#ifndef GRAFT_MODEL_WEIGHTS_H
#define GRAFT_MODEL_WEIGHTS_H

#include <stddef.h>

#include "model/config.h"

typedef struct {
    float *attn_norm;  /* [D] input_layernorm */
    float *wq;         /* [H*hd, D] */
    float *wk;         /* [KV*hd, D] */
    float *wv;         /* [KV*hd, D] */
    float *wo;         /* [D, H*hd] */
    float *bq;         /* [H*hd]  or NULL (qkv_bias) */
    float *bk;         /* [KV*hd] or NULL */
    float *bv;         /* [KV*hd] or NULL */
    float *q_norm;     /* [hd] or NULL (qk_norm) */
    float *k_norm;     /* [hd] or NULL */
    float *ffn_norm;   /* [D] post_attention_layernorm */
    float *w_gate;     /* [F, D] */
    float *w_up;       /* [F, D] */
    float *w_down;     /* [D, F] */
} layer_weights;

typedef struct {
    float *tok_embed;      /* [V, D] */
    layer_weights *layers; /* [L] */
    float *final_norm;     /* [D] */
    float *lm_head;        /* [V, D]; == tok_embed when tied */
    float *block;          /* the one allocation behind every view */
    size_t n_floats;
} model_weights;

/* Sizes and assigns every view for cfg (biases / qk norms only when enabled).
 * The block is zeroed. */
void model_weights_alloc(model_weights *w, const model_config *cfg);
void model_weights_free(model_weights *w);

/* Number of parameters a config implies (tied embeddings counted once). */
size_t model_param_count(const model_config *cfg);

#endif
