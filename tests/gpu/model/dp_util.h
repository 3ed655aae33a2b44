/* Shared by the GPU programs that need a model without a checkpoint
 * (test_comm_nccl.c, bench_dp.c, bench_cuda_model.c): a model with
 * deterministic random weights (the same on every rank), its hybrid student
 * (odd layers Gated DeltaNet, METHOD.md section 3's random init), and
 * synthetic training windows. */
#ifndef GRAFT_TESTS_GPU_DP_UTIL_H
#define GRAFT_TESTS_GPU_DP_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "data/train_data.h"
#include "formats/hf_config.h"
#include "model/model.h"
#include "model/transformer.h"
#include "convert/build.h"

/* Weights from one xorshift stream: norms 1, the rest uniform in [-0.02, 0.02]. */
static inline int dp_random_model(model *m, const model_config *c, gf_backend *be) {
    memset(m, 0, sizeof *m);
    m->cfg = *c;
    m->be = be;
    if (model_alloc_params(m) != 0) return -1;
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < m->layout.n; i++) {
        const param_entry *e = &m->layout.t[i];
        float *x = malloc(e->n * sizeof *x);
        if (!x) return gf_fail("out of host memory");
        const bool norm = e->kind == TK_ATTN_NORM || e->kind == TK_FFN_NORM || e->kind == TK_FINAL_NORM ||
                          e->kind == TK_QNORM || e->kind == TK_KNORM;
        for (size_t j = 0; j < e->n; j++) {
            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
            x[j] = norm ? 1.0f : ((float)(s >> 40) / 16777216.0f - 0.5f) * 0.04f;
        }
        const int rc = model_put(m, e->layer, e->kind, x);
        free(x);
        if (rc != 0) return -1;
    }
    return be_sync(be);
}

/* c from ../shared/configs/NAME.json (GRAFT_SHARED). */
static inline int dp_load_config(model_config *c, const char *name) {
    const char *shared = getenv("GRAFT_SHARED");
    char path[4096];
    snprintf(path, sizeof path, "%s/configs/%s.json", shared && *shared ? shared : "../shared", name);
    return hf_config_load(c, path);
}

/* The trainable student that keeps attention in every `keep_every`-th layer (0, k, 2k, ...)
 * and runs the others as GDN (random init), the rest copies of m's: 2 is the 50 % hybrid, 4 the 25 % one. */
static inline int dp_hybrid_student_every(transformer *st, model *m, int keep_every, int *n_gdn) {
    const int L = m->cfg.n_layers;
    bool *conv = calloc((size_t)L, sizeof *conv);
    mixer_kind *kinds = calloc((size_t)L, sizeof *kinds);
    if (!conv || !kinds) {
        free(conv), free(kinds);
        return gf_fail("out of host memory");
    }
    *n_gdn = 0;
    for (int l = 0; l < L; l++) {
        conv[l] = l % keep_every != 0;
        kinds[l] = conv[l] ? MIX_GDN : MIX_ATTN;
        *n_gdn += conv[l];
    }
    student s = {0};
    student_settings set;
    student_settings_default(&set);
    set.init = INIT_RANDOM;
    int rc = student_init_empty(&s, m, &set);
    if (rc == 0) rc = student_build_layers(&s, conv, NULL, NULL, NULL);
    if (rc == 0) rc = tf_trainable(st, m, &s.gcfg, kinds, s.gdn);
    student_free(&s);
    free(conv), free(kinds);
    return rc;
}

/* The 50 % hybrid: odd layers GDN. */
static inline int dp_hybrid_student(transformer *st, model *m, int *n_gdn) { return dp_hybrid_student_every(st, m, 2, n_gdn); }

/* n_train windows of T tokens (and one held-out), a fixed pattern over the vocabulary. */
static inline int dp_synthetic_data(train_data *d, int n_train, int T, int V) {
    memset(d, 0, sizeof *d);
    d->ctx = T, d->n_train = n_train, d->n_eval = 2, d->perm_epoch = -1, d->seed = 1;
    d->train = malloc((size_t)n_train * T * sizeof(int));
    d->eval = malloc((size_t)d->n_eval * T * sizeof(int));
    d->perm = malloc((size_t)n_train * sizeof(int));
    if (!d->train || !d->eval || !d->perm) return gf_fail("out of host memory");
    for (size_t i = 0; i < (size_t)n_train * T; i++) d->train[i] = (int)((i * 131 + i / T * 17 + 7) % (size_t)V);
    for (size_t i = 0; i < (size_t)d->n_eval * T; i++) d->eval[i] = (int)((i * 17 + 3) % (size_t)V);
    return 0;
}

#endif
