#include "eval/perplexity.h"

#include <stdlib.h>

#include "backend/comm.h"
#include "core/error.h"

int eval_nll(const model *m, const int *ids, size_t n, int ctx, double *nll, long *count,
             const progress_sink *progress) {
    transformer tf;
    if (tf_view(&tf, m, NULL, NULL, NULL) != 0) return -1;
    int rc = eval_nll_tf(&tf, ids, n, ctx, nll, count, progress);
    tf_free(&tf);
    return rc;
}

int eval_nll_tf(transformer *tf, const int *ids, size_t n, int ctx, double *nll, long *count,
                const progress_sink *progress) {
    *nll = 0;
    *count = 0;
    if (n < 2) return gf_fail("the text has %zu tokens; perplexity needs at least 2", n);
    if (ctx < 2) return gf_fail("--ctx must be at least 2, got %d", ctx);
    gf_backend *be = tf->be;
    const int V = tf->cfg.vocab_size;
    const int T_cap = (size_t)ctx < n ? ctx : (int)n;
    tf_run *r;
    const tf_run_opts ro = {.B = 1, .T = T_cap, .cancel = progress ? progress->cancel : NULL};
    if (tf_run_open(&r, tf, &ro) != 0) return -1;
    int rows;
    const gf_buf logits = tf_run_logits(r, &rows);
    gf_buf targets = gf_none(), loss = gf_none();
    int *tg = malloc((size_t)rows * sizeof *tg);
    int rc = 0;
    if (!tg || be_alloc(be, &targets, (size_t)rows, GF_I32) != 0 || be_alloc(be, &loss, 1, GF_F64) != 0) {
        rc = tg ? -1 : gf_fail("out of memory");
        goto done;
    }
    be_zero(be, loss, 1);
    /* windows start every ctx - 1 tokens; in a job of several ranks each rank
     * scores its contiguous share of them and the sums are added over ranks */
    gf_comm *comm = be_comm(be);
    const long n_windows = (long)((n - 2) / (size_t)(ctx - 1)) + 1;
    long w_lo = 0, w_hi = n_windows;
    comm_share(comm, n_windows, &w_lo, &w_hi);
    const size_t s_end = w_hi < n_windows ? (size_t)w_hi * (size_t)(ctx - 1) : n;
    for (size_t s = (size_t)w_lo * (size_t)(ctx - 1); s + 1 < n && s < s_end;) {
        if (progress_cancelled(progress)) {
            rc = gf_fail("cancelled");
            break;
        }
        progress_report(progress, "ppl", (double)s, (double)n);
        size_t end = s + (size_t)ctx < n ? s + (size_t)ctx : n;
        int T = (int)(end - s);
        if ((rc = tf_forward(r, ids + s, 1, T, 0, NULL)) != 0) break;
        /* row t predicts ids[s + t + 1] */
        for (int r0 = 0; r0 < T - 1 && rc == 0; r0 += rows) {
            if (progress_cancelled(progress)) { /* the LM head of a wide vocabulary is a long step */
                rc = gf_fail("cancelled");
                break;
            }
            int nr = T - 1 - r0 < rows ? T - 1 - r0 : rows;
            for (int i = 0; i < nr; i++) tg[i] = ids[s + (size_t)r0 + (size_t)i + 1];
            be_upload(be, targets, tg, GF_I32, (size_t)nr);
            tf_logits(r, r0, nr, logits);
            be_cross_entropy(be, loss, gf_none(), logits, targets, nr, V, 1.0f);
        }
        if (rc != 0) break;
        *count += T - 1;
        s = end - 1;
    }
    if (rc == 0 && be_download(be, nll, GF_F64, loss, 1) != 0) rc = -1;
    if (rc == 0) rc = be_sync(be);
    if (rc == 0 && comm) {
        double sums[2] = {*nll, (double)*count};
        if ((rc = comm_allreduce_host(comm, sums, 2, GF_REDUCE_SUM)) == 0) *nll = sums[0], *count = (long)sums[1];
    }
    if (rc == 0) progress_report(progress, "ppl", (double)n, (double)n);
done:
    be_free(be, &targets);
    be_free(be, &loss);
    free(tg);
    tf_run_close(r);
    return rc;
}
