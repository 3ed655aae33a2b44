#include "calibrate/capture.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "model/forward.h"

typedef struct {
    teacher_capture *c;
    int seq;
} capture_ud;

static void on_attention(void *ud, int layer, int T, const float *xn, const float *heads, const float *attn_out) {
    capture_ud *u = ud;
    teacher_capture *c = u->c;
    size_t row = (size_t)u->seq * c->T;
    const size_t D = c->D, hq = (size_t)c->H * c->hd;
    memcpy(capture_xn(c, layer) + row * D, xn, (size_t)T * D * sizeof(float));
    memcpy(capture_attn_out(c, layer) + row * D, attn_out, (size_t)T * D * sizeof(float));
    if (c->heads) memcpy(capture_heads(c, layer) + row * hq, heads, (size_t)T * hq * sizeof(float));
}

int teacher_capture_run(teacher_capture *c, const model *m, const int *seqs, int n_seqs, int T, int with_heads,
                        const progress_sink *progress) {
    memset(c, 0, sizeof *c);
    const model_config *k = &m->cfg;
    c->L = k->n_layers;
    c->D = k->dim;
    c->H = k->n_heads;
    c->hd = k->head_dim;
    c->n_seqs = n_seqs;
    c->T = T;
    const size_t N = (size_t)n_seqs * T;
    c->xn = gf_malloc((size_t)c->L * N * c->D * sizeof(float));
    c->attn_out = gf_malloc((size_t)c->L * N * c->D * sizeof(float));
    if (with_heads) c->heads = gf_malloc((size_t)c->L * N * c->H * c->hd * sizeof(float));
    attn_stats_init(&c->stats, c->L, c->H);
    forward_ctx fc;
    if (forward_ctx_init(&fc, m, T) != 0) {
        teacher_capture_free(c);
        return -1;
    }
    fc.cancel = progress ? progress->cancel : NULL;
    capture_ud ud = {c, 0};
    forward_hooks hooks = {on_attention, &ud};
    int rc = 0;
    for (int s = 0; s < n_seqs && rc == 0; s++) {
        if (progress_cancelled(progress)) {
            rc = gf_fail("cancelled");
            break;
        }
        progress_report(progress, "teacher pass", s, n_seqs);
        ud.seq = s;
        rc = model_forward(&fc, seqs + (size_t)s * T, T, 0, &c->stats, &hooks);
    }
    forward_ctx_free(&fc);
    if (rc != 0) {
        teacher_capture_free(c);
        return -1;
    }
    progress_report(progress, "teacher pass", n_seqs, n_seqs);
    return 0;
}

void teacher_capture_free(teacher_capture *c) {
    free(c->xn);
    free(c->heads);
    free(c->attn_out);
    attn_stats_free(&c->stats);
    memset(c, 0, sizeof *c);
}
