#include "formats/safetensors.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "core/error.h"
#include "core/path.h"

size_t st_dtype_size(st_dtype d) { return d == ST_F32 ? 4 : 2; }

static float bits_to_f32(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

float st_bf16_to_f32(uint16_t b) { return bits_to_f32((uint32_t)b << 16); }

float st_f16_to_f32(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    if (exp == 0) {
        /* zero or subnormal: mant * 2^-24, exact in float32 */
        float v = (float)mant * 0x1p-24f;
        return sign ? -v : v;
    }
    if (exp == 31) return bits_to_f32(sign | 0x7f800000u | (mant << 13)); /* inf / NaN */
    return bits_to_f32(sign | ((exp + 127 - 15) << 23) | (mant << 13));
}

/* ---- one file ---------------------------------------------------------- */

static int parse_dtype(const char *s, st_dtype *out) {
    if (strcmp(s, "F32") == 0) *out = ST_F32;
    else if (strcmp(s, "F16") == 0) *out = ST_F16;
    else if (strcmp(s, "BF16") == 0) *out = ST_BF16;
    else return -1;
    return 0;
}

/* A JSON number that is a whole value in [0, 2^53]; else -1. */
static int json_u64(const cJSON *v, uint64_t *out) {
    if (!cJSON_IsNumber(v)) return -1;
    double d = v->valuedouble;
    if (!(d >= 0) || d > 9007199254740992.0 || d != floor(d)) return -1;
    *out = (uint64_t)d;
    return 0;
}

static int parse_tensor(st_tensor *t, const cJSON *item, const uint8_t *data, size_t data_size,
                        const char *path) {
    const char *name = item->string;
    if (!cJSON_IsObject(item)) return gf_fail("%s: tensor %s: header entry is not an object", path, name);
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(item, "dtype");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(item, "shape");
    const cJSON *offs = cJSON_GetObjectItemCaseSensitive(item, "data_offsets");
    if (!cJSON_IsString(dt)) return gf_fail("%s: tensor %s: missing dtype", path, name);
    if (parse_dtype(dt->valuestring, &t->dtype) != 0)
        return gf_fail("%s: unsupported dtype %s for tensor %s (graft reads F32, F16, BF16)", path,
                       dt->valuestring, name);
    if (!cJSON_IsArray(shape)) return gf_fail("%s: tensor %s: missing shape", path, name);
    int nd = cJSON_GetArraySize(shape);
    if (nd > ST_MAX_DIMS) return gf_fail("%s: tensor %s: %d dimensions (at most %d)", path, name, nd, ST_MAX_DIMS);
    t->ndim = nd;
    size_t n = 1;
    bool overflow = false;
    int i = 0;
    const cJSON *d;
    cJSON_ArrayForEach(d, shape) {
        if (cJSON_IsNumber(d) && d->valuedouble < 0)
            return gf_fail("%s: tensor %s: negative dimension %.0f in shape", path, name, d->valuedouble);
        uint64_t v;
        if (json_u64(d, &v) != 0) return gf_fail("%s: tensor %s: shape entry %d is not a whole number", path, name, i);
        t->shape[i++] = (int64_t)v;
        if (v > SIZE_MAX || __builtin_mul_overflow(n, (size_t)v, &n)) overflow = true;
    }
    size_t nbytes = 0;
    if (overflow || __builtin_mul_overflow(n, st_dtype_size(t->dtype), &nbytes))
        return gf_fail("%s: tensor %s: shape is too large", path, name);
    uint64_t begin, end;
    if (!cJSON_IsArray(offs) || cJSON_GetArraySize(offs) != 2 ||
        json_u64(cJSON_GetArrayItem(offs, 0), &begin) != 0 || json_u64(cJSON_GetArrayItem(offs, 1), &end) != 0)
        return gf_fail("%s: tensor %s: data_offsets must be two whole numbers [begin, end]", path, name);
    if (begin > end) return gf_fail("%s: tensor %s: data_offsets begin %llu > end %llu", path, name,
                                    (unsigned long long)begin, (unsigned long long)end);
    if (end > data_size)
        return gf_fail("%s: tensor %s: data_offsets [%llu, %llu] run past the end of the data (%zu bytes)", path,
                       name, (unsigned long long)begin, (unsigned long long)end, data_size);
    if (end - begin != nbytes)
        return gf_fail("%s: tensor %s: data_offsets span %llu bytes but shape x %s needs %zu", path, name,
                       (unsigned long long)(end - begin), dt->valuestring, nbytes);
    t->n_elems = n;
    t->nbytes = nbytes;
    t->data = data + begin;
    return 0;
}

/* The reference library's header limit (safetensors' MAX_HEADER_SIZE). */
#define ST_MAX_HEADER 100000000u

static bool valid_utf8(const char *s, size_t n) {
    for (size_t i = 0; i < n;) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t k = utf8proc_iterate((const utf8proc_uint8_t *)s + i, (utf8proc_ssize_t)(n - i), &cp);
        if (k <= 0) return false;
        i += (size_t)k;
    }
    return true;
}

