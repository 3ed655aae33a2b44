/* llama2.c checkpoints, in the three layouts karpathy/llama2.c's export.py writes:
 *
 *   legacy (v0): int32 dim, hidden_dim, n_layers, n_heads, n_kv_heads,
 *       vocab_size (negative: separate classifier), seq_len; then float32:
 *       tok_embed, per kind for all layers (att norm, wq, wk, wv, wo, ffn norm,
 *       w1, w2, w3), final norm, freq_cis real+imag (seq_len * head_size / 2
 *       each; recomputed by graft, and accepted when absent), [wcls].
 *   v1: a 256-byte header: uint32 magic "ak42" (0x616b3432), int32 version 1,
 *       the 7 int32 params (vocab positive), uint8 shared_classifier, zeros.
 *       float32: att norms, ffn norms, final norm, tok_embed, wq, wk, wv, wo,
 *       w1, w2, w3 (each for all layers), [wcls].
 *   v2: header as v1 with version 2 and an int32 group size at byte 37;
 *       float32 norms (att, ffn, final), then Q8_0 tensors in the order
 *       tok_embed, wq[l], wk[l], wv[l], wo[l], w1[l], w2[l], w3[l], [wcls]:
 *       each is numel int8 values followed by numel/group float32 scales
 *       (value = q * scale of its group). Dequantized on load.
 *
 * The file size must equal what the header implies exactly; nothing is
 * allocated before that check. w1 = gate, w2 = down, w3 = up. */
#include <dirent.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "core/mapped_file.h"
#include "core/path.h"
#include "formats/loaders.h"
#include "formats/tensor_names.h"
#include "formats/weights_agree.h"

#define L2C_MAGIC 0x616b3432u
#define L2C_HEADER_BYTES 256

/* ---- size arithmetic that cannot overflow silently ---- */

typedef struct {
    size_t total;
    bool overflow;
} byte_count;

static void count_add(byte_count *c, size_t a, size_t b, size_t unit) {
    size_t p;
    if (__builtin_mul_overflow(a, b, &p) || __builtin_mul_overflow(p, unit, &p) ||
        __builtin_add_overflow(c->total, p, &c->total))
        c->overflow = true;
}

/* ---- sequential reads from the mapping (no alignment assumed) ---- */

typedef struct {
    const uint8_t *p;
    const uint8_t *end;
} byte_reader;

/* One tensor of n values at r->p: float32, or Q8_0 (n int8 values, then
 * n / gs float32 scales: value = q * scale of its group) when gs > 0. */
typedef struct {
    const uint8_t *p;
    size_t n, gs;
} tensor_at;

/* model_put_chunked's reader: values [off, off + k) (whole groups for Q8_0). */
static int read_chunk(void *ud, size_t off, void *dstv, size_t k) {
    const tensor_at *t = ud;
    float *dst = dstv;
    if (!t->gs) {
        memcpy(dst, t->p + off * sizeof(float), k * sizeof(float));
        mapped_release(t->p + off * sizeof(float), k * sizeof(float));
        return 0;
    }
    const int8_t *q = (const int8_t *)t->p + off;
    const uint8_t *scales = t->p + t->n + off / t->gs * sizeof(float);
    for (size_t g = 0; g < k / t->gs; g++) {
        float s;
        memcpy(&s, scales + g * sizeof(float), sizeof s);
        for (size_t i = g * t->gs; i < (g + 1) * t->gs; i++) dst[i] = (float)q[i] * s;
    }
    mapped_release(q, k);
    mapped_release(scales, k / t->gs * sizeof(float));
    return 0;
}

/* One tensor of n values (float32, or Q8_0 with group size q8 > 0) converted
 * chunk by chunk into the model's block. */
static int put_f32(model *m, byte_reader *r, int layer, tensor_kind k, size_t n, size_t q8) {
    tensor_at t = {r->p, n, q8};
    r->p += q8 ? n + (n / q8) * sizeof(float) : n * sizeof(float); /* sizes were checked against the file */
    return model_put_chunked(m, layer, k, n, q8 ? q8 : 1, GF_F32, read_chunk, &t);
}

