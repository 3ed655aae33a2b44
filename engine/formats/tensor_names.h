/* A teacher's tensors under every naming scheme graft reads or writes: one
 * row per tensor role (model/layout.h's tensor_kind) with its Hugging Face
 * name, its GGUF name (llama.cpp's convert_hf_to_gguf.py), its llama2.c name
 * (karpathy/llama2.c export.py), its shape and when it exists. The HF and
 * GGUF loaders, the student folder's writer and llama2.c's reader all read
 * this table; scripts/docs-tables.sh prints it into docs/student-format.md. */
#ifndef GRAFT_FORMATS_TENSOR_NAMES_H
#define GRAFT_FORMATS_TENSOR_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "model/layout.h"

/* A dimension of a config: hidden D, MLP F, vocabulary V, head_dim hd,
 * query width H*hd, key/value width KV*hd. */
typedef enum { TDIM_NONE, TDIM_D, TDIM_F, TDIM_V, TDIM_HD, TDIM_QD, TDIM_KVD } tensor_dim;

typedef enum {
    TWHEN_ALWAYS,   /* every teacher */
    TWHEN_QKV_BIAS, /* model_config.qkv_bias */
    TWHEN_QK_NORM,  /* model_config.qk_norm */
    TWHEN_UNTIED    /* !model_config.tied_embeddings */
} tensor_when;

/* Rows that hold RoPE pairs, head by head (q and k, and their biases): they
 * are permuted between adjacent and half-split pairing. */
typedef enum { TROPE_NONE, TROPE_Q_HEADS, TROPE_KV_HEADS } tensor_rope_rows;

typedef struct {
    tensor_kind kind;
    int per_layer;         /* 1: one per layer, the names below follow the layer's prefix */
    const char *hf;        /* "self_attn.q_proj.weight" after "model.layers.N."; globals whole */
    const char *gguf;      /* "attn_q.weight" after "blk.N."; globals whole */
    const char *llama2c;   /* "wq"; NULL where llama2.c has no such tensor */
    tensor_dim rows, cols; /* PyTorch shape [rows, cols]; cols TDIM_NONE for a vector */
    tensor_when when;
    tensor_rope_rows rope_rows;
} tensor_name_desc;

/* In the order the files list them: the globals before the layers first,
 * then one layer's, then the globals after the layers. */
extern const tensor_name_desc tensor_names[];
extern const size_t tensor_names_count;

#define HF_LAYER_PREFIX "model.layers." /* HF per-layer names: "model.layers.N.<hf>" */
#define GGUF_LAYER_PREFIX "blk."        /* GGUF per-layer names: "blk.N.<gguf>" */

typedef enum { TNAMES_HF, TNAMES_GGUF } tensor_scheme;

/* One tensor of a given config. */
typedef struct {
    char name[96];
    int layer;            /* -1 for globals */
    tensor_kind kind;
    int64_t rows, cols;   /* cols = 0 for vectors */
    int rope_heads;       /* heads whose rows hold RoPE pairs (rope_rows); 0 otherwise */
} teacher_tensor;

/* Every tensor config c has, named by scheme, in table order (layers in
 * turn); *out is allocated (free it). Returns the count. */
size_t teacher_tensor_list(const model_config *c, tensor_scheme scheme, teacher_tensor **out);
/* llama2.c's export order (export.py): each kind for all layers in turn.
 * Legacy checkpoints follow it as it is (the RoPE tables between the final
 * norm and the classifier); v1 and v2 write the vectors (norms) first, then
 * the matrices, each in this order. */
extern const tensor_kind llama2c_order[];
extern const size_t llama2c_order_count;
/* Tensors of kind k config c has: n_layers, 1 or 0; and the values in one. */
size_t teacher_tensor_count(const model_config *c, tensor_kind k);
size_t teacher_tensor_numel(const model_config *c, tensor_kind k);

/* The row of role k (every tensor_kind but TK_GDN has one). */
const tensor_name_desc *tensor_name_of(tensor_kind k);
/* The size of dimension d of config c. */
int64_t tensor_dim_size(const model_config *c, tensor_dim d);

#endif
