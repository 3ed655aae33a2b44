/* GGUF teachers: llama, qwen2 and qwen3 architectures mapped onto the same
 * model as their Hugging Face weights.
 *
 * Facts from llama.cpp (convert_hf_to_gguf.py, llama-arch, llama-model):
 * - tensor names: token_embd, output_norm, output (absent when tied),
 *   blk.N.{attn_norm, attn_q, attn_k, attn_v, attn_output, attn_q_norm,
 *   attn_k_norm, ffn_norm, ffn_gate, ffn_up, ffn_down}, biases as .bias;
 *   shapes ne = [in, out], i.e. PyTorch's [out, in] row-major.
 * - llama: the converter permutes the rows of q and k (and their biases) inside
 *   each head, HF row p*hd/2 + i -> GGUF row 2i + p, so that llama.cpp's NORM
 *   RoPE (adjacent pairs) computes what HF's half-split RoPE does. We undo it,
 *   so the model runs with half-split pairs exactly like the HF weights.
 * - qwen2 and qwen3 use NEOX RoPE (half-split): not permuted.
 * - llama3 RoPE scaling is stored as rope_freqs.weight, one divisor per
 *   frequency; linear scaling as {arch}.rope.scaling.type/factor. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "formats/gguf_dequant.h"
#include "formats/gguf_reader.h"
#include "formats/gguf_tokenizer.h"
#include "formats/loaders.h"
#include "formats/tensor_names.h"
#include "formats/weights_agree.h"

/* One expected tensor; permute_heads: llama's q/k (and biases), the number
 * of heads whose rows to un-permute; 0 = none. */
typedef struct {
    teacher_tensor w;
    int permute_heads;
} spec;

/* ---- config from metadata ---- */

typedef struct {
    const gguf_file *g;
    const char *arch;
    const char *path;
} meta;

static int get_int(const meta *m, const char *suffix, bool required, int64_t lo, int64_t hi, int64_t *out) {
    char key[128];
    snprintf(key, sizeof key, "%s.%s", m->arch, suffix);
    int rc = gguf_get_int(m->g, key, out);
    if (rc < 0) return -1;
    if (rc == 0) return required ? gf_fail("%s: missing metadata %s", m->path, key) : 0;
    if (*out < lo || *out > hi)
        return gf_fail("%s: metadata %s = %lld is out of range [%lld, %lld]", m->path, key, (long long)*out,
                       (long long)lo, (long long)hi);
    return 1;
}

static int get_float(const meta *m, const char *suffix, double *out) {
    char key[128];
    snprintf(key, sizeof key, "%s.%s", m->arch, suffix);
    return gguf_get_float(m->g, key, out);
}

