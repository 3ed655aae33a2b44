/* Benchmarks: models of a given shape with synthetic weights (uniform in
 * [-scale, scale), RMSNorm weights 1), on the default backend. */
#ifndef GRAFT_BENCH_MODEL_H
#define GRAFT_BENCH_MODEL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"

static inline void bench_fill(float *p, size_t n, float scale, uint64_t *s) {
    for (size_t i = 0; i < n; i++) {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        p[i] = ((float)(*s >> 40) / 16777216.0f - 0.5f) * 2 * scale;
    }
}

/* 0, or -1 (out of memory: the message is in gf_last_error()). */
static inline int bench_model_random(model *m, const model_config *c, float scale) {
    memset(m, 0, sizeof *m);
    m->cfg = *c;
    m->be = be_default();
    if (model_alloc_params(m) != 0) return -1;
    uint64_t s = 88172645463325252ULL;
    for (int i = 0; i < m->layout.n; i++) {
        const param_entry *e = &m->layout.t[i];
        float *x = malloc(e->n * sizeof *x);
        if (!x) return -1;
        const bool norm = e->kind == TK_ATTN_NORM || e->kind == TK_FFN_NORM || e->kind == TK_FINAL_NORM;
        if (norm)
            for (size_t j = 0; j < e->n; j++) x[j] = 1.0f;
        else
            bench_fill(x, e->n, scale, &s);
        model_put(m, e->layer, e->kind, x);
        free(x);
    }
    return 0;
}

#endif
