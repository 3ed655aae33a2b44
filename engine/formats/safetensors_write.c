#include "formats/safetensors_write.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/atomic_file.h"
#include "core/error.h"

void st_writer_init(st_writer *w) { memset(w, 0, sizeof *w); }

void st_writer_add(st_writer *w, const char *name, const float *data, int ndim, const int64_t *shape) {
    GF_ASSERT(ndim >= 1 && ndim <= 4);
    if (w->n == w->cap) {
        w->cap = w->cap ? 2 * w->cap : 64;
        w->t = gf_realloc(w->t, w->cap * sizeof *w->t);
    }
    st_out_tensor *t = &w->t[w->n++];
    t->name = gf_strdup(name);
    t->ndim = ndim;
    t->n = 1;
    for (int i = 0; i < ndim; i++) {
        t->shape[i] = shape[i];
        t->n *= (size_t)shape[i];
    }
    t->data = data;
}

void st_writer_free(st_writer *w) {
    for (size_t i = 0; i < w->n; i++) free(w->t[i].name);
    free(w->t);
    memset(w, 0, sizeof *w);
}

static char *header_json(const st_writer *w, const char *const *metadata) {
    cJSON *root = cJSON_CreateObject();
    if (metadata && metadata[0]) {
        cJSON *md = cJSON_AddObjectToObject(root, "__metadata__");
        for (int i = 0; metadata[i] && metadata[i + 1]; i += 2) cJSON_AddStringToObject(md, metadata[i], metadata[i + 1]);
    }
    size_t off = 0;
    for (size_t i = 0; i < w->n; i++) {
        const st_out_tensor *t = &w->t[i];
        cJSON *o = cJSON_AddObjectToObject(root, t->name);
        cJSON_AddStringToObject(o, "dtype", "F32");
        cJSON *sh = cJSON_AddArrayToObject(o, "shape");
        for (int d = 0; d < t->ndim; d++) cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)t->shape[d]));
        cJSON *offs = cJSON_AddArrayToObject(o, "data_offsets");
        cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)off));
        off += t->n * sizeof(float);
        cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)off));
    }
    char *s = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return s;
}

int st_writer_write(const st_writer *w, FILE *f, const char *const *metadata) {
    char *hdr = header_json(w, metadata);
    if (!hdr) return gf_fail("could not build the safetensors header");
    size_t hlen = strlen(hdr), padded = (hlen + 7) / 8 * 8;
    unsigned char len8[8];
    for (int i = 0; i < 8; i++) len8[i] = (unsigned char)((uint64_t)padded >> (8 * i));
    int ok = fwrite(len8, 1, 8, f) == 8 && fwrite(hdr, 1, hlen, f) == hlen;
    for (size_t i = hlen; ok && i < padded; i++) ok = fputc(' ', f) != EOF;
    for (size_t i = 0; ok && i < w->n; i++) ok = fwrite(w->t[i].data, sizeof(float), w->t[i].n, f) == w->t[i].n;
    const int e = errno;
    free(hdr);
    return ok ? 0 : gf_fail("write failed (%s)", strerror(e));
}

int st_writer_save(const st_writer *w, const char *path, const char *const *metadata) {
    atomic_file a;
    if (atomic_file_open(&a, path) != 0) return -1;
    if (st_writer_write(w, a.f, metadata) != 0) {
        atomic_file_discard(&a);
        return gf_fail_prefix(path); /* "PATH: write failed (No space left on device)" */
    }
    return atomic_file_close(&a);
}