static int read_config(model_config *c, const gguf_file *g, const char *arch_name, const char *path) {
    meta m = {g, arch_name, path};
    memset(c, 0, sizeof *c);
    c->source = SOURCE_GGUF;
    const model_arch_desc *a = model_arch_by_name(arch_name);
    if (!a) return gf_fail("%s: architecture %s is not supported (%s)", path, arch_name, model_arch_list());
    c->arch = a->arch;
    int64_t v;
    if (get_int(&m, "embedding_length", true, 1, 1 << 20, &v) < 0) return -1;
    c->dim = (int)v;
    if (get_int(&m, "feed_forward_length", true, 1, 1 << 22, &v) < 0) return -1;
    c->hidden_dim = (int)v;
    if (get_int(&m, "block_count", true, 1, 4096, &v) < 0) return -1;
    c->n_layers = (int)v;
    if (get_int(&m, "attention.head_count", true, 1, 4096, &v) < 0) return -1;
    c->n_heads = (int)v;
    c->n_kv_heads = c->n_heads;
    int rc = get_int(&m, "attention.head_count_kv", false, 1, 4096, &v);
    if (rc < 0) return -1;
    if (rc) c->n_kv_heads = (int)v;
    if (c->n_heads % c->n_kv_heads != 0)
        return gf_fail("%s: %d query heads are not a multiple of %d KV heads", path, c->n_heads, c->n_kv_heads);
    c->head_dim = c->dim / c->n_heads;
    if ((rc = get_int(&m, "attention.key_length", false, 2, 1 << 16, &v)) < 0) return -1;
    if (rc) c->head_dim = (int)v;
    int64_t vl;
    if ((rc = get_int(&m, "attention.value_length", false, 2, 1 << 16, &vl)) < 0) return -1;
    if (rc && vl != c->head_dim)
        return gf_fail("%s: value length %lld differs from key length %d (not supported)", path, (long long)vl,
                       c->head_dim);
    /* head size 0: more heads than embedding_length and no key_length (the later checks divide by it) */
    if (c->head_dim < 2 || c->head_dim % 2 != 0 || c->head_dim / 2 > ROPE_MAX_FACTORS)
        return gf_fail("%s: head size %d is not supported (even, 2 to %d)", path, c->head_dim, 2 * ROPE_MAX_FACTORS);
    if ((rc = get_int(&m, "rope.dimension_count", false, 1, 1 << 16, &v)) < 0) return -1;
    if (rc && v != c->head_dim)
        return gf_fail("%s: RoPE on %lld of %d head dimensions (partial RoPE) is not supported", path,
                       (long long)v, c->head_dim);
    c->max_seq = 2048;
    if ((rc = get_int(&m, "context_length", false, 1, 1 << 24, &v)) < 0) return -1;
    if (rc) c->max_seq = (int)v;
    double f = 1e-6;
    if (get_float(&m, "attention.layer_norm_rms_epsilon", &f) < 0) return -1;
    if (!(f > 0 && f < 1)) return gf_fail("%s: RMS norm epsilon %g is out of range", path, f);
    c->norm_eps = (float)f;
    f = 10000.0;
    if (get_float(&m, "rope.freq_base", &f) < 0) return -1;
    if (!(f > 1)) return gf_fail("%s: RoPE base %g is out of range", path, f);
    c->rope_theta = (float)f;
    c->rope_pairing = ROPE_HALF; /* llama's q/k are un-permuted on load */
    c->rope_scaling.type = ROPE_SCALING_NONE;
    char key[128];
    snprintf(key, sizeof key, "%s.rope.scaling.type", arch_name);
    gguf_str st;
    if ((rc = gguf_get_str(g, key, &st)) < 0) return -1;
    double factor = 0;
    if (get_float(&m, "rope.scaling.factor", &factor) < 0) return -1;
    if (rc && st.len == 6 && !memcmp(st.p, "linear", 6)) {
        if (!(factor > 0)) return gf_fail("%s: linear RoPE scaling without a positive factor", path);
        c->rope_scaling.type = ROPE_SCALING_LINEAR;
        c->rope_scaling.factor = (float)factor;
    } else if (rc && !(st.len == 4 && !memcmp(st.p, "none", 4))) {
        char pr[64];
        return gf_fail("%s: RoPE scaling %s is not supported (none, linear, llama3 factors)", path,
                       gguf_printable(st, pr, sizeof pr));
    } else if (!rc && get_float(&m, "rope.scale_linear", &factor) > 0 && factor != 1.0) {
        if (!(factor > 0)) return gf_fail("%s: rope.scale_linear %g is not positive", path, factor);
        c->rope_scaling.type = ROPE_SCALING_LINEAR;
        c->rope_scaling.factor = (float)factor;
    }
    c->qkv_bias = gguf_find_tensor(g, "blk.0.attn_q.bias") != NULL;
    c->qk_norm = a->qk_norm;
    c->tied_embeddings = gguf_find_tensor(g, "output.weight") == NULL;
    const gguf_tensor *emb = gguf_find_tensor(g, "token_embd.weight");
    if (!emb) return gf_fail("%s: missing tensor token_embd.weight", path);
    snprintf(key, sizeof key, "%s.embedding_length", arch_name);
    if (emb->n_dims == 2 && emb->ne[0] != (uint64_t)c->dim)
        return config_disagrees(path, key, c->dim, "token_embd.weight has rows of %llu values (the hidden size)",
                                (unsigned long long)emb->ne[0]);
    if (emb->n_dims != 2 || emb->ne[1] > (1u << 24))
        return gf_fail("%s: token_embd.weight has shape [%llu, %llu], expected [vocab, %d]", path,
                       (unsigned long long)emb->ne[1], (unsigned long long)emb->ne[0], c->dim);
    c->vocab_size = (int)emb->ne[1];
    c->bos_id = c->eos_id = -1;
    int64_t id;
    if (gguf_get_int(g, "tokenizer.ggml.bos_token_id", &id) > 0 && id >= 0 && id < c->vocab_size) c->bos_id = (int)id;
    if (gguf_get_int(g, "tokenizer.ggml.eos_token_id", &id) > 0 && id >= 0 && id < c->vocab_size) c->eos_id = (int)id;
    gf_clear_error();
    return 0;
}

