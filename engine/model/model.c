#include "model/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

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
