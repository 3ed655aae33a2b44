#include "jobs/eta.h"

#include <math.h>

void eta_reset(eta_smoother *e) { *e = (eta_smoother){0}; }

/* The rate over the last stretch of the job: fraction gained per second from the oldest
 * sample kept (samples at least ETA_SAMPLE_S apart, the last ETA_WINDOW of them) to the last
 * time the fraction moved (a quiet spell is the caller's to count). 0: unknown. */
static double recent_rate(const eta_smoother *e) {
    if (e->n == 0) return 0;
    const int oldest = e->n < ETA_WINDOW ? 0 : e->head;
    const double dt = e->t_moved - e->st[oldest], df = e->f - e->sf[oldest];
    return dt >= ETA_SAMPLE_S && df > 0 ? df / dt : 0;
}

static void add_sample(eta_smoother *e, double t, double fraction) {
    if (e->n > 0) {
        const int last = (e->head + ETA_WINDOW - 1) % ETA_WINDOW;
        if (t - e->st[last] < ETA_SAMPLE_S) return;
    }
    e->st[e->head] = t, e->sf[e->head] = fraction;
    e->head = (e->head + 1) % ETA_WINDOW;
    if (e->n < ETA_WINDOW) e->n++;
}

double eta_update(eta_smoother *e, double t, double fraction) {
    if (!isfinite(t) || !isfinite(fraction)) return e->have ? e->shown : -1;
    if (fraction >= 1) {
        e->have = true, e->shown = 0, e->t = t;
        return 0;
    }
    /* progress seen: when the fraction last moved (a long quiet phase makes the estimate grow) */
    if (fraction > e->f) e->f = fraction, e->t_moved = t;
    /* two measured rates: the whole job's average so far, and the last stretch's (a phase that
     * runs slower or faster than the earlier ones shows there first); the slower one counts */
    double raw = -1;
    const bool have_avg = fraction >= ETA_MIN_FRACTION && t > 0;
    const double avg = have_avg ? fraction / t : 0;
    const double rec = recent_rate(e);
    add_sample(e, t, fraction);
    double rate = avg > 0 && rec > 0 ? fmin(avg, rec) : rec > 0 && t >= ETA_MIN_TIME_S ? rec : avg;
    if (rate > 0) {
        raw = (1 - fraction) / rate;
        /* no progress for a while: at least as long again as the quiet so far is still to come */
        const double quiet = t - e->t_moved;
        if (quiet > raw) raw = quiet;
    }
    if (!e->have) {
        if (raw < 0) return -1;
        e->have = true, e->shown = raw, e->t = t;
        return raw;
    }
    const double dt = t - e->t;
    if (dt <= 0) return e->shown;
    e->t = t;
    double next = e->shown - dt; /* the countdown */
    if (raw >= 0) next += (1 - exp(-dt / ETA_TAU_S)) * (raw - next); /* steered toward the estimate */
    /* count down only, unless the estimate is clearly longer than what is shown: then it rises,
     * smoothly, instead of sitting at a number (or at 0) the job is not keeping to */
    const bool clearly_longer = raw > e->shown * (1 + ETA_RISE_REL) + ETA_RISE_ABS_S;
    if (next > e->shown && !clearly_longer) next = e->shown;
    if (next < 0) next = 0;
    e->shown = next;
    return next;
}