/* Every tensor of kind k (each layer's in turn, or the one global). */
static int put_all(model *m, byte_reader *r, tensor_kind k, size_t q8) {
    const size_t count = teacher_tensor_count(&m->cfg, k), n = teacher_tensor_numel(&m->cfg, k);
    const int per_layer = tensor_name_of(k)->per_layer;
    for (size_t l = 0; l < count; l++)
        if (put_f32(m, r, per_layer ? (int)l : -1, k, n, q8)) return -1;
    return 0;
}

static bool is_vector(tensor_kind k) { return tensor_name_of(k)->cols == TDIM_NONE; }

/* tokenizer.bin beside the checkpoint, else tok<vocab>.bin, else any tok*.bin. */
static char *find_tokenizer(const char *ckpt, int vocab) {
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", ckpt);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0; else snprintf(dir, sizeof dir, ".");
    char cand[PATH_MAX + 300]; /* dir + "/" + d_name (<= 256) */
    struct stat st; /* present is enough: the tokenizer's loader refuses what is not a regular file */
    snprintf(cand, sizeof cand, "%s/tokenizer.bin", dir);
    if (stat(cand, &st) == 0) return gf_strdup(cand);
    snprintf(cand, sizeof cand, "%s/tok%d.bin", dir, vocab);
    if (stat(cand, &st) == 0) return gf_strdup(cand);
    DIR *d = opendir(dir);
    if (!d) return NULL;
    char *found = NULL;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (strncmp(e->d_name, "tok", 3) == 0 && n > 4 && strcmp(e->d_name + n - 4, ".bin") == 0) {
            snprintf(cand, sizeof cand, "%s/%s", dir, e->d_name);
            found = gf_strdup(cand);
            break;
        }
    }
    closedir(d);
    return found;
}

/* h: the 7 header ints; vocab may be negative only in the legacy format. */
static int check_dims(const int32_t h[7], bool legacy, const char *path) {
    const char *names[7] = {"dim", "hidden_dim", "n_layers", "n_heads", "n_kv_heads", "vocab_size", "seq_len"};
    for (int i = 0; i < 7; i++) {
        int64_t v = h[i];
        if (i == 5 && legacy && v < 0) v = -v;
        if (v <= 0 || v > (1 << 24))
            return gf_fail("%s: not a llama2.c checkpoint (header %s = %d)", path, names[i], h[i]);
    }
    if (h[0] % h[3] != 0) return gf_fail("%s: dim %d is not a multiple of n_heads %d", path, h[0], h[3]);
    if (h[3] % h[4] != 0) return gf_fail("%s: n_heads %d is not a multiple of n_kv_heads %d", path, h[3], h[4]);
    if ((h[0] / h[3]) % 2 != 0) return gf_fail("%s: head size %d is odd; RoPE needs pairs", path, h[0] / h[3]);
    return 0;
}

static void fill_config(model_config *c, const int32_t h[7], bool tied) {
    memset(c, 0, sizeof *c);
    c->arch = ARCH_LLAMA;
    c->source = SOURCE_LLAMA2C;
    c->dim = h[0];
    c->hidden_dim = h[1];
    c->n_layers = h[2];
    c->n_heads = h[3];
    c->n_kv_heads = h[4];
    c->tied_embeddings = tied;
    c->vocab_size = h[5] < 0 ? -h[5] : h[5];
    c->max_seq = h[6];
    c->head_dim = c->dim / c->n_heads;
    c->norm_eps = 1e-5f;
    c->rope_theta = 10000.0f;
    c->rope_pairing = ROPE_ADJACENT;
    c->bos_id = 1;
    c->eos_id = 2;
}

/* Compares the file size with the expected one; message says which way it is off. */
static int check_size(size_t have, const byte_count *want, const char *path, const char *what) {
    if (want->overflow) return gf_fail("%s: header dimensions imply an impossible size", path);
    if (have < want->total)
        return gf_fail("%s: truncated %s checkpoint: header implies %zu bytes, file has %zu", path, what,
                       want->total, have);
    if (have > want->total)
        return gf_fail("%s: %zu trailing bytes after the weights of this %s checkpoint", path, have - want->total,
                       what);
    return 0;
}