static int by_offsets(const void *a, const void *b) {
    const st_tensor *x = *(const st_tensor *const *)a, *y = *(const st_tensor *const *)b;
    if (x->data != y->data) return x->data < y->data ? -1 : 1;
    return x->nbytes < y->nbytes ? -1 : x->nbytes > y->nbytes;
}

/* The reference library's layout rule: sorted by offsets, the tensors tile
 * the data area exactly, from byte 0 to the end of the file, without
 * overlaps or gaps. So no byte is read twice and none is left unexplained. */
static int check_layout(const st_file *f, const uint8_t *data, size_t data_size, const char *path) {
    if (f->n_tensors == 0) {
        if (data_size) return gf_fail("%s: %zu bytes of tensor data but no tensors in the header", path, data_size);
        return 0;
    }
    const st_tensor **order = gf_malloc(f->n_tensors * sizeof *order);
    for (size_t i = 0; i < f->n_tensors; i++) order[i] = &f->tensors[i];
    qsort(order, f->n_tensors, sizeof *order, by_offsets);
    int rc = 0;
    if (order[0]->data != data)
        rc = gf_fail("%s: tensor %s starts at byte %zu of the data, not 0: bytes 0..%zu belong to no tensor", path,
                     order[0]->name, (size_t)(order[0]->data - data), (size_t)(order[0]->data - data));
    for (size_t i = 1; i < f->n_tensors && rc == 0; i++) {
        const st_tensor *a = order[i - 1], *b = order[i];
        size_t a_end = (size_t)(a->data - data) + a->nbytes, b_begin = (size_t)(b->data - data);
        if (b_begin < a_end)
            rc = gf_fail("%s: tensors %s [%zu, %zu) and %s [%zu, %zu) overlap in the data", path, a->name,
                         a_end - a->nbytes, a_end, b->name, b_begin, b_begin + b->nbytes);
        else if (b_begin > a_end)
            rc = gf_fail("%s: a gap of %zu bytes lies between tensors %s (ends at %zu) and %s (starts at %zu)", path,
                         b_begin - a_end, a->name, a_end, b->name, b_begin);
    }
    const st_tensor *last = order[f->n_tensors - 1];
    size_t end = (size_t)(last->data - data) + last->nbytes;
    if (rc == 0 && end != data_size)
        rc = gf_fail("%s: %zu bytes after the last tensor (%s, ends at %zu) belong to no tensor", path,
                     data_size - end, last->name, end);
    free(order);
    return rc;
}