/* Layer 0's tensor of role k, as this file names it ("blk.0.attn_q.weight"). */
static const gguf_tensor *layer0(const gguf_file *g, tensor_kind k, char *name, size_t cap) {
    snprintf(name, cap, GGUF_LAYER_PREFIX "0.%s", tensor_name_of(k)->gguf);
    const gguf_tensor *t = gguf_find_tensor(g, name);
    return t && t->n_dims == 2 ? t : NULL;
}

/* The metadata against the tensors: the blk.N layers present, and layer 0's
 * query, key/value and feed-forward rows (the embedding's width is checked
 * with the config). A missing layer-0 tensor is left to the shape checks. */
static int metadata_agrees(const gguf_file *g, const model_config *c, const char *arch, const char *path) {
    char key[128], name[96];
    int held = 0;
    for (size_t i = 0; i < g->n_tensors; i++) {
        const int l = tensor_layer(g->tensors[i].name, GGUF_LAYER_PREFIX);
        if (l >= held) held = l + 1;
    }
    snprintf(key, sizeof key, "%s.block_count", arch);
    if (held == 0) return config_disagrees(path, key, c->n_layers, "the file holds no " GGUF_LAYER_PREFIX "N tensors");
    if (held != c->n_layers)
        return config_disagrees(path, key, c->n_layers,
                                "the tensors hold %d layers (" GGUF_LAYER_PREFIX "0 .. " GGUF_LAYER_PREFIX "%d)", held,
                                held - 1);
    const gguf_tensor *t = layer0(g, TK_Q, name, sizeof name);
    snprintf(key, sizeof key, "%s.attention.head_count", arch);
    if (t && heads_agree(path, key, c->n_heads, c->head_dim, name, t->ne[1]) != 0) return -1;
    t = layer0(g, TK_K, name, sizeof name);
    snprintf(key, sizeof key, "%s.attention.head_count_kv", arch);
    if (t && heads_agree(path, key, c->n_kv_heads, c->head_dim, name, t->ne[1]) != 0) return -1;
    t = layer0(g, TK_GATE, name, sizeof name);
    snprintf(key, sizeof key, "%s.feed_forward_length", arch);
    if (t && t->ne[1] != (uint64_t)c->hidden_dim)
        return config_disagrees(path, key, c->hidden_dim, "%s has %llu rows", name, (unsigned long long)t->ne[1]);
    return 0;
}

/* ---- tensors ---- */

/* The tensors a config implies, each with its place in the model (layer,
 * kind); checked against the file before model_alloc_params. */
static size_t expected(spec **out, const model_config *c) {
    teacher_tensor *t;
    const size_t n = teacher_tensor_list(c, TNAMES_GGUF, &t);
    const bool permute = model_archs[c->arch].gguf_permuted_qk;
    spec *s = gf_malloc(n * sizeof *s);
    for (size_t i = 0; i < n; i++) s[i] = (spec){t[i], permute ? t[i].rope_heads : 0};
    free(t);
    *out = s;
    return n;
}

static int check_tensor(const gguf_tensor *t, const spec *s, const char *path) {
    bool ok = s->w.cols ? (t->n_dims == 2 && t->ne[0] == (uint64_t)s->w.cols && t->ne[1] == (uint64_t)s->w.rows)
                      : (t->n_dims == 1 && t->ne[0] == (uint64_t)s->w.rows);
    if (!ok) {
        char got[96];
        int k = snprintf(got, sizeof got, "[");
        for (int d = t->n_dims - 1; d >= 0 && k < (int)sizeof got; d--)
            k += snprintf(got + k, sizeof got - (size_t)k, "%llu%s", (unsigned long long)t->ne[d], d ? ", " : "]");
        if (s->w.cols)
            return gf_fail("%s: tensor %s has shape %s, expected [%lld, %lld]", path, s->w.name, got,
                           (long long)s->w.rows, (long long)s->w.cols);
        return gf_fail("%s: tensor %s has shape %s, expected [%lld]", path, s->w.name, got, (long long)s->w.rows);
    }
    if (!gguf_can_dequantize(t->type))
        return gf_fail("%s: tensor %s has type %s, which graft cannot dequantize (supported: f32 f16 bf16 q8_0 "
                       "q4_0 q4_1 q5_0 q5_1 q4_k q5_k q6_k)", path, s->w.name, ggml_type_name(t->type));
    return 0;
}

