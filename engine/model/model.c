#include "model/model.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "formats/loaders.h"

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static char *display_name(const char *path) {
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/') n--;
    size_t start = n;
    while (start > 0 && path[start - 1] != '/') start--;
    char *s = gf_malloc(n - start + 1);
    memcpy(s, path + start, n - start);
    s[n - start] = 0;
    return s;
}

/* A folder without config.json holding exactly one .gguf file (what a Hub
 * download of one GGUF file leaves) is that GGUF teacher. *out stays NULL for
 * anything else; several .gguf files without config.json are an error. */
static int folder_gguf(const char *dir, char **out) {
    *out = NULL;
    char cfg[4096];
    struct stat st;
    if (snprintf(cfg, sizeof cfg, "%s/config.json", dir) >= (int)sizeof cfg) return gf_fail("%s: path too long", dir);
    if (stat(cfg, &st) == 0) return 0;
    DIR *d = opendir(dir);
    if (!d) return 0; /* the HF loader reports it */
    int found = 0;
    char first[256] = "", second[256] = "";
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.' || !ends_with(e->d_name, ".gguf")) continue;
        snprintf(found ? second : first, sizeof first, "%s", e->d_name);
        found++;
    }
    closedir(d);
    if (found > 1)
        return gf_fail("%s: %d .gguf files and no config.json (%s, %s, ...): name the file to load", dir, found, first,
                       second);
    if (found == 1) {
        size_t n = strlen(dir) + strlen(first) + 2;
        *out = gf_malloc(n);
        snprintf(*out, n, "%s/%s", dir, first);
    }
    return 0;
}

int model_alloc_params(model *m) {
    if (!m->be) m->be = be_default();
    if (m->loading && m->loading->on_config && m->loading->on_config(m->loading->ud, &m->cfg, m->be) != 0) return -1;
    if (param_layout_build(&m->layout, &m->cfg, NULL, NULL) != 0) return -1;
    if (be_alloc(m->be, &m->params, m->layout.total, be_act(m->be)) != 0)
        return gf_fail_prefix("the model's parameters");
    be_zero(m->be, m->params, m->layout.total);
    model_views_bind(&m->w, &m->layout, &m->cfg, NULL, m->params);
    return 0;
}

static void *stage_of(model *m, size_t bytes) {
    if (bytes > m->stage_bytes) {
        free(m->stage);
        m->stage_bytes = 0;
        if (!(m->stage = gf_try_malloc(bytes, "the loader's staging buffer"))) return NULL;
        m->stage_bytes = bytes;
    }
    return m->stage;
}

int model_put_chunked(model *m, int layer, tensor_kind k, size_t total, size_t granule, gf_dtype host_t,
                      model_chunk_fn fn, void *ud) {
    const param_entry *e = param_layout_find(&m->layout, layer, k);
    GF_ASSERT(e != NULL && e->n == total && granule > 0 && total % granule == 0);
    GF_ASSERT(host_t == GF_F32 || host_t == GF_BF16);
    const size_t es = gf_dtype_size(host_t);
    const size_t stage = m->loading && m->loading->stage_bytes ? m->loading->stage_bytes : MODEL_STAGE_BYTES;
    size_t chunk = stage / es / granule * granule;
    if (chunk == 0) chunk = granule;
    if (chunk > total) chunk = total;
    void *buf = stage_of(m, (chunk ? chunk : 1) * es);
    if (!buf) return -1;
    for (size_t off = 0; off < total; off += chunk) {
        const size_t n = total - off < chunk ? total - off : chunk;
        /* an upload returns once buf may be reused (a device copies out of pageable memory first) */
        if (fn(ud, off, buf, n) != 0 || be_upload(m->be, gf_at(m->params, e->off + off), buf, host_t, n) != 0)
            return -1;
    }
    return 0;
}

int model_put(model *m, int layer, tensor_kind k, const float *src) {
    const param_entry *e = param_layout_find(&m->layout, layer, k);
    GF_ASSERT(e != NULL);
    return be_upload(m->be, gf_at(m->params, e->off), src, GF_F32, e->n);
}

int model_get(const model *m, int layer, tensor_kind k, float *dst) {
    if (k == TK_LM_HEAD && m->cfg.tied_embeddings) k = TK_EMBED;
    const param_entry *e = param_layout_find(&m->layout, layer, k);
    if (!e) return gf_fail("the model has no tensor %d of layer %d", (int)k, layer);
    return be_download(m->be, dst, GF_F32, gf_at(m->params, e->off), e->n);
}

size_t model_tensor_elems(const model *m, int layer, tensor_kind k) {
    const param_entry *e = param_layout_find(&m->layout, layer, k);
    return e ? e->n : 0;
}

int model_load(model *m, const char *path, const model_load_opts *opts) {
    return model_load_hooked(m, path, opts, NULL);
}

int model_load_hooked(model *m, const char *path, const model_load_opts *opts, const model_load_hooks *hooks) {
    static const model_load_opts none = {0};
    if (!opts) opts = &none;
    memset(m, 0, sizeof *m);
    m->be = opts->be ? opts->be : be_default();
    m->loading = hooks;
    struct stat st;
    if (stat(path, &st) != 0) return gf_fail("%s: no such file or folder", path);
    int rc;
    char *gguf_in_dir = NULL;
    if (S_ISDIR(st.st_mode) && (rc = folder_gguf(path, &gguf_in_dir)) != 0) return rc;
    if (gguf_in_dir)
        rc = load_gguf(m, gguf_in_dir, opts);
    else if (S_ISDIR(st.st_mode))
        rc = load_hf_folder(m, path, opts);
    else if (ends_with(path, ".gguf"))
        rc = load_gguf(m, path, opts);
    else
        rc = load_llama2c(m, path, opts);
    free(gguf_in_dir);
    free(m->stage);
    m->stage = NULL;
    m->stage_bytes = 0;
    m->loading = NULL;
    if (rc != 0) {
        model_free(m);
        return -1;
    }
    m->path = gf_strdup(path);
    m->name = display_name(path);
    return 0;
}

void model_free(model *m) {
    if (m->be) be_free(m->be, &m->params);
    model_views_free(&m->w);
    param_layout_free(&m->layout);
    free(m->stage);
    if (m->tok) tokenizer_free(m->tok);
    free(m->path);
    free(m->name);
    memset(m, 0, sizeof *m);
}