int st_open(st_file *f, const char *path) {
    memset(f, 0, sizeof *f);
    if (mapped_file_open(&f->mf, path) != 0) return -1;
    const size_t size = f->mf.size;
    cJSON *root = NULL;
    if (size < 8) {
        gf_fail("%s: truncated safetensors file (%zu bytes; the header length alone needs 8)", path, size);
        goto fail;
    }
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | f->mf.data[i];
    if (hlen == 0) {
        gf_fail("%s: safetensors header length is 0", path);
        goto fail;
    }
    if (hlen > size - 8) {
        gf_fail("%s: safetensors header length %llu exceeds file size %zu", path, (unsigned long long)hlen, size);
        goto fail;
    }
    if (hlen > ST_MAX_HEADER) {
        gf_fail("%s: safetensors header of %llu bytes exceeds the format's limit of %u", path,
                (unsigned long long)hlen, ST_MAX_HEADER);
        goto fail;
    }
    const char *hdr = (const char *)f->mf.data + 8;
    const char *end = NULL;
    if (hdr[0] != '{') {
        gf_fail("%s: safetensors header is not a JSON object (it must start with '{')", path);
        goto fail;
    }
    if (!valid_utf8(hdr, (size_t)hlen)) {
        gf_fail("%s: safetensors header is not valid UTF-8", path);
        goto fail;
    }
    root = cJSON_ParseWithLengthOpts(hdr, (size_t)hlen, &end, 0);
    if (!root || !cJSON_IsObject(root)) {
        gf_fail("%s: safetensors header is not a JSON object", path);
        goto fail;
    }
    /* JSON whitespace may pad the header (graft pads with spaces); NULs may not */
    for (const char *p = end; p < hdr + hlen; p++)
        if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
            gf_fail("%s: safetensors header has bytes after its JSON object", path);
            goto fail;
        }
    const uint8_t *data = f->mf.data + 8 + hlen;
    const size_t data_size = size - 8 - (size_t)hlen;
    size_t count = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, root) count++;
    f->tensors = gf_calloc(count ? count : 1, sizeof *f->tensors);
    strmap_init(&f->by_name, count * 2 + 8);
    cJSON_ArrayForEach(item, root) {
        if (strcmp(item->string, "__metadata__") == 0) continue;
        size_t nlen = strlen(item->string);
        if (strmap_get(&f->by_name, item->string, nlen) >= 0) {
            gf_fail("%s: tensor %s appears twice in the header", path, item->string);
            goto fail;
        }
        st_tensor *t = &f->tensors[f->n_tensors];
        memset(t, 0, sizeof *t);
        t->name = gf_strdup(item->string);
        t->file = f->mf.path;
        f->n_tensors++;
        if (parse_tensor(t, item, data, data_size, path) != 0) goto fail;
        strmap_put(&f->by_name, t->name, nlen, (int)(f->n_tensors - 1));
    }
    if (check_layout(f, data, data_size, path) != 0) goto fail;
    cJSON_Delete(root);
    return 0;
fail:
    cJSON_Delete(root);
    st_close(f);
    return -1;
}

void st_close(st_file *f) {
    for (size_t i = 0; i < f->n_tensors; i++) free(f->tensors[i].name);
    free(f->tensors);
    if (f->by_name.slots || f->by_name.entries) strmap_free(&f->by_name);
    mapped_file_close(&f->mf);
    memset(f, 0, sizeof *f);
}

const st_tensor *st_find(const st_file *f, const char *name) {
    if (!f->tensors) return NULL;
    int i = strmap_get(&f->by_name, name, strlen(name));
    return i < 0 ? NULL : &f->tensors[i];
}

int st_read_f32(const st_tensor *t, float *dst, size_t n) {
    if (n != t->n_elems)
        return gf_fail("%s: tensor %s holds %zu values, %zu were asked for", t->file, t->name, t->n_elems, n);
    return st_read_f32_range(t, 0, dst, n);
}

int st_read_f32_range(const st_tensor *t, size_t off, float *dst, size_t n) {
    if (off > t->n_elems || n > t->n_elems - off)
        return gf_fail("%s: tensor %s holds %zu values, [%zu, %zu) were asked for", t->file, t->name, t->n_elems,
                       off, off + n);
    const uint8_t *src = t->data + off * st_dtype_size(t->dtype);
    switch (t->dtype) {
    case ST_F32:
        if (n) memcpy(dst, src, n * sizeof(float));
        break;
    case ST_BF16:
#pragma omp parallel for schedule(static) if (n > (1u << 20))
        for (size_t i = 0; i < n; i++) {
            uint16_t b;
            memcpy(&b, src + 2 * i, 2);
            dst[i] = st_bf16_to_f32(b);
        }
        break;
    case ST_F16:
#pragma omp parallel for schedule(static) if (n > (1u << 20))
        for (size_t i = 0; i < n; i++) {
            uint16_t h;
            memcpy(&h, src + 2 * i, 2);
            dst[i] = st_f16_to_f32(h);
        }
        break;
    }
    return 0;
}

/* ---- a folder's set of files ------------------------------------------- */