/* Bytes of one row of t (each row is a whole number of blocks). */
static size_t row_bytes(const gguf_tensor *t) {
    return (size_t)t->ne[0] / ggml_block_elems(t->type) * ggml_block_bytes(t->type);
}

/* Dequantizes rows [r0, r0 + n) of t into dst, in parallel; their pages of
 * the mapping are dropped afterwards (mapped_release). Returns how many of the
 * values are not finite (a damaged file: e.g. a block scale that decodes to
 * NaN), counted while the chunk is still in cache. */
static size_t dequant_rows(const gguf_tensor *t, size_t r0, size_t n, float *dst) {
    const size_t row = (size_t)t->ne[0], rb = row_bytes(t);
    const size_t chunk = 64;
    size_t bad = 0;
#pragma omp parallel for schedule(dynamic, 1) if (n >= 4 * chunk) reduction(+ : bad)
    for (size_t i = 0; i < n; i += chunk) {
        size_t k = n - i < chunk ? n - i : chunk;
        float *out = dst + i * row;
        gguf_dequantize(t->type, t->data + (r0 + i) * rb, out, k * row); /* checked beforehand */
        for (size_t j = 0; j < k * row; j++) bad += !isfinite(out[j]);
    }
    mapped_release(t->data + r0 * rb, n * rb);
    return bad;
}

/* GGUF row h*hd + 2i + p holds HF row h*hd + p*hd/2 + i (heads' rows of one chunk). */
static void unpermute_rows(const float *src, float *dst, int heads, int64_t hd, int64_t cols) {
    const int64_t half = hd / 2, w = cols ? cols : 1;
    for (int h = 0; h < heads; h++)
        for (int64_t i = 0; i < half; i++)
            for (int p = 0; p < 2; p++)
                memcpy(dst + (h * hd + p * half + i) * w, src + (h * hd + 2 * i + p) * w, (size_t)w * sizeof *dst);
}

/* model_put_chunked's reader of one tensor: whole rows, or whole heads' rows
 * when they are un-permuted (tmp: a chunk's worth of host memory). */
typedef struct {
    const gguf_tensor *t;
    const spec *s;
    const char *path;
    float *tmp;
    size_t tmp_n;
} chunk_reader;

static int non_finite(const chunk_reader *c, size_t bad) {
    return gf_fail("%s: tensor %s: %zu value%s not finite (NaN or Inf) after dequantization; the file is damaged",
                   c->path, c->s->w.name, bad, bad == 1 ? " is" : "s are");
}

static int read_chunk(void *ud, size_t off, void *dstv, size_t n) {
    chunk_reader *c = ud;
    const size_t row = (size_t)c->t->ne[0];
    float *dst = dstv;
    if (!c->s->permute_heads) {
        const size_t bad = dequant_rows(c->t, off / row, n / row, dst);
        return bad ? non_finite(c, bad) : 0;
    }
    if (n > c->tmp_n) {
        free(c->tmp);
        c->tmp_n = 0;
        if (!(c->tmp = gf_try_malloc(n * sizeof *c->tmp, "un-permuting q/k rows"))) return -1;
        c->tmp_n = n;
    }
    const int64_t hd = c->s->w.rows / c->s->permute_heads, w = c->s->w.cols ? c->s->w.cols : 1;
    const size_t bad = dequant_rows(c->t, off / row, n / row, c->tmp);
    if (bad) return non_finite(c, bad);
    unpermute_rows(c->tmp, dst, (int)((int64_t)n / (hd * w)), hd, c->s->w.cols);
    return 0;
}

static void describe_types(char *out, size_t cap, unsigned types) {
    size_t k = 0;
    out[0] = 0;
    for (unsigned t = 0; t < 32; t++)
        if (types & (1u << t) && k < cap)
            k += (size_t)snprintf(out + k, cap - k, "%s%s", k ? "+" : "", ggml_type_name(t));
}

