/* GGUF header, metadata and tensor index (see gguf_reader.h). */
#include "formats/gguf_reader.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

/* ---- ggml type table ---- */

typedef struct {
    const char *name;
    size_t block_elems, block_bytes;
} type_info;

static const type_info *type_of(uint32_t t) {
    static const type_info table[] = {
        [GGML_F32] = {"f32", 1, 4},          [GGML_F16] = {"f16", 1, 2},
        [GGML_Q4_0] = {"q4_0", 32, 18},      [GGML_Q4_1] = {"q4_1", 32, 20},
        [GGML_Q5_0] = {"q5_0", 32, 22},      [GGML_Q5_1] = {"q5_1", 32, 24},
        [GGML_Q8_0] = {"q8_0", 32, 34},      [GGML_Q8_1] = {"q8_1", 32, 36},
        [GGML_Q2_K] = {"q2_k", 256, 84},     [GGML_Q3_K] = {"q3_k", 256, 110},
        [GGML_Q4_K] = {"q4_k", 256, 144},    [GGML_Q5_K] = {"q5_k", 256, 176},
        [GGML_Q6_K] = {"q6_k", 256, 210},    [GGML_Q8_K] = {"q8_k", 256, 292},
        [GGML_BF16] = {"bf16", 1, 2},
    };
    if (t >= sizeof table / sizeof *table || !table[t].name) return NULL;
    return &table[t];
}

const char *ggml_type_name(uint32_t t) { return type_of(t) ? type_of(t)->name : NULL; }
size_t ggml_block_elems(uint32_t t) { return type_of(t) ? type_of(t)->block_elems : 0; }
size_t ggml_block_bytes(uint32_t t) { return type_of(t) ? type_of(t)->block_bytes : 0; }

/* ---- bounded cursor over the mapping ---- */

typedef struct {
    const uint8_t *p;
    size_t size, off;
    const char *path;
    const char *what; /* what is being read, for messages */
} cursor;

static int need(cursor *c, uint64_t n) {
    if (n > c->size - c->off)
        return gf_fail("%s: truncated: %s needs %llu bytes at offset %zu, file has %zu", c->path, c->what,
                       (unsigned long long)n, c->off, c->size);
    return 0;
}

