/* Runs the teacher over sequences and accumulates per-head statistics. */
#ifndef GRAFT_STATS_COLLECT_H
#define GRAFT_STATS_COLLECT_H

#include "core/progress.h"
#include "model/model.h"
#include "stats/attn_stats.h"

/* seqs: n_seqs * ctx token ids. stats must be initialised for the model. */
int collect_attn_stats(const model *m, const int *seqs, int n_seqs, int ctx, attn_stats *stats,
                       const progress_sink *progress);

#endif