static int load_rope_factors(model_config *c, const gguf_file *g, const char *path) {
    const gguf_tensor *t = gguf_find_tensor(g, "rope_freqs.weight");
    if (!t) return 0;
    const int half = c->head_dim / 2;
    if (t->n_dims != 1 || t->ne[0] != (uint64_t)half || t->type != GGML_F32)
        return gf_fail("%s: rope_freqs.weight must be %d float32 values", path, half);
    if (c->rope_scaling.type != ROPE_SCALING_NONE)
        return gf_fail("%s: both rope_freqs.weight and a RoPE scaling type are given", path);
    dequant_f32(t->data, c->rope_scaling.freq_factors, (size_t)half);
    for (int i = 0; i < half; i++)
        if (!(c->rope_scaling.freq_factors[i] > 0))
            return gf_fail("%s: rope_freqs.weight[%d] is not positive", path, i);
    c->rope_scaling.type = ROPE_SCALING_FACTORS;
    return 0;
}

int load_gguf(model *m, const char *path, const model_load_opts *opts) {
    gguf_file g;
    if (gguf_open(&g, path) != 0) return -1;
    spec *specs = NULL;
    size_t n_specs = 0;
    chunk_reader rd = {0};
    int rc = -1;
    gguf_str arch;
    int r = gguf_get_str(&g, "general.architecture", &arch);
    if (r <= 0) {
        if (r == 0) gf_fail("%s: no general.architecture in the metadata", path);
        goto done;
    }
    char arch_name[32];
    gguf_printable(arch, arch_name, sizeof arch_name);
    if (read_config(&m->cfg, &g, arch_name, path) != 0) goto done;
    if (metadata_agrees(&g, &m->cfg, arch_name, path) != 0) goto done;
    if (load_rope_factors(&m->cfg, &g, path) != 0) goto done;

    /* every tensor is checked against the file before the weights are
     * allocated: a header cannot make graft allocate what the file lacks */
    n_specs = expected(&specs, &m->cfg);
    unsigned types = 0;
    for (size_t i = 0; i < n_specs; i++) {
        const gguf_tensor *t = gguf_find_tensor(&g, specs[i].w.name);
        if (!t) {
            gf_fail("%s: missing tensor %s", path, specs[i].w.name);
            goto done;
        }
        if (check_tensor(t, &specs[i], path) != 0) goto done;
        if (t->n_dims == 2) types |= 1u << t->type;
        if (specs[i].permute_heads && (specs[i].w.rows / specs[i].permute_heads) % 2 != 0) {
            gf_fail("%s: %s: odd head size", path, specs[i].w.name);
            goto done;
        }
    }
    if (model_alloc_params(m) != 0) goto done;
    for (size_t i = 0; i < n_specs; i++) { /* a few rows of host memory at a time */
        const spec *s = &specs[i];
        rd.t = gguf_find_tensor(&g, s->w.name);
        rd.s = s;
        rd.path = path;
        const size_t row = (size_t)rd.t->ne[0];
        /* whole rows (a vector is one row); for un-permuted q / k matrices whole heads (hd rows) */
        const size_t granule = s->permute_heads && s->w.cols ? (size_t)(s->w.rows / s->permute_heads) * row : row;
        if (model_put_chunked(m, s->w.layer, s->w.kind, (size_t)rd.t->n_elems, granule, GF_F32, read_chunk, &rd) != 0)
            goto done;
    }
    describe_types(m->weights_dtype, sizeof m->weights_dtype, types);

    if (opts->tokenizer_path) {
        if (load_model_tokenizer(m, opts->tokenizer_path) != 0) goto done;
    } else if (gguf_find_kv(&g, "tokenizer.ggml.model")) {
        if (gguf_tokenizer_load(&m->tok, &g) != 0) goto done;
        if (tokenizer_vocab_size(m->tok) > m->cfg.vocab_size) {
            gf_fail("%s: the tokenizer has %d tokens but the embedding only %d rows", path,
                    tokenizer_vocab_size(m->tok), m->cfg.vocab_size);
            goto done;
        }
        m->cfg.bos_id = tokenizer_bos(m->tok); /* -1 when add_bos_token is false */
    }
    rc = 0;
done:
    free(rd.tmp);
    free(specs);
    gguf_close(&g);
    return rc;
}
