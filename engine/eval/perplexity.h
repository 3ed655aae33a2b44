/* Teacher-forced negative log-likelihood of a token stream. */
#ifndef GRAFT_EVAL_PERPLEXITY_H
#define GRAFT_EVAL_PERPLEXITY_H

#include "core/progress.h"
#include "model/forward.h"
#include "model/model.h"

/* ids[0..n): the stream (BOS first when the caller wants it). Windows of at
 * most ctx tokens overlapping by one token, so every token after the first is
 * predicted exactly once; each window starts a fresh context. *count gets
 * n - 1, *nll the total negative log-likelihood in nats. */
int eval_nll(const model *m, const int *ids, size_t n, int ctx, double *nll, long *count,
             const progress_sink *progress);

/* The same with per-layer mixers (a hybrid student; see forward_ctx.mixers);
 * mixers may be NULL. */
int eval_nll_mixed(const model *m, const layer_mixer *mixers, const int *ids, size_t n, int ctx, double *nll,
                   long *count, const progress_sink *progress);

/* log-sum-exp of a row minus the target's logit, in double. */
double nll_of_row(const float *logits, int V, int target);

#endif
