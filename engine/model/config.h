/* The architecture hyperparameters of a teacher, whatever format it came from. */
#ifndef GRAFT_MODEL_CONFIG_H
#define GRAFT_MODEL_CONFIG_H

#include <stdbool.h>

#include "backend/backend.h" /* rope_pairing */

typedef enum { ARCH_LLAMA = 0, ARCH_QWEN2 = 1, ARCH_QWEN3 = 2, ARCH_COUNT = 3 } model_arch;

/* What an architecture family is: the one table that the Hugging Face and
 * GGUF loaders, the student folder's config.json, the help and the docs read
 * (scripts/docs-tables.sh prints it into README.md). model_archs[i].arch == i. */
typedef struct {
    model_arch arch;
    const char *name;         /* "qwen2": HF model_type, GGUF general.architecture, graft's name */
    const char *hf_class;     /* "Qwen2ForCausalLM": HF config.json architectures[0] */
    const char *family;       /* "Qwen2/2.5": the models it covers, for people */
    bool bias_always;         /* q/k/v biases whatever attention_bias says (Qwen2's attention hard-codes them) */
    bool qk_norm;             /* per-head RMSNorm of q and k (Qwen3) */
    int head_dim_default;     /* HF head_dim when absent; 0: hidden_size / num_attention_heads */
    int max_pos_default;      /* HF max_position_embeddings when absent (the transformers config's default) */
    bool gguf_permuted_qk;    /* llama.cpp's converter permutes q/k rows for its adjacent-pair RoPE */
} model_arch_desc;
extern const model_arch_desc model_archs[ARCH_COUNT];

/* The entry whose name (HF model_type / GGUF architecture) or HF class is
 * `name`; NULL when none is. */
const model_arch_desc *model_arch_by_name(const char *name);
const model_arch_desc *model_arch_by_hf_class(const char *hf_class);
/* Every architecture's name in table order, joined by ", " ("llama, qwen2, qwen3"). */
const char *model_arch_list(void);


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
