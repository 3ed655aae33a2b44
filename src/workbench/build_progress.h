/* Progress of building a student (Stage 1 layer by layer, then Stage 2 on
 * every layer in parallel) inside a workbench job. Stage 2 trains layers on
 * several threads and the engine's own "align" report follows one of them,
 * so the steps are counted here, over every layer, through the Stage 2
 * observer. Cancel is the job's flag. */
#ifndef GRAFT_WORKBENCH_BUILD_PROGRESS_H
#define GRAFT_WORKBENCH_BUILD_PROGRESS_H

#include <stdatomic.h>

#include "align/stage2.h"
#include "jobs/job.h"

typedef struct build_progress build_progress;
struct build_progress {
    job_ctx *ctx;
    /* NULL: Stage 1 / Stage 2 progress goes to the job's phases "stage 1" and
     * "align", other engine reports under their own labels. Else everything
     * goes to this phase as the build's share [base, base + s1 + s2) of total. */
    const char *phase;
    double base, s1, s2, total;
    atomic_long steps_done;
    long steps_total;        /* every layer's steps (steps + 1 evaluations each) */
    /* called for every Stage 2 step (any thread), may be NULL */
    void (*on_step)(build_progress *b, int layer, int step, double loss, double heldout);
    void *user;
};

/* Counts layers x (steps + 1) Stage 2 evaluations. */
void build_progress_init(build_progress *b, job_ctx *ctx, int layers, int steps);
progress_sink build_progress_sink(build_progress *b);
stage2_observer build_progress_observer(build_progress *b);

#endif
