/* Seconds on the monotonic clock (CLOCK_MONOTONIC): for rates, ETAs, frame
 * pacing and benchmarks; never wall-clock time. */
#ifndef GRAFT_CORE_CLOCK_H
#define GRAFT_CORE_CLOCK_H

#include <time.h>

static inline double clock_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
