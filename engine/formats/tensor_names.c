#include "formats/tensor_names.h"

#include <stdio.h>

#include "core/error.h"

const tensor_name_desc tensor_names[] = {
    {TK_EMBED, 0, "model.embed_tokens.weight", "token_embd.weight", "tok_embeddings", TDIM_V, TDIM_D, TWHEN_ALWAYS,
     TROPE_NONE},
    {TK_ATTN_NORM, 1, "input_layernorm.weight", "attn_norm.weight", "attention_norm", TDIM_D, TDIM_NONE, TWHEN_ALWAYS,
     TROPE_NONE},
    {TK_Q, 1, "self_attn.q_proj.weight", "attn_q.weight", "wq", TDIM_QD, TDIM_D, TWHEN_ALWAYS, TROPE_Q_HEADS},
    {TK_K, 1, "self_attn.k_proj.weight", "attn_k.weight", "wk", TDIM_KVD, TDIM_D, TWHEN_ALWAYS, TROPE_KV_HEADS},
    {TK_V, 1, "self_attn.v_proj.weight", "attn_v.weight", "wv", TDIM_KVD, TDIM_D, TWHEN_ALWAYS, TROPE_NONE},
    {TK_O, 1, "self_attn.o_proj.weight", "attn_output.weight", "wo", TDIM_D, TDIM_QD, TWHEN_ALWAYS, TROPE_NONE},
    {TK_BQ, 1, "self_attn.q_proj.bias", "attn_q.bias", NULL, TDIM_QD, TDIM_NONE, TWHEN_QKV_BIAS, TROPE_Q_HEADS},
    {TK_BK, 1, "self_attn.k_proj.bias", "attn_k.bias", NULL, TDIM_KVD, TDIM_NONE, TWHEN_QKV_BIAS, TROPE_KV_HEADS},
    {TK_BV, 1, "self_attn.v_proj.bias", "attn_v.bias", NULL, TDIM_KVD, TDIM_NONE, TWHEN_QKV_BIAS, TROPE_NONE},
    {TK_QNORM, 1, "self_attn.q_norm.weight", "attn_q_norm.weight", NULL, TDIM_HD, TDIM_NONE, TWHEN_QK_NORM,
     TROPE_NONE},
    {TK_KNORM, 1, "self_attn.k_norm.weight", "attn_k_norm.weight", NULL, TDIM_HD, TDIM_NONE, TWHEN_QK_NORM,
     TROPE_NONE},
    {TK_FFN_NORM, 1, "post_attention_layernorm.weight", "ffn_norm.weight", "ffn_norm", TDIM_D, TDIM_NONE,
     TWHEN_ALWAYS, TROPE_NONE},
    {TK_GATE, 1, "mlp.gate_proj.weight", "ffn_gate.weight", "w1", TDIM_F, TDIM_D, TWHEN_ALWAYS, TROPE_NONE},
    {TK_UP, 1, "mlp.up_proj.weight", "ffn_up.weight", "w3", TDIM_F, TDIM_D, TWHEN_ALWAYS, TROPE_NONE},
    {TK_DOWN, 1, "mlp.down_proj.weight", "ffn_down.weight", "w2", TDIM_D, TDIM_F, TWHEN_ALWAYS, TROPE_NONE},
    {TK_FINAL_NORM, 0, "model.norm.weight", "output_norm.weight", "norm", TDIM_D, TDIM_NONE, TWHEN_ALWAYS,
     TROPE_NONE},
    {TK_LM_HEAD, 0, "lm_head.weight", "output.weight", "wcls", TDIM_V, TDIM_D, TWHEN_UNTIED, TROPE_NONE},
};
const size_t tensor_names_count = sizeof tensor_names / sizeof tensor_names[0];

static int present(const model_config *c, tensor_when w) {
    switch (w) {
    case TWHEN_ALWAYS: return 1;
    case TWHEN_QKV_BIAS: return c->qkv_bias;
    case TWHEN_QK_NORM: return c->qk_norm;
    case TWHEN_UNTIED: return !c->tied_embeddings;
    }
    return 0;
}

