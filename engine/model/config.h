/* The architecture hyperparameters of a teacher, whatever format it came from. */
#ifndef GRAFT_MODEL_CONFIG_H
#define GRAFT_MODEL_CONFIG_H

#include <stdbool.h>

#include "backend/backend.h" /* rope_pairing */

typedef enum { ARCH_LLAMA = 0, ARCH_QWEN2 = 1, ARCH_QWEN3 = 2 } model_arch;


/* FACTORS: per-frequency divisors given by the file (GGUF rope_freqs.weight,
 * which llama.cpp's converter writes for llama3 scaling). */
typedef enum {
    ROPE_SCALING_NONE = 0, ROPE_SCALING_LLAMA3 = 1, ROPE_SCALING_LINEAR = 2, ROPE_SCALING_FACTORS = 3
} rope_scaling_type;

#define ROPE_MAX_FACTORS 256 /* head_dim / 2 at most, for ROPE_SCALING_FACTORS */

typedef enum { SOURCE_HF = 0, SOURCE_LLAMA2C = 1, SOURCE_GGUF = 2 } model_source;

typedef struct {
    rope_scaling_type type;
    float factor;            /* llama3 and linear */
    float low_freq_factor;   /* llama3 */
    float high_freq_factor;  /* llama3 */
    int original_max_pos;    /* llama3: original_max_position_embeddings */
    float freq_factors[ROPE_MAX_FACTORS]; /* FACTORS: inv_freq[i] /= freq_factors[i] */
} rope_scaling;

typedef struct {
    model_arch arch;
    model_source source;
    int dim;          /* D: hidden size */
    int hidden_dim;   /* F: MLP intermediate size */
    int n_layers;     /* L */
    int n_heads;      /* H: query heads */
    int n_kv_heads;   /* KV heads (GQA: H % KV == 0) */
    int head_dim;     /* hd; Qwen3 may have H*hd != D */
    int vocab_size;   /* V */
    int max_seq;      /* max_position_embeddings / llama2.c seq_len */
    float norm_eps;
    float rope_theta;
    rope_pairing rope_pairing;
    rope_scaling rope_scaling;
    bool qkv_bias;         /* Qwen2/2.5 */
    bool qk_norm;          /* Qwen3 */
    bool tied_embeddings;  /* lm_head shares tok_embed */
    int bos_id, eos_id;    /* -1 when unknown */
} model_config;

const char *model_arch_name(model_arch a);
const char *model_source_name(model_source s);

#endif
