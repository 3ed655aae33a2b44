/* Helpers for unit tests of the workbench state: a job that only waits to be
 * cancelled (its record routes events to the teacher it was started for), and
 * EV_DATA events carrying a wb_event. Header-only, included by test files. */
#ifndef GRAFT_TESTS_WB_TEST_UTIL_H
#define GRAFT_TESTS_WB_TEST_UTIL_H

#include <string.h>
#include <time.h>

#include "core/error.h"
#include "workbench/state.h"
#include "workbench/wb_event.h"

static inline int wbt_idle_job(job_ctx *ctx, void *p) {
    (void)p;
    while (!job_cancelled(ctx)) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return gf_fail("cancelled");
}

/* Starts an idle job named name for owner; returns its id (> 0), or -1. */
static inline int wbt_start(app_state *st, job_runner *jr, const char *name, teacher_state *owner) {
    return app_start_job(st, jr, name, wbt_idle_job, NULL, owner) == 0 ? st->job.id : -1;
}

/* Applies the running job's events until its end (bounded wait: 10 s). */
static inline void wbt_drain(app_state *st, job_runner *jr) {
    event *ev = gf_malloc(sizeof *ev);
    for (time_t t0 = time(NULL); time(NULL) - t0 < 10;) {
        int end = 0;
        while (job_pop_event(jr, ev)) {
            app_apply_event(st, ev);
            end |= event_is_final(ev->kind);
        }
        if (end) break;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    free(ev);
    job_wait(jr);
}

/* Cancels the running job and applies its remaining events (bounded wait). */
static inline void wbt_finish(app_state *st, job_runner *jr) {
    app_cancel_job(st, jr);
    wbt_drain(st, jr);
}

/* Applies one wb_event as if job id had published it; returns what app_apply_event returned. */
static inline bool wbt_apply(app_state *st, int id, const wb_event *w) {
    event *e = gf_calloc(1, sizeof *e);
    e->kind = EV_DATA;
    e->job_id = id;
    e->data_len = sizeof *w;
    memcpy(e->data, w, sizeof *w);
    bool r = app_apply_event(st, e);
    free(e);
    return r;
}

#endif
