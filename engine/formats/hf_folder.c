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

/* Tensors graft cannot represent must not be dropped silently. */
/* config.json and the weights must describe the same model: a tensor of a
 * layer past num_hidden_layers means the config is not the weights' (its
 * layers would be dropped without a word). */
static int reject_extra_layers(const st_set *set, const model_config *c, const char *dir) {
    static const char prefix[] = HF_LAYER_PREFIX;
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