static void set_add_file(st_set *s, st_file *f) {
    s->files = gf_realloc(s->files, (size_t)(s->n_files + 1) * sizeof *s->files);
    s->files[s->n_files++] = *f;
}

static int open_index(st_set *s, const char *dir, const char *index_path) {
    size_t len;
    char *text = read_text_file(index_path, &len);
    if (!text) return -1;
    cJSON *root = cJSON_ParseWithLength(text, len);
    free(text);
    int rc = -1;
    strmap shard_ids;
    strmap_init(&shard_ids, 16);
    const cJSON *map = root ? cJSON_GetObjectItemCaseSensitive(root, "weight_map") : NULL;
    if (!root || !cJSON_IsObject(root)) {
        gf_fail("%s: not a JSON object", index_path);
        goto done;
    }
    if (!cJSON_IsObject(map)) {
        gf_fail("%s: no \"weight_map\" object", index_path);
        goto done;
    }
    s->sharded = 1;
    strmap_init(&s->where, 1024);
    const cJSON *e;
    cJSON_ArrayForEach(e, map) {
        if (!cJSON_IsString(e)) {
            gf_fail("%s: weight_map entry %s is not a file name", index_path, e->string);
            goto done;
        }
        const char *shard = e->valuestring;
        size_t slen = strlen(shard);
        int id = strmap_get(&shard_ids, shard, slen);
        if (id < 0) {
            if (slen == 0 || shard[0] == '/' || strstr(shard, "..")) {
                gf_fail("%s: shard name '%s' must be a plain file name in the folder", index_path, shard);
                goto done;
            }
            char path[PATH_MAX];
            if (snprintf(path, sizeof path, "%s/%s", dir, shard) >= (int)sizeof path) {
                gf_fail("%s: shard path too long", index_path);
                goto done;
            }
            if (!path_is_file(path)) {
                gf_fail("%s: shard %s named in model.safetensors.index.json is missing", dir, shard);
                goto done;
            }
            st_file f;
            if (st_open(&f, path) != 0) goto done;
            set_add_file(s, &f);
            id = s->n_files - 1;
            strmap_put(&shard_ids, shard, slen, id);
        }
        if (!st_find(&s->files[id], e->string)) {
            gf_fail("%s: index places %s in %s, but that shard does not hold it", dir, e->string, shard);
            goto done;
        }
        strmap_put(&s->where, e->string, strlen(e->string), id);
    }
    if (s->n_files == 0) {
        gf_fail("%s: weight_map is empty", index_path);
        goto done;
    }
    rc = 0;
done:
    strmap_free(&shard_ids);
    cJSON_Delete(root);
    return rc;
}

int st_set_open(st_set *s, const char *dir) {
    memset(s, 0, sizeof *s);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
    if (path_is_file(path)) {
        if (open_index(s, dir, path) != 0) {
            st_set_close(s);
            return -1;
        }
        return 0;
    }
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    if (!path_is_file(path)) {
        /* a folder with exactly one *.safetensors file uses it */
        DIR *d = opendir(dir);
        if (!d) return gf_fail("%s: cannot open the folder (%s)", dir, strerror(errno));
        int found = 0;
        struct dirent *e;
        while ((e = readdir(d))) {
            size_t n = strlen(e->d_name);
            if (n > 12 && strcmp(e->d_name + n - 12, ".safetensors") == 0) {
                if (found++ == 0) snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            }
        }
        closedir(d);
        if (found == 0) return gf_fail("%s: no model.safetensors or model.safetensors.index.json", dir);
        if (found > 1) return gf_fail("%s: %d .safetensors files but no model.safetensors.index.json", dir, found);
    }
    st_file f;
    if (st_open(&f, path) != 0) return -1;
    set_add_file(s, &f);
    return 0;
}

void st_set_close(st_set *s) {
    for (int i = 0; i < s->n_files; i++) st_close(&s->files[i]);
    free(s->files);
    if (s->sharded) strmap_free(&s->where);
    memset(s, 0, sizeof *s);
}

const st_tensor *st_set_find(const st_set *s, const char *name) {
    if (s->sharded) {
        int id = strmap_get(&s->where, name, strlen(name));
        return id < 0 ? NULL : st_find(&s->files[id], name);
    }
    return s->n_files ? st_find(&s->files[0], name) : NULL;
}
