#include "jobs/eta.h"

#include <math.h>

void eta_reset(eta_smoother *e) { *e = (eta_smoother){0}; }

double eta_update(eta_smoother *e, double t, double fraction) {
    if (!isfinite(t) || !isfinite(fraction)) return e->have ? e->shown : -1;
    if (fraction >= 1) {
        e->have = true, e->shown = 0, e->t = t;
        return 0;
    }
    /* the whole job's average rate so far: time per fraction */
    const bool known = fraction >= ETA_MIN_FRACTION && t > 0;
    const double raw = known ? t * (1 - fraction) / fraction : -1;
    if (!e->have) {
        if (!known) return -1;
        e->have = true, e->shown = raw, e->t = t;
        return raw;
    }
    const double dt = t - e->t;
    if (dt <= 0) return e->shown;
    e->t = t;
    double next = e->shown - dt; /* the countdown */
    if (known) next += (1 - exp(-dt / ETA_TAU_S)) * (raw - next); /* steered toward the estimate */
    if (next > e->shown) next = e->shown; /* never back up */
    if (next < 0) next = 0;
    e->shown = next;
    return next;
}
