/* Hugging Face folders: config.json + model.safetensors (or sharded with
 * model.safetensors.index.json) + tokenizer.json.
 *
 * Every tensor is found and its shape checked against config.json before any
 * memory is allocated, so a wrong or lying config fails fast with a message
 * naming the tensor. With tie_word_embeddings true an lm_head.weight in the
 * files is ignored, as transformers does (it ties the output to the input
 * embedding after loading). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "formats/gguf_tokenizer.h"
#include "formats/hf_config.h"
#include "formats/loaders.h"
#include "formats/safetensors.h"

typedef enum {
    W_EMBED, W_FINAL_NORM, W_LM_HEAD, /* global */
    W_ATTN_NORM, W_Q, W_K, W_V, W_O, W_BQ, W_BK, W_BV, W_QNORM, W_KNORM, W_FFN_NORM, W_GATE, W_UP, W_DOWN
} weight_kind;

typedef struct {
    char name[96];
    int layer;
    weight_kind kind;
    int ndim;
    int64_t shape[2];
    const st_tensor *t;
} tensor_spec;

static tensor_kind tensor_of(weight_kind k) {
    static const tensor_kind map[] = {
        [W_EMBED] = TK_EMBED, [W_FINAL_NORM] = TK_FINAL_NORM, [W_LM_HEAD] = TK_LM_HEAD, [W_ATTN_NORM] = TK_ATTN_NORM,
        [W_Q] = TK_Q, [W_K] = TK_K, [W_V] = TK_V, [W_O] = TK_O, [W_BQ] = TK_BQ, [W_BK] = TK_BK, [W_BV] = TK_BV,
        [W_QNORM] = TK_QNORM, [W_KNORM] = TK_KNORM, [W_FFN_NORM] = TK_FFN_NORM, [W_GATE] = TK_GATE, [W_UP] = TK_UP,
        [W_DOWN] = TK_DOWN};
    return map[k];
}

typedef struct {
    tensor_spec *v;
    size_t n, cap;
} spec_list;

static void add(spec_list *s, int layer, weight_kind kind, const char *suffix, int64_t d0, int64_t d1) {
    if (s->n == s->cap) s->v = gf_realloc(s->v, (s->cap = s->cap ? 2 * s->cap : 64) * sizeof *s->v);
    tensor_spec *t = &s->v[s->n++];
    memset(t, 0, sizeof *t);
    if (layer >= 0) snprintf(t->name, sizeof t->name, "model.layers.%d.%s", layer, suffix);
    else snprintf(t->name, sizeof t->name, "%s", suffix);
    t->layer = layer;
    t->kind = kind;
    t->ndim = d1 > 0 ? 2 : 1;
    t->shape[0] = d0;
    t->shape[1] = d1;
}

static void expected_tensors(spec_list *s, const model_config *c) {
    const int64_t D = c->dim, F = c->hidden_dim, V = c->vocab_size, hd = c->head_dim;
    const int64_t qd = (int64_t)c->n_heads * hd, kvd = (int64_t)c->n_kv_heads * hd;
    add(s, -1, W_EMBED, "model.embed_tokens.weight", V, D);
    for (int l = 0; l < c->n_layers; l++) {
        add(s, l, W_ATTN_NORM, "input_layernorm.weight", D, 0);
        add(s, l, W_Q, "self_attn.q_proj.weight", qd, D);
        add(s, l, W_K, "self_attn.k_proj.weight", kvd, D);
        add(s, l, W_V, "self_attn.v_proj.weight", kvd, D);
        add(s, l, W_O, "self_attn.o_proj.weight", D, qd);
        if (c->qkv_bias) {
            add(s, l, W_BQ, "self_attn.q_proj.bias", qd, 0);
            add(s, l, W_BK, "self_attn.k_proj.bias", kvd, 0);
            add(s, l, W_BV, "self_attn.v_proj.bias", kvd, 0);
        }
        if (c->qk_norm) {
            add(s, l, W_QNORM, "self_attn.q_norm.weight", hd, 0);
            add(s, l, W_KNORM, "self_attn.k_norm.weight", hd, 0);
        }
        add(s, l, W_FFN_NORM, "post_attention_layernorm.weight", D, 0);
        add(s, l, W_GATE, "mlp.gate_proj.weight", F, D);
        add(s, l, W_UP, "mlp.up_proj.weight", F, D);
        add(s, l, W_DOWN, "mlp.down_proj.weight", D, F);
    }
    add(s, -1, W_FINAL_NORM, "model.norm.weight", D, 0);
    if (!c->tied_embeddings) add(s, -1, W_LM_HEAD, "lm_head.weight", V, D);
}

static void format_shape(char *buf, size_t cap, int ndim, const int64_t *shape) {
    size_t n = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < ndim && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? ", " : "", (long long)shape[i]);
    if (n < cap) snprintf(buf + n, cap - n, "]");
}

static int check_shape(const tensor_spec *s, const char *dir) {
    const st_tensor *t = s->t;
    bool ok = t->ndim == s->ndim;
    for (int i = 0; ok && i < s->ndim; i++) ok = t->shape[i] == s->shape[i];
    if (ok) return 0;
    char got[160], want[64];
    format_shape(got, sizeof got, t->ndim, t->shape);
    format_shape(want, sizeof want, s->ndim, s->shape);
    return gf_fail("%s: %s: shape %s, expected %s", dir, s->name, got, want);
}

