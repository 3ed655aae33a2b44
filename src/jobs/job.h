/* Jobs: a long step (stats, calibrate, align, train ...) run on a worker thread.
 *
 * Cancellation has one type: the runner's atomic_int flag, the same one the
 * engine's progress_sink and the Hub client read. A job hands it to every
 * engine call (job_sink, job_cancel_flag), which check it inside their loops,
 * so a cancel is seen within one inner step (a layer of a forward pass, one
 * alignment step), not at the end of a long call.
 *
 * Progress is over the whole job: a job declares its phases with weights
 * (their share of the work, estimated from the sizes involved) and enters
 * them in turn; job_progress reports within the current phase and the event
 * carries the whole job's fraction, which never decreases. A progress report
 * from the engine whose `what` names a later declared phase enters it.
 *
 * The job function returns 0 (after job_set_result, optionally) or -1 with
 * gf_fail() set (also when it stopped because it was cancelled); the runner
 * then publishes EV_DONE, EV_ERROR (the one-line message) or EV_CANCELLED.
 * At most one job runs at a time; job_start refuses a second one.
 * Only the front-end thread calls the job_runner functions. */
#ifndef GRAFT_JOBS_JOB_H
#define GRAFT_JOBS_JOB_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "core/progress.h"
#include "jobs/event_queue.h"

typedef struct job_ctx job_ctx;
typedef int (*job_fn)(job_ctx *ctx, void *arg);

typedef struct {
    event_queue events;
    pthread_t thread;
    bool joinable;           /* a thread was started and not yet joined */
    atomic_bool running;     /* cleared by the worker as its last act */
    atomic_int cancel;       /* the cancel flag (progress_sink.cancel points here) */
    atomic_llong cancel_at_ns; /* monotonic time of the first job_cancel (ns), 0 when none */
    int next_id;
    char name[32];
    job_ctx *ctx;
} job_runner;

int job_runner_init(job_runner *jr);      /* 0 or -1 (pipe failure) */
void job_runner_free(job_runner *jr);     /* cancels and joins a running job */

/* 0 and the job runs (job_current_id names it); -1 with "job 'x' is still running" when busy. */
int job_start(job_runner *jr, const char *name, job_fn fn, void *arg);
void job_cancel(job_runner *jr);          /* asks; the job stops at its next check */
bool job_running(job_runner *jr);
const char *job_current_name(job_runner *jr); /* "" when none ran yet */
int job_current_id(job_runner *jr);       /* the id of the last job started, 0 when none */
void job_wait(job_runner *jr);            /* joins the worker (blocks) */

bool job_pop_event(job_runner *jr, event *out);
int job_wake_fd(job_runner *jr);
void job_clear_wake(job_runner *jr);

/* Monotonic seconds (CLOCK_MONOTONIC), the clock events and cancel times use. */
double job_now(void);

/* --- called from inside a job function (any thread of it) --- */
bool job_cancelled(const job_ctx *ctx);
atomic_int *job_cancel_flag(job_ctx *ctx);
/* A progress sink for engine calls: reports go to job_progress (entering a
 * declared phase named like the report), cancel is the job's flag. */
progress_sink job_sink(job_ctx *ctx);

typedef struct {
    const char *name; /* also matched against engine progress labels */
    double weight;    /* > 0: its share of the job's work (any unit) */
} job_phase;
#define JOB_MAX_PHASES 16
/* Declares the phases (copied; at most JOB_MAX_PHASES) and enters the first. */
void job_set_phases(job_ctx *ctx, const job_phase *phases, int n);
/* Enters the declared phase called name (a later one; an earlier or unknown name is ignored). */
void job_begin_phase(job_ctx *ctx, const char *name);
/* done of total units of the current phase; rate and eta are derived from the time since start. */
void job_progress(job_ctx *ctx, double done, double total, const char *label);
void job_log(job_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A typed payload (EV_DATA), copied; n <= EVENT_DATA_MAX. */
void job_data(job_ctx *ctx, const void *payload, size_t n);
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
