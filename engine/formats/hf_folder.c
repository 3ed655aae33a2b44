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

#include "core/error.h"
#include "core/path.h"
#include "formats/gguf_tokenizer.h"
#include "formats/hf_config.h"
#include "formats/loaders.h"
#include "formats/safetensors.h"
#include "formats/tensor_names.h"
#include "formats/weights_agree.h"

/* One expected tensor and where it is in the files. */
typedef struct {
    teacher_tensor want;
    const st_tensor *t;
} tensor_spec;

static void format_shape(char *buf, size_t cap, int ndim, const int64_t *shape) {
    size_t n = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < ndim && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? ", " : "", (long long)shape[i]);
    if (n < cap) snprintf(buf + n, cap - n, "]");
}

static int check_shape(const tensor_spec *s, const char *dir) {
    const st_tensor *t = s->t;
    const int ndim = s->want.cols > 0 ? 2 : 1;
    const int64_t shape[2] = {s->want.rows, s->want.cols};
    bool ok = t->ndim == ndim;
    for (int i = 0; ok && i < ndim; i++) ok = t->shape[i] == shape[i];
    if (ok) return 0;
    char got[160], want[64];
    format_shape(got, sizeof got, t->ndim, t->shape);
    format_shape(want, sizeof want, ndim, shape);
    return gf_fail("%s: %s: shape %s, expected %s", dir, s->want.name, got, want);
}

/* Layer 0's tensor of role k ("model.layers.0.self_attn.q_proj.weight"). */
static const st_tensor *layer0(const st_set *set, tensor_kind k, char *name, size_t cap) {
    snprintf(name, cap, HF_LAYER_PREFIX "0.%s", tensor_name_of(k)->hf);
    const st_tensor *t = st_set_find(set, name);
    return t && t->ndim == 2 ? t : NULL;
}

/* config.json against the weights: the model.layers.N present (a layer past
 * num_hidden_layers would be dropped without a word; one short of it is a
 * config that is not these weights'), the embedding's shape, and layer 0's
 * query, key/value and feed-forward rows. A missing tensor is left to the
 * shape checks, which name it. */
static int config_agrees(const st_set *set, const model_config *c, const char *cfg_path) {
    int held = 0;
    for (int f = 0; f < set->n_files; f++)
        for (size_t i = 0; i < set->files[f].n_tensors; i++) {
            const int l = tensor_layer(set->files[f].tensors[i].name, HF_LAYER_PREFIX);
            if (l >= held) held = l + 1;
        }
    if (held == 0)
        return config_disagrees(cfg_path, "num_hidden_layers", c->n_layers, "the weights hold no " HF_LAYER_PREFIX "N tensors");
    if (held != c->n_layers)
        return config_disagrees(cfg_path, "num_hidden_layers", c->n_layers,
                                "the weights hold %d layers (" HF_LAYER_PREFIX "0 .. " HF_LAYER_PREFIX "%d)", held,
                                held - 1);
    const char *emb_name = tensor_name_of(TK_EMBED)->hf;
    const st_tensor *t = st_set_find(set, emb_name);
    if (t && t->ndim == 2 && t->shape[1] != c->dim)
        return config_disagrees(cfg_path, "hidden_size", c->dim, "%s has rows of %lld values", emb_name,
                                (long long)t->shape[1]);
    if (t && t->ndim == 2 && t->shape[0] != c->vocab_size)
        return config_disagrees(cfg_path, "vocab_size", c->vocab_size, "%s has %lld rows", emb_name,
                                (long long)t->shape[0]);
    char name[96];
    if ((t = layer0(set, TK_Q, name, sizeof name)) &&
        heads_agree(cfg_path, "num_attention_heads", c->n_heads, c->head_dim, name, (unsigned long long)t->shape[0]) != 0)
        return -1;
    if ((t = layer0(set, TK_K, name, sizeof name)) &&
        heads_agree(cfg_path, "num_key_value_heads", c->n_kv_heads, c->head_dim, name, (unsigned long long)t->shape[0]) != 0)
        return -1;
    if ((t = layer0(set, TK_GATE, name, sizeof name)) && t->shape[0] != c->hidden_dim)
        return config_disagrees(cfg_path, "intermediate_size", c->hidden_dim, "%s has %lld rows", name,
                                (long long)t->shape[0]);
    return 0;
}

/* Tensors graft cannot represent must not be dropped silently. */
static int reject_unsupported(const st_set *set, const model_config *c, const char *dir) {
    char name[96];
    for (int l = 0; l < c->n_layers; l++) {
        snprintf(name, sizeof name, HF_LAYER_PREFIX "%d.self_attn.o_proj.bias", l); /* no role of graft's */
        if (st_set_find(set, name)) return gf_fail("%s: %s: an output projection bias is not supported", dir, name);
        if (!c->qkv_bias) {
            snprintf(name, sizeof name, HF_LAYER_PREFIX "%d.%s", l, tensor_name_of(TK_BQ)->hf);
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
        if (!path_is_file(path)) return 0; /* no tokenizer: m->tok stays NULL */
        tp = path;
    }
    return load_model_tokenizer(m, tp);
}

int load_hf_folder(model *m, const char *dir, const model_load_opts *opts) {
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/config.json", dir) >= (int)sizeof path)
        return gf_fail("%s: path too long", dir);
    if (!path_is_file(path)) return gf_fail("%s: no config.json (not a Hugging Face model folder)", dir);
    if (hf_config_load(&m->cfg, path) != 0) return -1;

    st_set set;
    if (st_set_open(&set, dir) != 0) return -1;
    teacher_tensor *want;
    if (config_agrees(&set, &m->cfg, path) != 0) {
        st_set_close(&set);
        return -1;
    }
    const size_t n_specs = teacher_tensor_list(&m->cfg, TNAMES_HF, &want);
    tensor_spec *specs = gf_calloc(n_specs, sizeof *specs);
    int rc = -1;
    unsigned dtypes_seen = 0;
    for (size_t i = 0; i < n_specs; i++) {
        tensor_spec *s = &specs[i];
        s->want = want[i];
        s->t = st_set_find(&set, s->want.name);
        if (!s->t) {
            if (s->want.kind == TK_LM_HEAD)
                gf_fail("%s: missing tensor %s (config.json has tie_word_embeddings false)", dir, s->want.name);
            else
                gf_fail("%s: missing tensor %s", dir, s->want.name);
            goto done;
        }
        if (check_shape(s, dir) != 0) goto done;
        dtypes_seen |= 1u << s->t->dtype;
    }
    if (reject_unsupported(&set, &m->cfg, dir) != 0) goto done;

    if (model_alloc_params(m) != 0) goto done;
    /* bf16 weights go to a bf16 block as they are; anything else as float32 */
    const bool raw_bf16 = be_act(m->be) == GF_BF16;
    for (size_t i = 0; i < n_specs; i++) {
        const tensor_spec *s = &specs[i];
        const bool raw = raw_bf16 && s->t->dtype == ST_BF16;
        if (model_put_chunked(m, s->want.layer, s->want.kind, s->t->n_elems, 1, raw ? GF_BF16 : GF_F32,
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
    free(want);
    free(specs);
    st_set_close(&set);
    return rc;
}
