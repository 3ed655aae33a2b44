#include "calibrate/capture.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "model/transformer.h"

typedef struct {
    teacher_capture *c;
    gf_backend *be;
    size_t row0; /* first row of this batch */
} capture_ud;

/* Downloads layer l's tensors of the current batch into the host capture. */
static int on_attention(void *ud, int layer, gf_buf xn, gf_buf heads, gf_buf out, int N) {
    capture_ud *u = ud;
    teacher_capture *c = u->c;
    const size_t D = c->D, hq = (size_t)c->H * c->hd;
    if (be_download(u->be, capture_xn(c, layer) + u->row0 * D, GF_F32, xn, (size_t)N * D) != 0 ||
        be_download(u->be, capture_attn_out(c, layer) + u->row0 * D, GF_F32, out, (size_t)N * D) != 0)
        return -1;
    if (c->heads && be_download(u->be, capture_heads(c, layer) + u->row0 * hq, GF_F32, heads, (size_t)N * hq) != 0)
        return -1;
    return 0;
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
    attn_stats_init(&c->stats, c->L, c->H);
    if (!(c->xn = gf_try_malloc((size_t)c->L * N * c->D * sizeof(float), "the teacher capture")) ||
        !(c->attn_out = gf_try_malloc((size_t)c->L * N * c->D * sizeof(float), "the teacher capture")) ||
        (with_heads && !(c->heads = gf_try_malloc((size_t)c->L * N * c->H * c->hd * sizeof(float), "the teacher capture")))) {
        teacher_capture_free(c);
        return -1;
    }
    transformer tf;
    tf_run *r = NULL;
    int B = 4096 / (T > 0 ? T : 1);
    if (B < 1) B = 1;
    if (B > n_seqs) B = n_seqs > 0 ? n_seqs : 1;
    const tf_run_opts ro = {.B = B, .T = T, .stats = true, .logit_rows = 1, .cancel = progress ? progress->cancel : NULL};
    if (tf_view(&tf, m, NULL, NULL, NULL) != 0) {
        teacher_capture_free(c);
        return -1;
    }
    if (tf_run_open(&r, &tf, &ro) != 0) {
        tf_free(&tf);
        teacher_capture_free(c);
        return -1;
    }
    capture_ud ud = {c, m->be, 0};
    tf_hooks hooks = {on_attention, &ud, NULL, NULL};
    int rc = 0;
    for (int s = 0; s < n_seqs && rc == 0; s += B) {
        if (progress_cancelled(progress)) {
            rc = gf_fail("cancelled");
            break;
        }
        progress_report(progress, "teacher pass", s, n_seqs);
        const int b = n_seqs - s < B ? n_seqs - s : B;
        ud.row0 = (size_t)s * T;
        rc = tf_forward(r, seqs + (size_t)s * T, b, T, 0, &hooks);
    }
    if (rc == 0) {
        const size_t n = (size_t)c->L * c->H * GF_STAT_COUNT;
        double *sums = gf_malloc(n * sizeof *sums);
        long rows;
        rc = tf_run_stats(r, sums, &rows);
        if (rc == 0) attn_stats_add(&c->stats, sums, rows);
        free(sums);
    }
    tf_run_close(r);
    tf_free(&tf);
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
