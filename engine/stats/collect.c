#include "stats/collect.h"

#include "core/error.h"
#include "model/forward.h"

int collect_attn_stats(const model *m, const int *seqs, int n_seqs, int ctx, attn_stats *stats,
                       const progress_sink *progress) {
    forward_ctx fc;
    if (forward_ctx_init(&fc, m, ctx) != 0) return -1;
    fc.cancel = progress ? progress->cancel : NULL;
    int rc = 0;
    for (int s = 0; s < n_seqs && rc == 0; s++) {
        if (progress_cancelled(progress)) {
            rc = gf_fail("cancelled");
            break;
        }
        progress_report(progress, "stats", s, n_seqs);
        rc = model_forward(&fc, seqs + (size_t)s * ctx, ctx, 0, stats, NULL);
    }
    if (rc == 0) progress_report(progress, "stats", n_seqs, n_seqs);
    forward_ctx_free(&fc);
    return rc;
}