static uint64_t le(const uint8_t *p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static int rd(cursor *c, int n, uint64_t *v) {
    if (need(c, (uint64_t)n) != 0) return -1;
    *v = le(c->p + c->off, n);
    c->off += (size_t)n;
    return 0;
}

static int rd_str(cursor *c, gguf_str *s) {
    uint64_t n;
    if (rd(c, 8, &n) != 0 || need(c, n) != 0) return -1;
    s->p = (const char *)c->p + c->off;
    s->len = (size_t)n;
    c->off += (size_t)n;
    return 0;
}

static size_t value_size(gguf_value_type t) {
    switch (t) {
    case GGUF_UINT8: case GGUF_INT8: case GGUF_BOOL: return 1;
    case GGUF_UINT16: case GGUF_INT16: return 2;
    case GGUF_UINT32: case GGUF_INT32: case GGUF_FLOAT32: return 4;
    case GGUF_UINT64: case GGUF_INT64: case GGUF_FLOAT64: return 8;
    default: return 0;
    }
}

static bool is_int_type(gguf_value_type t) {
    return t == GGUF_UINT8 || t == GGUF_INT8 || t == GGUF_UINT16 || t == GGUF_INT16 || t == GGUF_UINT32 ||
           t == GGUF_INT32 || t == GGUF_UINT64 || t == GGUF_INT64;
}

static bool is_signed(gguf_value_type t) {
    return t == GGUF_INT8 || t == GGUF_INT16 || t == GGUF_INT32 || t == GGUF_INT64;
}

static double to_float(gguf_value_type t, uint64_t raw) {
    if (t == GGUF_FLOAT32) {
        uint32_t b = (uint32_t)raw;
        float f;
        memcpy(&f, &b, 4);
        return f;
    }
    double d;
    memcpy(&d, &raw, 8);
    return d;
}

static int64_t to_signed(gguf_value_type t, uint64_t raw) {
    switch (t) {
    case GGUF_INT8: return (int8_t)raw;
    case GGUF_INT16: return (int16_t)raw;
    case GGUF_INT32: return (int32_t)raw;
    default: return (int64_t)raw;
    }
}

static bool has_control(const gguf_str *s) {
    for (size_t i = 0; i < s->len; i++)
        if ((unsigned char)s->p[i] < 0x20 || s->p[i] == 0x7f) return true;
    return false;
}

const char *gguf_printable(gguf_str s, char *buf, size_t cap) {
    size_t n = s.len < cap - 1 ? s.len : cap - 1;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s.p[i];
        buf[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
    }
    buf[n] = 0;
    return buf;
}

static char *dup_name(const gguf_str *s) {
    char *k = gf_malloc(s->len + 1);
    memcpy(k, s->p, s->len);
    k[s->len] = 0;
    return k;
}

static int read_kv(cursor *c, gguf_kv *kv, size_t index) {
    gguf_str key;
    c->what = "a metadata key";
    if (rd_str(c, &key) != 0) return -1;
    if (key.len == 0 || has_control(&key))
        return gf_fail("%s: metadata entry %zu has an empty key or a control character in it", c->path, index);
    kv->key = dup_name(&key);
    uint64_t t;
    c->what = kv->key;
    if (rd(c, 4, &t) != 0) return -1;
    kv->type = (gguf_value_type)t;
    if (t == GGUF_STRING) return rd_str(c, &kv->str);
    if (t == GGUF_ARRAY) {
        uint64_t et, n;
        if (rd(c, 4, &et) != 0 || rd(c, 8, &n) != 0) return -1;
        kv->arr_type = (gguf_value_type)et;
        kv->arr_n = n;
        if (et == GGUF_STRING) {
            /* each string takes at least its 8-byte length: bound n before allocating */
            if (n > (c->size - c->off) / 8)
                return gf_fail("%s: %s: array of %llu strings cannot fit in the %zu bytes left", c->path, kv->key,
                               (unsigned long long)n, c->size - c->off);
            kv->arr_str = gf_malloc((size_t)(n ? n : 1) * sizeof *kv->arr_str);
            for (uint64_t i = 0; i < n; i++)
                if (rd_str(c, &kv->arr_str[i]) != 0) return -1;
            return 0;
        }
        size_t es = value_size((gguf_value_type)et);
        if (!es)
            return gf_fail("%s: %s: arrays of value type %llu are not supported", c->path, kv->key,
                           (unsigned long long)et);
        if (n > (c->size - c->off) / es)
            return gf_fail("%s: truncated: %s: array of %llu elements of %zu bytes at offset %zu, file has %zu",
                           c->path, kv->key, (unsigned long long)n, es, c->off, c->size);
        kv->arr_data = c->p + c->off;
        c->off += (size_t)(n * es);
        return 0;
    }
    size_t sz = value_size(kv->type);
    if (!sz) return gf_fail("%s: %s: unknown metadata value type %llu", c->path, kv->key, (unsigned long long)t);
    uint64_t raw;
    if (rd(c, (int)sz, &raw) != 0) return -1;
    if (kv->type == GGUF_FLOAT32 || kv->type == GGUF_FLOAT64) kv->v.f = to_float(kv->type, raw);
    else if (kv->type == GGUF_BOOL) kv->v.b = raw != 0;
    else if (is_signed(kv->type)) kv->v.i = to_signed(kv->type, raw);
    else kv->v.u = raw;
    return 0;
}

static int read_tensor_info(cursor *c, gguf_tensor *t, size_t index) {
    gguf_str name;
    c->what = "a tensor name";
    if (rd_str(c, &name) != 0) return -1;
    if (has_control(&name)) return gf_fail("%s: tensor %zu has a control character in its name", c->path, index);
    t->name = dup_name(&name);
    c->what = t->name;
    uint64_t nd, ty, off;
    if (rd(c, 4, &nd) != 0) return -1;
    if (nd < 1 || nd > GGUF_MAX_DIMS)
        return gf_fail("%s: tensor %s has %llu dimensions (1 to %d allowed)", c->path, t->name,
                       (unsigned long long)nd, GGUF_MAX_DIMS);
    t->n_dims = (int)nd;
    uint64_t n = 1;
    for (int d = 0; d < t->n_dims; d++) {
        if (rd(c, 8, &t->ne[d]) != 0) return -1;
        if (t->ne[d] == 0 || t->ne[d] > (1ull << 40) || n > (1ull << 40) / t->ne[d])
            return gf_fail("%s: tensor %s: dimension %d is %llu (empty or too large)", c->path, t->name, d,
                           (unsigned long long)t->ne[d]);
        n *= t->ne[d];
    }
    for (int d = t->n_dims; d < GGUF_MAX_DIMS; d++) t->ne[d] = 1;
    t->n_elems = n;
    if (rd(c, 4, &ty) != 0 || rd(c, 8, &off) != 0) return -1;
    const type_info *ti = type_of((uint32_t)ty);
    if (!ti) return gf_fail("%s: tensor %s has unknown ggml type %llu", c->path, t->name, (unsigned long long)ty);
    t->type = (ggml_type)ty;
    if (t->ne[0] % ti->block_elems != 0)
        return gf_fail("%s: tensor %s: row length %llu is not a multiple of the %s block size %zu", c->path,
                       t->name, (unsigned long long)t->ne[0], ti->name, ti->block_elems);
    t->nbytes = (size_t)(n / ti->block_elems * ti->block_bytes);
    t->data = (const uint8_t *)(uintptr_t)off; /* offset for now; resolved once the data section is known */
    return 0;
}

static int by_offset(const void *a, const void *b) {
    const uint8_t *pa = (*(const gguf_tensor *const *)a)->data, *pb = (*(const gguf_tensor *const *)b)->data;
    return pa < pb ? -1 : pa > pb;
}

/* Tensors may not share bytes (llama.cpp lays them out one after the other):
 * otherwise a small file could name the same bytes for thousands of tensors
 * and make the loader allocate far more than the file holds. */
static int check_no_overlap(const gguf_file *g, const char *path) {
    if (g->n_tensors < 2) return 0;
    const gguf_tensor **order = gf_malloc(g->n_tensors * sizeof *order);
    for (size_t i = 0; i < g->n_tensors; i++) order[i] = &g->tensors[i];
    qsort(order, g->n_tensors, sizeof *order, by_offset);
    int rc = 0;
    for (size_t i = 1; i < g->n_tensors && rc == 0; i++)
        if (order[i - 1]->data + order[i - 1]->nbytes > order[i]->data)
            rc = gf_fail("%s: tensors %s and %s overlap in the data section", path, order[i - 1]->name,
                         order[i]->name);
    free(order);
    return rc;
}

void gguf_close(gguf_file *g) {
    for (size_t i = 0; i < g->n_kv; i++) {
        free(g->kv[i].key);
        free(g->kv[i].arr_str);
    }
    free(g->kv);
    for (size_t i = 0; i < g->n_tensors; i++) free(g->tensors[i].name);
    free(g->tensors);
    if (g->kv_index.cap) strmap_free(&g->kv_index);
    if (g->tensor_index.cap) strmap_free(&g->tensor_index);
    mapped_file_close(&g->mf);
    memset(g, 0, sizeof *g);
}

int gguf_open(gguf_file *g, const char *path) {
    memset(g, 0, sizeof *g);
    if (mapped_file_open(&g->mf, path) != 0) return -1;
    cursor c = {g->mf.data, g->mf.size, 0, path, "the header"};
    uint64_t version, n_tensors, n_kv;
    if (g->mf.size < 4 || memcmp(g->mf.data, "GGUF", 4) != 0) {
        gguf_close(g);
        return gf_fail("%s: not a GGUF file (no GGUF magic)", path);
    }
    c.off = 4;
    if (rd(&c, 4, &version) != 0) goto fail;
    if (version != 2 && version != 3) {
        gf_fail("%s: GGUF version %llu is not supported (2 and 3 are; big-endian files are not)", path,
                (unsigned long long)version);
        goto fail;
    }
    g->version = (uint32_t)version;
    if (rd(&c, 8, &n_tensors) != 0 || rd(&c, 8, &n_kv) != 0) goto fail;
    /* a metadata entry takes at least 13 bytes (key length, 1 key byte, type),
     * a tensor info at least 29 (name length, n_dims, one dim, type, offset) */
    if (n_kv > (c.size - c.off) / 13 || n_tensors > (c.size - c.off) / 29) {
        gf_fail("%s: header claims %llu metadata entries and %llu tensors, more than %zu bytes can hold", path,
                (unsigned long long)n_kv, (unsigned long long)n_tensors, c.size - c.off);
        goto fail;
    }
    g->kv = gf_calloc((size_t)(n_kv ? n_kv : 1), sizeof *g->kv);
    strmap_init(&g->kv_index, (size_t)n_kv);
    for (uint64_t i = 0; i < n_kv; i++) {
        g->n_kv = (size_t)i + 1;
        if (read_kv(&c, &g->kv[i], (size_t)i) != 0) goto fail;
        if (strmap_get(&g->kv_index, g->kv[i].key, strlen(g->kv[i].key)) >= 0) {
            gf_fail("%s: metadata key %s appears twice", path, g->kv[i].key);
            goto fail;
        }
        strmap_put(&g->kv_index, g->kv[i].key, strlen(g->kv[i].key), (int)i);
    }
    g->alignment = 32;
    const gguf_kv *al = gguf_find_kv(g, "general.alignment");
    if (al) {
        if (!is_int_type(al->type) || is_signed(al->type) || al->v.u == 0 || (al->v.u & (al->v.u - 1)) ||
            al->v.u > (1u << 20)) {
            gf_fail("%s: general.alignment must be an unsigned power of two up to 1 MiB", path);
            goto fail;
        }
        g->alignment = (size_t)al->v.u;
    }
    g->tensors = gf_calloc((size_t)(n_tensors ? n_tensors : 1), sizeof *g->tensors);
    strmap_init(&g->tensor_index, (size_t)n_tensors);
    for (uint64_t i = 0; i < n_tensors; i++) {
        g->n_tensors = (size_t)i + 1;
        if (read_tensor_info(&c, &g->tensors[i], (size_t)i) != 0) goto fail;
        const char *nm = g->tensors[i].name;
        if (strmap_get(&g->tensor_index, nm, strlen(nm)) >= 0) {
            gf_fail("%s: tensor %s appears twice", path, nm);
            goto fail;
        }
        strmap_put(&g->tensor_index, nm, strlen(nm), (int)i);
    }
    size_t data = (c.off + g->alignment - 1) / g->alignment * g->alignment;
    if (n_tensors > 0 && data > c.size) {
        gf_fail("%s: truncated: data section would start at %zu, file has %zu bytes", path, data, c.size);
        goto fail;
    }
    g->data_offset = data;
    size_t avail = c.size > data ? c.size - data : 0;
    for (size_t i = 0; i < g->n_tensors; i++) {
        gguf_tensor *t = &g->tensors[i];
        uint64_t off = (uint64_t)(uintptr_t)t->data;
        if (off % g->alignment != 0) {
            gf_fail("%s: tensor %s: offset %llu is not a multiple of the alignment %zu", path, t->name,
                    (unsigned long long)off, g->alignment);
            goto fail;
        }
        if (off > avail || t->nbytes > avail - off) {
            gf_fail("%s: truncated or lying offset: tensor %s: bytes %llu..%llu of the data section lie past its "
                    "end (%zu bytes)", path, t->name, (unsigned long long)off, (unsigned long long)(off + t->nbytes), avail);
            goto fail;
        }
        t->data = g->mf.data + data + off;
    }
    if (check_no_overlap(g, path) != 0) goto fail;
    return 0;
fail:
    for (size_t i = 0; i < g->n_tensors; i++) g->tensors[i].data = NULL;
    gguf_close(g);
    return -1;
}

const gguf_kv *gguf_find_kv(const gguf_file *g, const char *key) {
    if (!g->kv_index.cap) return NULL;
    int i = strmap_get(&g->kv_index, key, strlen(key));
    return i >= 0 ? &g->kv[i] : NULL;
}

const gguf_tensor *gguf_find_tensor(const gguf_file *g, const char *name) {
    if (!g->tensor_index.cap) return NULL;
    int i = strmap_get(&g->tensor_index, name, strlen(name));
    return i >= 0 ? &g->tensors[i] : NULL;
}

int gguf_get_int(const gguf_file *g, const char *key, int64_t *out) {
    const gguf_kv *kv = gguf_find_kv(g, key);
    if (!kv) return 0;
    if (!is_int_type(kv->type)) return gf_fail("%s: %s is not an integer", g->mf.path, key);
    if (!is_signed(kv->type) && kv->v.u > (uint64_t)INT64_MAX)
        return gf_fail("%s: %s = %llu is out of range", g->mf.path, key, (unsigned long long)kv->v.u);
    *out = is_signed(kv->type) ? kv->v.i : (int64_t)kv->v.u;
    return 1;
}

int gguf_get_float(const gguf_file *g, const char *key, double *out) {
    const gguf_kv *kv = gguf_find_kv(g, key);
    if (!kv) return 0;
    if (kv->type != GGUF_FLOAT32 && kv->type != GGUF_FLOAT64)
        return gf_fail("%s: %s is not a floating-point number", g->mf.path, key);
    *out = kv->v.f;
    return 1;
}

int gguf_get_bool(const gguf_file *g, const char *key, bool *out) {
    const gguf_kv *kv = gguf_find_kv(g, key);
    if (!kv) return 0;
    if (kv->type != GGUF_BOOL) return gf_fail("%s: %s is not a boolean", g->mf.path, key);
    *out = kv->v.b;
    return 1;
}

int gguf_get_str(const gguf_file *g, const char *key, gguf_str *out) {
    const gguf_kv *kv = gguf_find_kv(g, key);
    if (!kv) return 0;
    if (kv->type != GGUF_STRING) return gf_fail("%s: %s is not a string", g->mf.path, key);
    *out = kv->str;
    return 1;
}

const gguf_kv *gguf_get_array(const gguf_file *g, const char *key, gguf_value_type elem) {
    const gguf_kv *kv = gguf_find_kv(g, key);
    if (!kv || kv->type != GGUF_ARRAY || kv->arr_type != elem) return NULL;
    return kv;
}

double gguf_arr_float(const gguf_kv *kv, uint64_t i) {
    size_t es = value_size(kv->arr_type);
    uint64_t raw = le(kv->arr_data + i * es, (int)es);
    if (kv->arr_type == GGUF_FLOAT32 || kv->arr_type == GGUF_FLOAT64) return to_float(kv->arr_type, raw);
    return is_signed(kv->arr_type) ? (double)to_signed(kv->arr_type, raw) : (double)raw;
}

int64_t gguf_arr_int(const gguf_kv *kv, uint64_t i) {
    size_t es = value_size(kv->arr_type);
    uint64_t raw = le(kv->arr_data + i * es, (int)es);
    if (kv->arr_type == GGUF_FLOAT32 || kv->arr_type == GGUF_FLOAT64) return (int64_t)to_float(kv->arr_type, raw);
    return is_signed(kv->arr_type) ? to_signed(kv->arr_type, raw) : (int64_t)raw;
}
