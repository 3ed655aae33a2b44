/* Teacher-forced negative log-likelihood of a token stream. */
#ifndef GRAFT_EVAL_PERPLEXITY_H
#define GRAFT_EVAL_PERPLEXITY_H

#include "core/progress.h"
#include "model/model.h"
#include "model/transformer.h"

/* ids[0..n): the stream (BOS first when the caller wants it). Windows of at
 * most ctx tokens overlapping by one token, so every token after the first is
 * predicted exactly once; each window starts a fresh context. *count gets
 * n - 1, *nll the total negative log-likelihood in nats. */
int eval_nll(const model *m, const int *ids, size_t n, int ctx, double *nll, long *count,
             const progress_sink *progress);

/* The same for any transformer (a hybrid student). */
int eval_nll_tf(transformer *tf, const int *ids, size_t n, int ctx, double *nll, long *count,
                const progress_sink *progress);

#endif
