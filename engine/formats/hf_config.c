#include "formats/hf_config.h"

#include <cjson/cJSON.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/mapped_file.h"

/* A key that is absent or JSON null counts as absent. */
static const cJSON *field(const cJSON *obj, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsNull(v) ? NULL : v;
}

/* Whole number in [lo, hi]; def when absent (required: absent is an error). */
static int get_int(const cJSON *obj, const char *key, bool required, int def, long lo, long hi, int *out,
                   const char *where) {
    const cJSON *v = field(obj, key);
    if (!v) {
        if (required) return gf_fail("%s: missing field %s", where, key);
        *out = def;
        return 0;
    }
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble))
        return gf_fail("%s: %s must be a whole number", where, key);
    if (v->valuedouble < (double)lo || v->valuedouble > (double)hi)
        return gf_fail("%s: %s = %.17g is out of range [%ld, %ld]", where, key, v->valuedouble, lo, hi);
    *out = (int)v->valuedouble;
    return 0;
}

static int get_float(const cJSON *obj, const char *key, bool required, float def, float *out, const char *where) {
    const cJSON *v = field(obj, key);
    if (!v) {
        if (required) return gf_fail("%s: missing field %s", where, key);
        *out = def;
        return 0;
    }
    if (!cJSON_IsNumber(v) || !(v->valuedouble > 0) || !(v->valuedouble <= FLT_MAX))
        return gf_fail("%s: %s must be a positive number within float32 range", where, key);
    *out = (float)v->valuedouble;
    return 0;
}

static int get_bool(const cJSON *obj, const char *key, bool def, bool *out, const char *where) {
    const cJSON *v = field(obj, key);
    if (!v) {
        *out = def;
        return 0;
    }
    if (!cJSON_IsBool(v)) return gf_fail("%s: %s must be true or false", where, key);
    *out = cJSON_IsTrue(v);
    return 0;
}

/* A token id: a number, or a list whose first entry is used (eos lists). */
static int get_token_id(const cJSON *obj, const char *key, int *out, const char *where) {
    const cJSON *v = field(obj, key);
    *out = -1;
    if (!v) return 0;
    if (cJSON_IsArray(v)) {
        v = cJSON_GetArrayItem(v, 0);
        if (!v) return 0;
    }
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < 0 ||
        v->valuedouble > 2147483647.0)
        return gf_fail("%s: %s must be a token id or a list of them", where, key);
    *out = (int)v->valuedouble;
    return 0;
}

/* model_type names the architecture; without it, the first of architectures
 * (its class name). Both are model_archs' columns. */
static int parse_arch(const cJSON *root, model_arch *arch, const char *where) {
    const cJSON *mt = field(root, "model_type");
    /* a graft student folder names its own model type (transformers loads it
     * through the modeling file beside it); its blocks are the teacher's */
    const cJSON *gs = field(root, "graft_student");
    if (cJSON_IsString(mt) && strcmp(mt->valuestring, "graft_student") == 0 && cJSON_IsObject(gs)) {
        mt = field(gs, "teacher_model_type");
        if (!cJSON_IsString(mt)) return gf_fail("%s: graft_student.teacher_model_type must be a string", where);
    }
    const model_arch_desc *a;
    const char *name;
    if (mt) {
        if (!cJSON_IsString(mt)) return gf_fail("%s: model_type must be a string", where);
        name = mt->valuestring;
        a = model_arch_by_name(name);
    } else {
        const cJSON *archs = field(root, "architectures");
        const cJSON *a0 = cJSON_IsArray(archs) ? cJSON_GetArrayItem(archs, 0) : NULL;
        if (!cJSON_IsString(a0)) return gf_fail("%s: missing field model_type (and no architectures list)", where);
        name = a0->valuestring;
        a = model_arch_by_hf_class(name);
    }
    if (!a) return gf_fail("%s: unknown architecture '%s' (graft supports %s)", where, name, model_arch_list());
    *arch = a->arch;
    return 0;
}

static int parse_rope_scaling(const cJSON *rs, rope_scaling *out, const char *where) {
    memset(out, 0, sizeof *out);
    out->type = ROPE_SCALING_NONE;
    if (!rs) return 0;
    if (!cJSON_IsObject(rs)) return gf_fail("%s: rope_scaling must be an object or null", where);
    const cJSON *t = field(rs, "rope_type");
    if (!t) t = field(rs, "type");
    if (!cJSON_IsString(t)) return gf_fail("%s: rope_scaling has no rope_type", where);
    const char *type = t->valuestring;
    if (strcmp(type, "default") == 0) return 0;
    if (strcmp(type, "linear") == 0) {
        out->type = ROPE_SCALING_LINEAR;
        return get_float(rs, "factor", true, 1, &out->factor, where);
    }
    if (strcmp(type, "llama3") == 0) {
        out->type = ROPE_SCALING_LLAMA3;
        if (get_float(rs, "factor", true, 1, &out->factor, where) ||
            get_float(rs, "low_freq_factor", true, 1, &out->low_freq_factor, where) ||
            get_float(rs, "high_freq_factor", true, 1, &out->high_freq_factor, where) ||
            get_int(rs, "original_max_position_embeddings", true, 0, 1, 1 << 26, &out->original_max_pos, where))
            return -1;
        if (out->high_freq_factor <= out->low_freq_factor)
            return gf_fail("%s: rope_scaling high_freq_factor must exceed low_freq_factor", where);
        return 0;
    }
    return gf_fail("%s: rope_scaling type '%s' is not supported (graft supports default, linear, llama3)", where,
                   type);
}

