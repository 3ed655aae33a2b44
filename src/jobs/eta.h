/* The time left of a job as the front ends show it, from measured rates: the
 * whole job's weighted fraction over the time since it started (so a quick
 * first phase does not promise a quick job) and the rate of the last stretch
 * (a slow phase shows there first), the slower of the two; a phase that
 * reports nothing for a while makes it grow. Smoothed, and counting down: a
 * job a little slower than shown slows the count; one clearly slower (the
 * estimate more than 25 % + 5 s over what is shown) makes it rise, smoothly,
 * so it is never stuck at a number, or at 0, that the job does not keep to. */
#ifndef GRAFT_JOBS_ETA_H
#define GRAFT_JOBS_ETA_H

#include <stdbool.h>

#define ETA_WINDOW 8          /* samples of the recent rate */
#define ETA_SAMPLE_S 2.0      /* at least this far apart: the recent rate spans up to ~16 s */

typedef struct {
    bool have;      /* a first estimate was made */
    double shown;   /* seconds left, as last shown */
    double t;       /* job time of the last update (seconds since the job started) */
    double f, t_moved;            /* the highest fraction seen, and when it was reached */
    double st[ETA_WINDOW], sf[ETA_WINDOW]; /* ring of (time, fraction) samples */
    int head, n;
} eta_smoother;

#define ETA_TAU_S 4.0         /* smoothing time constant */
#define ETA_MIN_FRACTION 0.02 /* the whole-job average needs 2 % of the job ... */
#define ETA_MIN_TIME_S 10.0   /* ... else the recent rate alone, after 10 s (a long job's first 2 %) */
#define ETA_RISE_REL 0.25     /* the estimate must exceed what is shown by 25 % ... */
#define ETA_RISE_ABS_S 5.0    /* ... and 5 s before the shown time rises */

void eta_reset(eta_smoother *e);
/* t: seconds since the job started; fraction: of the whole job, in [0, 1].
 * Returns the seconds left to show, or -1 while unknown. Call on every
 * progress event and on clock ticks (same fraction, later t). */
double eta_update(eta_smoother *e, double t, double fraction);

#endif