const tensor_name_desc *tensor_name_of(tensor_kind k) {
    for (size_t i = 0; i < tensor_names_count; i++)
        if (tensor_names[i].kind == k) return &tensor_names[i];
    GF_ASSERT(!"a tensor role without a row in tensor_names");
    return NULL;
}

const tensor_kind llama2c_order[] = {TK_EMBED, TK_ATTN_NORM, TK_Q,    TK_K,  TK_V,          TK_O,
                                     TK_FFN_NORM, TK_GATE,   TK_DOWN, TK_UP, TK_FINAL_NORM, TK_LM_HEAD};
const size_t llama2c_order_count = sizeof llama2c_order / sizeof llama2c_order[0];

size_t teacher_tensor_count(const model_config *c, tensor_kind k) {
    const tensor_name_desc *d = tensor_name_of(k);
    return !present(c, d->when) ? 0 : d->per_layer ? (size_t)c->n_layers : 1;
}

size_t teacher_tensor_numel(const model_config *c, tensor_kind k) {
    const tensor_name_desc *d = tensor_name_of(k);
    return (size_t)tensor_dim_size(c, d->rows) * (size_t)(d->cols == TDIM_NONE ? 1 : tensor_dim_size(c, d->cols));
}

int64_t tensor_dim_size(const model_config *c, tensor_dim d) {
    switch (d) {
    case TDIM_NONE: return 0;
    case TDIM_D: return c->dim;
    case TDIM_F: return c->hidden_dim;
    case TDIM_V: return c->vocab_size;
    case TDIM_HD: return c->head_dim;
    case TDIM_QD: return (int64_t)c->n_heads * c->head_dim;
    case TDIM_KVD: return (int64_t)c->n_kv_heads * c->head_dim;
    }
    return 0;
}

static void put(teacher_tensor *t, const model_config *c, tensor_scheme scheme, const tensor_name_desc *d, int layer) {
    const char *suffix = scheme == TNAMES_GGUF ? d->gguf : d->hf;
    if (layer >= 0)
        snprintf(t->name, sizeof t->name, "%s%d.%s", scheme == TNAMES_GGUF ? GGUF_LAYER_PREFIX : HF_LAYER_PREFIX,
                 layer, suffix);
    else snprintf(t->name, sizeof t->name, "%s", suffix);
    t->layer = layer;
    t->kind = d->kind;
    t->rows = tensor_dim_size(c, d->rows);
    t->cols = tensor_dim_size(c, d->cols);
    t->rope_heads = d->rope_rows == TROPE_Q_HEADS ? c->n_heads : d->rope_rows == TROPE_KV_HEADS ? c->n_kv_heads : 0;
}

size_t teacher_tensor_list(const model_config *c, tensor_scheme scheme, teacher_tensor **out) {
    size_t n_global = 0, n_layer = 0;
    for (size_t i = 0; i < tensor_names_count; i++)
        if (present(c, tensor_names[i].when)) *(tensor_names[i].per_layer ? &n_layer : &n_global) += 1;
    const size_t total = n_global + (size_t)c->n_layers * n_layer;
    teacher_tensor *v = gf_malloc(total * sizeof *v);
    /* globals before the per-layer rows, the layers in turn, then the globals after them */
    size_t first = 0, end;
    while (first < tensor_names_count && !tensor_names[first].per_layer) first++;
    for (end = first; end < tensor_names_count && tensor_names[end].per_layer; end++) {}
    size_t k = 0;
    for (size_t i = 0; i < first; i++)
        if (present(c, tensor_names[i].when)) put(&v[k++], c, scheme, &tensor_names[i], -1);
    for (int l = 0; l < c->n_layers; l++)
        for (size_t i = first; i < end; i++)
            if (present(c, tensor_names[i].when)) put(&v[k++], c, scheme, &tensor_names[i], l);
    for (size_t i = end; i < tensor_names_count; i++)
        if (present(c, tensor_names[i].when)) put(&v[k++], c, scheme, &tensor_names[i], -1);
    GF_ASSERT(k == total);
    *out = v;
    return total;
}