static int parse_root(model_config *c, const cJSON *root, const char *where) {
    memset(c, 0, sizeof *c);
    c->source = SOURCE_HF;
    c->rope_pairing = ROPE_HALF;
    if (parse_arch(root, &c->arch, where)) return -1;

    const cJSON *act = field(root, "hidden_act");
    if (act && (!cJSON_IsString(act) || strcmp(act->valuestring, "silu") != 0))
        return gf_fail("%s: hidden_act '%s' is not supported (graft supports silu)", where,
                       cJSON_IsString(act) ? act->valuestring : "?");

    const int big = 1 << 20;
    if (get_int(root, "hidden_size", true, 0, 1, big, &c->dim, where) ||
        get_int(root, "intermediate_size", true, 0, 1, big, &c->hidden_dim, where) ||
        get_int(root, "num_hidden_layers", true, 0, 1, 4096, &c->n_layers, where) ||
        get_int(root, "num_attention_heads", true, 0, 1, 1 << 16, &c->n_heads, where) ||
        get_int(root, "num_key_value_heads", false, c->n_heads, 1, 1 << 16, &c->n_kv_heads, where) ||
        get_int(root, "vocab_size", true, 0, 1, 1 << 24, &c->vocab_size, where))
        return -1;
    const model_arch_desc *a = &model_archs[c->arch];
    int default_head_dim = a->head_dim_default ? a->head_dim_default : c->dim / c->n_heads;
    if (!a->head_dim_default && !field(root, "head_dim") && c->dim % c->n_heads != 0)
        return gf_fail("%s: hidden_size %d is not a multiple of num_attention_heads %d", where, c->dim, c->n_heads);
    if (get_int(root, "head_dim", false, default_head_dim, 1, 1 << 16, &c->head_dim, where) ||
        get_int(root, "max_position_embeddings", false, a->max_pos_default, 1, 1 << 24,
                &c->max_seq, where) ||
        get_float(root, "rms_norm_eps", false, 1e-6f, &c->norm_eps, where) ||
        get_float(root, "rope_theta", false, 10000.0f, &c->rope_theta, where) ||
        get_bool(root, "tie_word_embeddings", false, &c->tied_embeddings, where) ||
        get_token_id(root, "bos_token_id", &c->bos_id, where) ||
        get_token_id(root, "eos_token_id", &c->eos_id, where))
        return -1;

    /* newer transformers keep theta and scaling together in rope_parameters */
    const cJSON *rs = field(root, "rope_scaling");
    const cJSON *rp = field(root, "rope_parameters");
    if (!rs && cJSON_IsObject(rp)) {
        rs = rp;
        if (!field(root, "rope_theta") && get_float(rp, "rope_theta", false, 10000.0f, &c->rope_theta, where))
            return -1;
    }
    if (parse_rope_scaling(rs, &c->rope_scaling, where)) return -1;

    bool attention_bias, mlp_bias, sliding;
    if (get_bool(root, "attention_bias", false, &attention_bias, where) ||
        get_bool(root, "mlp_bias", false, &mlp_bias, where) ||
        get_bool(root, "use_sliding_window", false, &sliding, where))
        return -1;
    if (mlp_bias) return gf_fail("%s: mlp_bias is not supported", where);
    if (sliding) return gf_fail("%s: sliding-window attention (use_sliding_window) is not supported", where);
    c->qkv_bias = a->bias_always || attention_bias;
    c->qk_norm = a->qk_norm;

    if (c->n_heads % c->n_kv_heads != 0)
        return gf_fail("%s: num_attention_heads %d is not a multiple of num_key_value_heads %d", where, c->n_heads,
                       c->n_kv_heads);
    if (c->head_dim % 2 != 0) return gf_fail("%s: head_dim %d is odd; RoPE needs pairs", where, c->head_dim);
    if ((long)c->n_heads * c->head_dim > big)
        return gf_fail("%s: num_attention_heads x head_dim = %ld is too large", where, (long)c->n_heads * c->head_dim);
    if (c->bos_id >= c->vocab_size) c->bos_id = -1; /* some configs name ids of the tokenizer's added tokens */
    if (c->eos_id >= c->vocab_size) c->eos_id = -1;
    return 0;
}

int hf_config_parse(model_config *c, const char *json, size_t len, const char *where) {
    cJSON *root = cJSON_ParseWithLength(json, len);
    if (!root) return gf_fail("%s: not valid JSON", where);
    int rc = cJSON_IsObject(root) ? parse_root(c, root, where) : gf_fail("%s: not a JSON object", where);
    cJSON_Delete(root);
    return rc;
}

int hf_config_load(model_config *c, const char *path) {
    size_t len;
    char *text = read_text_file(path, &len);
    if (!text) return -1;
    int rc = hf_config_parse(c, text, len, path);
    free(text);
    return rc;
}
