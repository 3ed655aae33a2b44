/* Jobs: a long step (stats, calibrate, align, train ...) run on a worker thread.
 *
 * The job function checks job_cancelled() between steps and reports through
 * job_progress / job_log / job_stat / job_loss / job_scalar. It returns 0
 * (after job_set_result, optionally) or -1 with gf_fail() set (also when it
 * stopped because job_cancelled() said so); the runner then
 * publishes EV_DONE, EV_ERROR (the one-line message) or EV_CANCELLED.
 * At most one job runs at a time; job_start refuses a second one.
 * Only the front-end thread calls the job_runner functions. */
#ifndef GRAFT_JOBS_JOB_H
#define GRAFT_JOBS_JOB_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "jobs/event_queue.h"

typedef struct job_ctx job_ctx;
typedef int (*job_fn)(job_ctx *ctx, void *arg);

typedef struct {
    event_queue events;
    pthread_t thread;
    bool joinable;           /* a thread was started and not yet joined */
    atomic_bool running;     /* cleared by the worker as its last act */
    atomic_bool cancel;
    int next_id;
    char name[32];
    job_ctx *ctx;
} job_runner;

int job_runner_init(job_runner *jr);      /* 0 or -1 (pipe failure) */
void job_runner_free(job_runner *jr);     /* cancels and joins a running job */

/* 0 and the job runs; -1 with "job 'x' is still running" when busy. */
int job_start(job_runner *jr, const char *name, job_fn fn, void *arg);
void job_cancel(job_runner *jr);          /* asks; the job stops at its next check */
bool job_running(job_runner *jr);
const char *job_current_name(job_runner *jr); /* "" when none ran yet */
void job_wait(job_runner *jr);            /* joins the worker (blocks) */

bool job_pop_event(job_runner *jr, event *out);
int job_wake_fd(job_runner *jr);
void job_clear_wake(job_runner *jr);

/* --- called from inside a job function --- */
bool job_cancelled(const job_ctx *ctx);
/* done of total units; rate and eta are derived from the time since start. */
void job_progress(job_ctx *ctx, double done, double total, const char *label);
void job_log(job_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void job_scalar(job_ctx *ctx, const char *name, long step, double value);
void job_stat(job_ctx *ctx, const char *stat, int layer, int head, double value);
void job_loss(job_ctx *ctx, const char *series, long step, double value);
void job_set_result(job_ctx *ctx, void *result);
/* One file of a download (EV_FILE); fields as in event.h, name "" for the whole. */
typedef struct {
    const char *name;
    file_state state;
    long long done, total, all_done, all_total;
    int files_done, files_total;
    double bytes_per_s, eta_s;
} job_file_info;
void job_file(job_ctx *ctx, const job_file_info *f);

#endif
