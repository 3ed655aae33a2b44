#include "eval/perplexity.h"

#include <math.h>
#include <stdlib.h>

#include "core/error.h"
#include "model/forward.h"

double nll_of_row(const float *logits, int V, int target) {
    float m = logits[0];
    for (int i = 1; i < V; i++)
        if (logits[i] > m) m = logits[i];
    double z = 0;
    for (int i = 0; i < V; i++) z += exp((double)logits[i] - m);
    return m + log(z) - logits[target];
}

int eval_nll(const model *m, const int *ids, size_t n, int ctx, double *nll, long *count,
             const progress_sink *progress) {
    return eval_nll_mixed(m, NULL, ids, n, ctx, nll, count, progress);
}

int eval_nll_mixed(const model *m, const layer_mixer *mixers, const int *ids, size_t n, int ctx, double *nll,
                   long *count, const progress_sink *progress) {
    *nll = 0;
    *count = 0;
    if (n < 2) return gf_fail("the text has %zu tokens; perplexity needs at least 2", n);
    if (ctx < 2) return gf_fail("--ctx must be at least 2, got %d", ctx);
    const int V = m->cfg.vocab_size, rows = 32;
    forward_ctx fc;
    if (forward_ctx_init(&fc, m, ctx) != 0) return -1;
    fc.mixers = mixers;
    fc.cancel = progress ? progress->cancel : NULL;
    float *logits = gf_malloc((size_t)rows * V * sizeof *logits);
    int rc = 0;
    double total = 0;
    for (size_t s = 0; s + 1 < n;) {
        if (progress_cancelled(progress)) {
            rc = gf_fail("cancelled");
            break;
        }
        progress_report(progress, "ppl", (double)s, (double)n);
        size_t end = s + (size_t)ctx < n ? s + (size_t)ctx : n;
        int T = (int)(end - s);
        if ((rc = model_forward(&fc, ids + s, T, 0, NULL, NULL)) != 0) break;
        /* row t predicts ids[s + t + 1] */
        for (int r0 = 0; r0 < T - 1 && rc == 0; r0 += rows) {
            if (progress_cancelled(progress)) { /* the LM head of a wide vocabulary is a long step */
                rc = gf_fail("cancelled");
                break;
            }
            int nr = T - 1 - r0 < rows ? T - 1 - r0 : rows;
            model_logits(&fc, r0, nr, logits);
            for (int r = 0; r < nr; r++) total += nll_of_row(logits + (size_t)r * V, V, ids[s + r0 + r + 1]);
        }
        if (rc != 0) break;
        *count += T - 1;
        s = end - 1;
    }
    free(logits);
    forward_ctx_free(&fc);
    *nll = total;
    if (rc == 0) progress_report(progress, "ppl", (double)n, (double)n);
    return rc;
}