/* When the file's size is off, whether it fits another layer count exactly:
 * the bytes of config c are affine in n_layers, so with b0 and b1 the sizes at
 * 0 and 1 layers (plus extra, the legacy RoPE tables) the file holds
 * (size - b0 - extra) / (b1 - b0) whole layers or none. A whole count other
 * than the header's means its n_layers is not the weights': refused naming
 * the field; else 0 (a plain truncation or a damaged header, which
 * check_size tells). */
static int layers_disagree(const mapped_file *f, const model_config *c, const byte_count *b0, const byte_count *b1,
                           size_t extra, const char *path) {
    if (b0->overflow || b1->overflow || b1->total <= b0->total || f->size < b0->total + extra) return 0;
    const size_t per_layer = b1->total - b0->total, rest = f->size - b0->total - extra;
    if (rest % per_layer != 0 || rest / per_layer == 0 || rest / per_layer == (size_t)c->n_layers) return 0;
    return config_disagrees(path, "header n_layers", c->n_layers,
                            "the file's %zu bytes hold %zu layers of the header's other dimensions", f->size,
                            rest / per_layer);
}

/* The bytes of a legacy checkpoint of config c, without the RoPE tables. */
static byte_count legacy_bytes(const model_config *c) {
    byte_count b = {7 * sizeof(int32_t), false};
    for (size_t i = 0; i < llama2c_order_count; i++)
        count_add(&b, teacher_tensor_count(c, llama2c_order[i]), teacher_tensor_numel(c, llama2c_order[i]), 4);
    return b;
}

/* c with n layers. */
static model_config with_layers(const model_config *c, int n) {
    model_config k = *c;
    k.n_layers = n;
    return k;
}

static int load_legacy(model *m, const mapped_file *f, const char *path) {
    if (f->size < 7 * sizeof(int32_t))
        return gf_fail("%s: truncated file (%zu bytes; a llama2.c header needs 28)", path, f->size);
    int32_t h[7];
    memcpy(h, f->data, sizeof h);
    if (check_dims(h, true, path) != 0) return -1;
    model_config *c = &m->cfg;
    fill_config(c, h, h[5] > 0);
    const size_t freq = (size_t)c->max_seq * c->head_dim; /* freq_cis real + imag: seq_len x head_size/2 each */

    const byte_count base = legacy_bytes(c);
    byte_count with_freq = base;
    count_add(&with_freq, freq, 1, 4);
    if (f->size != base.total && f->size != with_freq.total) {
        const model_config c0 = with_layers(c, 0), c1 = with_layers(c, 1);
        const byte_count b0 = legacy_bytes(&c0), b1 = legacy_bytes(&c1);
        if (layers_disagree(f, c, &b0, &b1, freq * 4, path) != 0 || layers_disagree(f, c, &b0, &b1, 0, path) != 0)
            return -1;
    }
    /* llama2.c always writes the freq_cis tables; files without them are accepted too */
    bool has_freq = true;
    if (!base.overflow && f->size == base.total) has_freq = false;
    else if (!base.overflow && f->size > base.total && f->size < with_freq.total)
        return gf_fail("%s: truncated legacy checkpoint: the freq_cis tables are cut short (%zu bytes, expected %zu)",
                       path, f->size, with_freq.total);
    else if (check_size(f->size, &with_freq, path, "legacy") != 0)
        return -1;
    snprintf(m->weights_dtype, sizeof m->weights_dtype, "f32");

    if (model_alloc_params(m) != 0) return -1;
    byte_reader r = {f->data + sizeof h, f->data + f->size};
    for (size_t i = 0; i < llama2c_order_count; i++) {
        const tensor_kind k = llama2c_order[i];
        if (k == TK_LM_HEAD && has_freq) r.p += freq * sizeof(float); /* RoPE tables: recomputed, not read */
        if (put_all(m, &r, k, 0) != 0) return -1;
    }
    GF_ASSERT(r.p == r.end);
    return 0;
}

/* The bytes of a v1 (gs 0: float32) or v2 (Q8_0 matrices of group size gs)
 * checkpoint of config c into *want; -1 when gs does not divide a matrix. */
