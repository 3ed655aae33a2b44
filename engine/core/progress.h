/* How long engine steps report progress and notice cancellation. Jobs (UI)
 * and the command line both pass one of these; NULL means "don't report". */
#ifndef GRAFT_CORE_PROGRESS_H
#define GRAFT_CORE_PROGRESS_H

#include <stdatomic.h>
#include <stdbool.h>

typedef struct {
    void (*report)(void *ud, const char *what, double done, double total);
    void *ud;
    atomic_int *cancel; /* non-zero: stop at the next step with "cancelled" */
} progress_sink;

static inline void progress_report(const progress_sink *p, const char *what, double done, double total) {
    if (p && p->report) p->report(p->ud, what, done, total);
}

static inline bool progress_cancelled(const progress_sink *p) {
    return p && p->cancel && atomic_load(p->cancel) != 0;
}

#endif
