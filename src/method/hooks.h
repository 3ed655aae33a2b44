/* What a runner of the method tells its caller while it runs: progress and
 * the cancel flag (engine/core/progress.h: the command line's progress bar,
 * a workbench job's sink), every Stage 2 step, the phases it enters and
 * lines for the log. One struct for every operation; any member may be
 * NULL / zero. */
#ifndef GRAFT_METHOD_HOOKS_H
#define GRAFT_METHOD_HOOKS_H

#include "align/stage2.h"
#include "core/progress.h"

typedef struct {
    progress_sink progress;        /* capture, selection, evaluation; its cancel flag is the run's */
    const progress_sink *build;    /* Stage 1 / Stage 2 (NULL: progress) */
    const stage2_observer *obs;    /* every Stage 2 step */
    void (*phase)(void *ud, const char *name); /* "teacher pass", "stage 1", "align", "teacher ppl", ... */
    void (*log)(void *ud, const char *line);
    void *ud;
} method_hooks;

static inline void method_phase(const method_hooks *h, const char *name) {
    if (h && h->phase) h->phase(h->ud, name);
}

#endif
