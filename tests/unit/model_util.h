/* Test helpers: a teacher's logits for host tokens, through the transformer;
 * a random model in memory; stories260K from the shared folder. */
#ifndef GRAFT_TESTS_MODEL_UTIL_H
#define GRAFT_TESTS_MODEL_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/model_load.h"
#include "model/transformer.h"

/* out [B*T, V] for tokens [B*T] (B sequences of T); 0 or -1. */
static inline int teacher_logits(const model *m, const int *tok, int B, int T, float *out) {
    transformer tf;
    tf_run *r;
    if (tf_view(&tf, m, NULL, NULL, NULL) != 0) return -1;
    const tf_run_opts o = {.B = B, .T = T, .logit_rows = B * T};
    if (tf_run_open(&r, &tf, &o) != 0) {
        tf_free(&tf);
        return -1;
    }
    int rc = tf_forward(r, tok, B, T, 0, NULL);
    if (rc == 0) {
        tf_logits(r, 0, B * T, tf_run_logits(r, NULL));
        rc = be_download(m->be, out, GF_F32, tf_run_logits(r, NULL), (size_t)B * T * m->cfg.vocab_size);
    }
    tf_run_close(r);
    tf_free(&tf);
    return rc;
}

/* A model of config c in memory (the default backend): every tensor drawn by
 * fill(x, n, kind, ud) on the host, then uploaded. No tokenizer. */
static inline void model_random(model *m, const model_config *c, void (*fill)(float *x, size_t n, tensor_kind k, void *ud),
                                void *ud) {
    memset(m, 0, sizeof *m);
    m->cfg = *c;
    m->be = be_default();
    if (model_alloc_params(m) != 0) abort();
    for (int i = 0; i < m->layout.n; i++) {
        const param_entry *e = &m->layout.t[i];
        float *x = calloc(e->n, sizeof *x);
        fill(x, e->n, e->kind, ud);
        if (model_put(m, e->layer, e->kind, x) != 0) abort();
        free(x);
    }
}

/* stories260K (with its tokenizer) from $GRAFT_SHARED, default ../shared,
 * into m: 1 loaded, 0 not there (the tests that need it skip), -1 when it
 * cannot be loaded. */
static inline int stories_load(model *m) {
    const char *sh = getenv("GRAFT_SHARED");
    char p[4096];
    snprintf(p, sizeof p, "%s/models/tinyllamas/stories260K/stories260K.bin", sh ? sh : "../shared");
    if (access(p, R_OK) != 0) return 0;
    if (model_load(m, p, NULL) != 0) return -1;
    if (!m->tok) {
        model_free(m);
        return -1;
    }
    return 1;
}

#endif
