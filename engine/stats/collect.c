#include "stats/collect.h"

#include <stdlib.h>

#include "core/error.h"
#include "model/transformer.h"

/* Sequences per forward: as many as fit in 4096 rows. */
static int batch_of(int n_seqs, int ctx) {
    int b = 4096 / (ctx > 0 ? ctx : 1);
    if (b < 1) b = 1;
    return b < n_seqs ? b : n_seqs;
}

int collect_attn_stats(const model *m, const int *seqs, int n_seqs, int ctx, attn_stats *stats,
                       const progress_sink *progress) {
    if (n_seqs <= 0) return 0;
    transformer tf;
    if (tf_view(&tf, m, NULL, NULL, NULL) != 0) return -1;
    const int B = batch_of(n_seqs, ctx);
    tf_run *r;
    const tf_run_opts ro = {.B = B, .T = ctx, .stats = true, .logit_rows = 1, .cancel = progress ? progress->cancel : NULL};
    if (tf_run_open(&r, &tf, &ro) != 0) {
        tf_free(&tf);
        return -1;
    }
    int rc = 0;
    for (int s = 0; s < n_seqs && rc == 0; s += B) {
        if (progress_cancelled(progress)) {
            rc = gf_fail("cancelled");
            break;
        }
        progress_report(progress, "stats", s, n_seqs);
        const int b = n_seqs - s < B ? n_seqs - s : B;
        rc = tf_forward(r, seqs + (size_t)s * ctx, b, ctx, 0, NULL);
    }
    if (rc == 0) {
        const size_t n = (size_t)m->cfg.n_layers * m->cfg.n_heads * GF_STAT_COUNT;
        double *sums = gf_malloc(n * sizeof *sums);
        long rows;
        rc = tf_run_stats(r, sums, &rows);
        if (rc == 0) attn_stats_add(stats, sums, rows);
        free(sums);
    }
    if (rc == 0) progress_report(progress, "stats", n_seqs, n_seqs);
    tf_run_close(r);
    tf_free(&tf);
    return rc;
}
