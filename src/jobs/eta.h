/* The time left of a job as the front ends show it: from the whole job's
 * weighted fraction and the time since it started (so a quick first phase
 * does not promise a quick job), smoothed, and counting down only: when the
 * job turns out slower than shown, the count slows down instead of jumping
 * back up. */
#ifndef GRAFT_JOBS_ETA_H
#define GRAFT_JOBS_ETA_H

#include <stdbool.h>

typedef struct {
    bool have;      /* a first estimate was made */
    double shown;   /* seconds left, as last shown */
    double t;       /* job time of the last update (seconds since the job started) */
} eta_smoother;

#define ETA_TAU_S 4.0      /* smoothing time constant */
#define ETA_MIN_FRACTION 0.02 /* no estimate before 2 % of the job */

void eta_reset(eta_smoother *e);
/* t: seconds since the job started; fraction: of the whole job, in [0, 1].
 * Returns the seconds left to show, or -1 while unknown. Call on every
 * progress event and on clock ticks (same fraction, later t). */
double eta_update(eta_smoother *e, double t, double fraction);

#endif
