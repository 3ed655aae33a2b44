/* The parameters of a Transformer (teacher or hybrid student) as ONE flat
 * block with named views: one allocation for the compute copy, and for a
 * trainable model one for the master copy, one for the gradients and two for
 * AdamW's moments, all with the same layout, so that a checkpoint is one write
 * of each and an all-reduce of gradients would be one call.
 *
 * Layout: the REST group first (tok_embed; per layer attn_norm, ffn_norm,
 * w_gate, w_up, w_down; final_norm; lm_head unless tied), then per layer its
 * token mixer: attention (wq wk wv [bq bk bv] [q_norm k_norm] wo: q, k, v
 * contiguous so one GEMM could do them) or one GDN block (gdn_params layout).
 * So each parameter group is a contiguous span. Linear weights are PyTorch's
 * [out, in] row-major. */
#ifndef GRAFT_MODEL_LAYOUT_H
#define GRAFT_MODEL_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>

#include "backend/backend.h"
#include "gdn/gdn.h"
#include "gdn/gdn_layer.h"
#include "model/config.h"

/* A layer's token mixer: softmax attention, Gated DeltaNet, or none (the
 * attention block removed: the layer keeps its MLP; the "ar" selection
 * strategy scores layers this way). */
typedef enum { MIX_ATTN = 0, MIX_GDN = 1, MIX_NONE = 2 } mixer_kind;

/* Parameter groups (METHOD.md 9: attention and GDN vs the rest). */
typedef enum { PGROUP_REST = 0, PGROUP_ATTN = 1, PGROUP_GDN = 2, PGROUP_COUNT = 3 } param_group;

typedef enum {
    TK_EMBED, TK_FINAL_NORM, TK_LM_HEAD,                       /* global */
    TK_ATTN_NORM, TK_FFN_NORM, TK_GATE, TK_UP, TK_DOWN,         /* every layer */
    TK_Q, TK_K, TK_V, TK_BQ, TK_BK, TK_BV, TK_QNORM, TK_KNORM, TK_O, /* attention layers */
    TK_GDN,                                                    /* GDN layers: the whole block */
    TK_COUNT
} tensor_kind;

/* graft's own name of a kind: "tok_embed", "wq", "gdn" (the layout's entry names). */
const char *tensor_kind_name(tensor_kind k);

typedef struct {
    char name[48];      /* "tok_embed", "layers.3.wq", "layers.5.gdn" */
    tensor_kind kind;
    int layer;          /* -1 for globals */
    size_t off, n;      /* elements into the block */
    param_group group;
} param_entry;

typedef struct {
    int L;
    param_entry *t;
    int n;
    size_t total;       /* elements in the block */
    int *index;         /* [(L + 1) * TK_COUNT] entry of (layer, kind) or -1; globals at layer L */
} param_layout;

/* kinds [L] (NULL: every layer attention); g: the GDN config (NULL when no layer is GDN). */
int param_layout_build(param_layout *pl, const model_config *c, const mixer_kind *kinds, const gdn_config *g);
void param_layout_free(param_layout *pl);
/* NULL when the model has no such tensor (biases off, tied head, the other mixer). */
const param_entry *param_layout_find(const param_layout *pl, int layer, tensor_kind k);

/* Elements of one tensor of a config (0 when absent). */
size_t tensor_elems(const model_config *c, const gdn_config *g, tensor_kind k);
/* Parameters of an all-attention model (tied embeddings counted once). */
size_t model_param_count(const model_config *cfg);

/* Views of every tensor of one layer (none where absent). */
typedef struct {
    gf_buf attn_norm, ffn_norm, w_gate, w_up, w_down;
    gf_buf wq, wk, wv, bq, bk, bv, q_norm, k_norm, wo;
    gf_buf gdn_block;   /* the layer's GDN block */
    gdn_weights gdn;    /* views into it */
} layer_views;

typedef struct {
    int L;
    gf_buf tok_embed, final_norm, lm_head; /* lm_head == tok_embed when tied */
    layer_views *layers;                    /* [L] */
} model_views;

/* Views of block (a parameter or a gradient block of layout pl). */
void model_views_bind(model_views *v, const param_layout *pl, const model_config *c, const gdn_config *g,
                      gf_buf block);
void model_views_free(model_views *v);
/* The view of (layer, kind) in v (none when absent). */
gf_buf model_view(const model_views *v, int layer, tensor_kind k);

#endif
