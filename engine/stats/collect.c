#include "stats/collect.h"

#include <stdlib.h>

#include "backend/comm.h"
#include "core/error.h"
#include "model/transformer.h"

/* Sequences per forward: as many as fit in 4096 rows. */
static int batch_of(int n_seqs, int ctx) {
    int b = 4096 / (ctx > 0 ? ctx : 1);
    if (b < 1) b = 1;
    return b < n_seqs ? b : n_seqs;
}

/* In a job of several ranks (be_comm of the model's backend) each rank runs
 * its contiguous share of the sequences and the sums are added over ranks:
 * the same statistics as one process, up to the order of the additions. */
int collect_attn_stats(const model *m, const int *seqs, int n_seqs, int ctx, attn_stats *stats,
                       const progress_sink *progress) {
    if (n_seqs <= 0) return 0;
    gf_comm *comm = be_comm(m->be);
    long lo = 0, hi = n_seqs;
    comm_share(comm, n_seqs, &lo, &hi);
    seqs += (size_t)lo * ctx;
    const int total = n_seqs;
    n_seqs = (int)(hi - lo);
    transformer tf;
    if (tf_view(&tf, m, NULL, NULL, NULL) != 0) return -1;
    const int B = batch_of(n_seqs > 0 ? n_seqs : 1, ctx);
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
        double *sums = gf_malloc((n + 1) * sizeof *sums); /* the sums, then the row count */
        long rows = 0;
        rc = tf_run_stats(r, sums, &rows);
        sums[n] = (double)rows; /* exact: far below 2^53 */
        if (rc == 0) rc = comm_allreduce_host(comm, sums, n + 1, GF_REDUCE_SUM);
        if (rc == 0) attn_stats_add(stats, sums, (long)sums[n]);
        free(sums);
    }
    if (rc == 0) progress_report(progress, "stats", total, total);
    tf_run_close(r);
    tf_free(&tf);
    return rc;
}