static int versioned_bytes(const model_config *c, size_t gs, byte_count *want, const char *path) {
    *want = (byte_count){L2C_HEADER_BYTES, false};
    for (size_t i = 0; i < llama2c_order_count; i++) {
        const tensor_kind k = llama2c_order[i];
        const size_t count = teacher_tensor_count(c, k), numel = teacher_tensor_numel(c, k);
        if (is_vector(k) || !gs) {
            count_add(want, count, numel, 4); /* float32 */
            continue;
        }
        if (count && numel % gs != 0)
            return gf_fail("%s: Q8_0 group size %zu does not divide a tensor of %zu values", path, gs, numel);
        count_add(want, count, numel + numel / gs * 4, 1);
    }
    return 0;
}

static int load_versioned(model *m, const mapped_file *f, const char *path) {
    if (f->size < 8) return gf_fail("%s: truncated llama2.c checkpoint (%zu bytes)", path, f->size);
    int32_t version;
    memcpy(&version, f->data + 4, 4);
    if (version != 1 && version != 2)
        return gf_fail("%s: unsupported llama2.c checkpoint version %d (graft reads legacy, 1 and 2)", path, version);
    if (f->size < L2C_HEADER_BYTES)
        return gf_fail("%s: truncated llama2.c v%d checkpoint (%zu bytes; the header alone needs %d)", path, version,
                       f->size, L2C_HEADER_BYTES);
    int32_t h[7];
    memcpy(h, f->data + 8, sizeof h);
    if (check_dims(h, false, path) != 0) return -1;
    uint8_t shared = f->data[36];
    if (shared > 1) return gf_fail("%s: shared_classifier flag is %u (expected 0 or 1)", path, shared);
    model_config *c = &m->cfg;
    fill_config(c, h, shared == 1);
    byte_count want;
    size_t gs = 0;
    if (version == 2) {
        int32_t g;
        memcpy(&g, f->data + 37, 4);
        if (g <= 0 || g > (1 << 24)) return gf_fail("%s: bad Q8_0 group size %d in the v2 header", path, g);
        gs = (size_t)g;
    }
    if (versioned_bytes(c, gs, &want, path) != 0) return -1;
    if (f->size != want.total) {
        const model_config c0 = with_layers(c, 0), c1 = with_layers(c, 1);
        byte_count b0, b1;
        if (versioned_bytes(&c0, gs, &b0, path) == 0 && versioned_bytes(&c1, gs, &b1, path) == 0 &&
            layers_disagree(f, c, &b0, &b1, 0, path) != 0)
            return -1;
    }
    char what[8];
    snprintf(what, sizeof what, "v%d", version);
    if (check_size(f->size, &want, path, what) != 0) return -1;
    snprintf(m->weights_dtype, sizeof m->weights_dtype, "%s", version == 1 ? "f32" : "q8_0");

    if (model_alloc_params(m) != 0) return -1;
    byte_reader r = {f->data + L2C_HEADER_BYTES, f->data + f->size};
    const size_t q8 = version == 1 ? 0 : gs;
    for (int vectors = 1; vectors >= 0; vectors--) /* the norms first, float32 */
        for (size_t i = 0; i < llama2c_order_count; i++)
            if (is_vector(llama2c_order[i]) == vectors && put_all(m, &r, llama2c_order[i], vectors ? 0 : q8) != 0)
                return -1;
    GF_ASSERT(r.p == r.end);
    return 0;
}

int load_llama2c(model *m, const char *path, const model_load_opts *opts) {
    if (str_ends_with(path, ".safetensors") || str_ends_with(path, ".json"))
        return gf_fail("%s: name the model folder (with config.json and the safetensors), not one file in it", path);
    mapped_file f;
    if (mapped_file_open(&f, path) != 0) return -1;
    uint32_t magic = 0;
    if (f.size >= 4) memcpy(&magic, f.data, 4);
    int rc = magic == L2C_MAGIC ? load_versioned(m, &f, path) : load_legacy(m, &f, path);
    mapped_file_close(&f);
    if (rc != 0) return -1;

    const char *tp = opts->tokenizer_path;
    char *found = tp ? NULL : find_tokenizer(path, m->cfg.vocab_size);
    if (!tp) tp = found;
    if (tp && load_model_tokenizer(m, tp) != 0) rc = -1;
    free(found);
    return rc;
}