static bool file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Tensors graft cannot represent must not be dropped silently. */
/* config.json and the weights must describe the same model: a tensor of a
 * layer past num_hidden_layers means the config is not the weights' (its
 * layers would be dropped without a word). */
static int reject_extra_layers(const st_set *set, const model_config *c, const char *dir) {
    static const char prefix[] = "model.layers.";
    for (int f = 0; f < set->n_files; f++)
        for (size_t i = 0; i < set->files[f].n_tensors; i++) {
            const char *name = set->files[f].tensors[i].name;
            if (strncmp(name, prefix, sizeof prefix - 1) != 0) continue;
            char *end;
            const long l = strtol(name + sizeof prefix - 1, &end, 10);
            if (end != name + sizeof prefix - 1 && *end == '.' && (l >= c->n_layers || l < 0))
                return gf_fail("%s: %s belongs to layer %ld, but config.json has num_hidden_layers %d: the config "
                               "does not describe these weights", dir, name, l, c->n_layers);
        }
    return 0;
}

static int reject_unsupported(const st_set *set, const model_config *c, const char *dir) {
    if (reject_extra_layers(set, c, dir) != 0) return -1;
    char name[96];
    for (int l = 0; l < c->n_layers; l++) {
        snprintf(name, sizeof name, "model.layers.%d.self_attn.o_proj.bias", l);
        if (st_set_find(set, name)) return gf_fail("%s: %s: an output projection bias is not supported", dir, name);
        if (!c->qkv_bias) {
            snprintf(name, sizeof name, "model.layers.%d.self_attn.q_proj.bias", l);
            if (st_set_find(set, name))
                return gf_fail("%s: %s is present but config.json says the model has no attention bias", dir, name);
        }
    }
    return 0;
}

/* model_put_chunked's readers: a range of one tensor, converted / copied out of the mapping. */
static int read_f32_chunk(void *ud, size_t off, void *dst, size_t n) {
    const st_tensor *t = ud;
    int rc = st_read_f32_range(t, off, dst, n);
    mapped_release(t->data + off * st_dtype_size(t->dtype), n * st_dtype_size(t->dtype));
    return rc;
}

static int read_bf16_chunk(void *ud, size_t off, void *dst, size_t n) {
    const st_tensor *t = ud;
    memcpy(dst, t->data + 2 * off, 2 * n); /* the mapping is not aligned in general */
    mapped_release(t->data + 2 * off, 2 * n);
    return 0;
}

static int load_tokenizer(model *m, const char *dir, const model_load_opts *opts) {
    char path[PATH_MAX];
    const char *tp = opts->tokenizer_path;
    if (!tp) {
        snprintf(path, sizeof path, "%s/tokenizer.json", dir);
        if (!file_exists(path)) return 0; /* no tokenizer: m->tok stays NULL */
        tp = path;
    }
    return load_model_tokenizer(m, tp);
}

int load_hf_folder(model *m, const char *dir, const model_load_opts *opts) {
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/config.json", dir) >= (int)sizeof path)
        return gf_fail("%s: path too long", dir);
    if (!file_exists(path)) return gf_fail("%s: no config.json (not a Hugging Face model folder)", dir);
    if (hf_config_load(&m->cfg, path) != 0) return -1;

    st_set set;
    if (st_set_open(&set, dir) != 0) return -1;
    spec_list specs = {0};
    int rc = -1;
    expected_tensors(&specs, &m->cfg);
    unsigned dtypes_seen = 0;
    for (size_t i = 0; i < specs.n; i++) {
        tensor_spec *s = &specs.v[i];
        s->t = st_set_find(&set, s->name);
        if (!s->t) {
            if (s->kind == W_LM_HEAD)
                gf_fail("%s: missing tensor lm_head.weight (config.json has tie_word_embeddings false)", dir);
            else
                gf_fail("%s: missing tensor %s", dir, s->name);
            goto done;
        }
        if (check_shape(s, dir) != 0) goto done;
        dtypes_seen |= 1u << s->t->dtype;
    }
    if (reject_unsupported(&set, &m->cfg, dir) != 0) goto done;

    if (model_alloc_params(m) != 0) goto done;
    /* bf16 weights go to a bf16 block as they are; anything else as float32 */
    const bool raw_bf16 = be_act(m->be) == GF_BF16;
    for (size_t i = 0; i < specs.n; i++) {
        const tensor_spec *s = &specs.v[i];
        const bool raw = raw_bf16 && s->t->dtype == ST_BF16;
        if (model_put_chunked(m, s->layer, tensor_of(s->kind), s->t->n_elems, 1, raw ? GF_BF16 : GF_F32,
                              raw ? read_bf16_chunk : read_f32_chunk, (void *)s->t) != 0)
            goto done;
    }
    const char *dt = "mixed";
    if (dtypes_seen == 1u << ST_F32) dt = "f32";
    else if (dtypes_seen == 1u << ST_F16) dt = "f16";
    else if (dtypes_seen == 1u << ST_BF16) dt = "bf16";
    snprintf(m->weights_dtype, sizeof m->weights_dtype, "%s", dt);

    if (load_tokenizer(m, dir, opts) != 0) goto done;
    rc = 0;
done:
    free(specs.v);
    st_set_close(&set);
    return rc;
}
