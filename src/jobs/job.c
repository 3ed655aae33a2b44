#include "jobs/job.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "core/error.h"

struct job_ctx {
    job_runner *jr;
    int id;
    char name[32];
    job_fn fn;
    void *arg;
    void *result;
    double t0;
    atomic_bool finishing; /* the final event is (about to be) queued: only the thread's exit is left */
    /* phases and progress: reports may come from several threads (OpenMP) */
    pthread_mutex_t mu;
    char phase_names[JOB_MAX_PHASES][32];
    double phase_w[JOB_MAX_PHASES], phase_before[JOB_MAX_PHASES], w_total;
    int n_phases, phase;
    double phase_t0;      /* when the current phase began */
    double fraction;      /* the highest whole-job fraction reported */
};

double job_now(void) { return clock_now_s(); }

static long long now_ns(void) { return (long long)(clock_now_s() * 1e9); } /* exact below 2^53 ns: 104 days of uptime */

static void copy_str(char *dst, size_t n, const char *src) { snprintf(dst, n, "%s", src ? src : ""); }

static void emit(job_ctx *ctx, event *ev) {
    ev->job_id = ctx->id;
    ev->t = job_now() - ctx->t0;
    copy_str(ev->job_name, sizeof ev->job_name, ctx->name);
    event_queue_push(&ctx->jr->events, ev);
}

static void *worker(void *p) {
    job_ctx *ctx = p;
    gf_clear_error();
    int rc = ctx->fn(ctx, ctx->arg);
    /* a job event is about 1 kB: the final one lives on the heap, not on this thread's stack */
    event *ev = gf_calloc(1, sizeof *ev);
    ev->cancel_latency_s = -1;
    if (rc == 0) { /* a job that finished despite a late cancel keeps its result */
        ev->kind = EV_DONE;
        ev->result = ctx->result;
    } else if (atomic_load(&ctx->jr->cancel)) {
        ev->kind = EV_CANCELLED;
        copy_str(ev->text, sizeof ev->text, gf_last_error());
        long long at = atomic_load(&ctx->jr->cancel_at_ns);
        if (at > 0) ev->cancel_latency_s = (double)(now_ns() - at) * 1e-9;
    } else {
        ev->kind = EV_ERROR;
        copy_str(ev->text, sizeof ev->text, gf_last_error());
    }
    atomic_store(&ctx->finishing, true);
    emit(ctx, ev);
    free(ev);
    atomic_store(&ctx->jr->running, false);
    return NULL;
}

int job_runner_init(job_runner *jr) {
    memset(jr, 0, sizeof *jr);
    atomic_init(&jr->running, false);
    atomic_init(&jr->cancel, 0);
    atomic_init(&jr->cancel_at_ns, 0);
    return event_queue_init(&jr->events);
}

static void reap(job_runner *jr) {
    if (!jr->joinable) return;
    pthread_join(jr->thread, NULL);
    jr->joinable = false;
    pthread_mutex_destroy(&jr->ctx->mu);
    free(jr->ctx);
    jr->ctx = NULL;
}

void job_runner_free(job_runner *jr) {
    job_cancel(jr);
    reap(jr);
    event_queue_free(&jr->events);
}

int job_start(job_runner *jr, const char *name, job_fn fn, void *arg) {
    /* a job whose final event has been handled (on_done starting the next job)
     * may not have cleared `running` yet: it is only exiting, so wait for it */
    if (atomic_load(&jr->running) && !(jr->ctx && atomic_load(&jr->ctx->finishing)))
        return gf_fail("job '%s' is still running (c cancels it)", jr->name);
    reap(jr);
    job_ctx *ctx = gf_calloc(1, sizeof *ctx);
    ctx->jr = jr;
    ctx->id = ++jr->next_id;
    copy_str(ctx->name, sizeof ctx->name, name);
    copy_str(jr->name, sizeof jr->name, name);
    ctx->fn = fn;
    ctx->arg = arg;
    ctx->t0 = ctx->phase_t0 = job_now();
    pthread_mutex_init(&ctx->mu, NULL);
    atomic_store(&jr->cancel, 0);
    atomic_store(&jr->cancel_at_ns, 0);
    atomic_store(&jr->running, true);
    jr->ctx = ctx;
    if (pthread_create(&jr->thread, NULL, worker, ctx) != 0) {
        atomic_store(&jr->running, false);
        jr->ctx = NULL;
        pthread_mutex_destroy(&ctx->mu);
        free(ctx);
        return gf_fail("job '%s': could not start a thread", name);
    }
    jr->joinable = true;
    return 0;
}

void job_cancel(job_runner *jr) {
    if (!atomic_load(&jr->running)) return;
    long long none = 0;
    atomic_compare_exchange_strong(&jr->cancel_at_ns, &none, now_ns()); /* the first request counts */
    atomic_store(&jr->cancel, 1);
}
bool job_running(job_runner *jr) { return atomic_load(&jr->running); }
const char *job_current_name(job_runner *jr) { return jr->name; }
int job_current_id(job_runner *jr) { return jr->next_id; }
void job_wait(job_runner *jr) { reap(jr); }

bool job_pop_event(job_runner *jr, event *out) { return event_queue_pop(&jr->events, out); }
int job_wake_fd(job_runner *jr) { return event_queue_wake_fd(&jr->events); }
void job_clear_wake(job_runner *jr) { event_queue_clear_wake(&jr->events); }

bool job_cancelled(const job_ctx *ctx) { return atomic_load(&ctx->jr->cancel) != 0; }
atomic_int *job_cancel_flag(job_ctx *ctx) { return &ctx->jr->cancel; }

static int find_phase(const job_ctx *ctx, const char *name) {
    for (int i = 0; name && i < ctx->n_phases; i++)
        if (!strcmp(ctx->phase_names[i], name)) return i;
    return -1;
}

/* Under ctx->mu. */
static void enter_phase(job_ctx *ctx, int i) {
    if (i <= ctx->phase || i >= ctx->n_phases) return;
    ctx->phase = i;
    ctx->phase_t0 = job_now();
    double f = ctx->phase_before[i] / ctx->w_total;
    if (f > ctx->fraction) ctx->fraction = f;
}

void job_set_phases(job_ctx *ctx, const job_phase *phases, int n) {
    pthread_mutex_lock(&ctx->mu);
    ctx->n_phases = 0;
    ctx->w_total = 0;
    for (int i = 0; i < n && i < JOB_MAX_PHASES; i++) {
        copy_str(ctx->phase_names[i], sizeof ctx->phase_names[i], phases[i].name);
        ctx->phase_w[i] = phases[i].weight > 0 ? phases[i].weight : 0;
        ctx->phase_before[i] = ctx->w_total;
        ctx->w_total += ctx->phase_w[i];
        ctx->n_phases++;
    }
    if (ctx->w_total <= 0) ctx->n_phases = 0; /* no usable weights: plain progress */
    ctx->phase = 0;
    ctx->phase_t0 = job_now();
    pthread_mutex_unlock(&ctx->mu);
}

void job_begin_phase(job_ctx *ctx, const char *name) {
    pthread_mutex_lock(&ctx->mu);
    enter_phase(ctx, find_phase(ctx, name));
    pthread_mutex_unlock(&ctx->mu);
}

void job_progress(job_ctx *ctx, double done, double total, const char *label) {
    event ev = {.kind = EV_PROGRESS, .done = done, .total = total, .eta_s = -1};
    double local = total > 0 ? done / total : 0;
    if (local > 1) local = 1;
    if (!(local >= 0)) local = 0; /* NaN or negative */
    double now = job_now();
    pthread_mutex_lock(&ctx->mu);
    if (ctx->n_phases > 0) {
        enter_phase(ctx, find_phase(ctx, label));
        int p = ctx->phase;
        double f = (ctx->phase_before[p] + ctx->phase_w[p] * local) / ctx->w_total;
        if (f > ctx->fraction) ctx->fraction = f; /* forward only */
        ev.fraction = ctx->fraction;
        ev.phase = p;
        ev.n_phases = ctx->n_phases;
        copy_str(ev.phase_name, sizeof ev.phase_name, ctx->phase_names[p]);
    } else {
        ev.fraction = local; /* one implicit phase: as reported */
        ev.n_phases = 1;
        copy_str(ev.phase_name, sizeof ev.phase_name, label);
    }
    double dt_phase = now - ctx->phase_t0;
    pthread_mutex_unlock(&ctx->mu);
    if (dt_phase > 0 && done > 0) ev.rate = done / dt_phase;
    double t = now - ctx->t0;
    if (ev.fraction >= 1) ev.eta_s = 0;
    else if (ev.fraction > 0 && t > 0) ev.eta_s = t * (1 - ev.fraction) / ev.fraction;
    copy_str(ev.label, sizeof ev.label, label);
    emit(ctx, &ev);
}

static void sink_report(void *ud, const char *what, double done, double total) {
    job_progress(ud, done, total, what);
}

progress_sink job_sink(job_ctx *ctx) { return (progress_sink){.report = sink_report, .ud = ctx, .cancel = &ctx->jr->cancel}; }

void job_log(job_ctx *ctx, const char *fmt, ...) {
    event ev = {.kind = EV_LOG};
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ev.text, sizeof ev.text, fmt, ap);
    va_end(ap);
    emit(ctx, &ev);
}

void job_data(job_ctx *ctx, const void *payload, size_t n) {
    GF_ASSERT(n <= EVENT_DATA_MAX);
    event ev = {.kind = EV_DATA, .data_len = n};
    memcpy(ev.data, payload, n);
    emit(ctx, &ev);
}

void job_set_result(job_ctx *ctx, void *result) { ctx->result = result; }

void job_file(job_ctx *ctx, const job_file_info *f) {
    event ev = {.kind = EV_FILE, .done = (double)f->done, .total = (double)f->total, .rate = f->bytes_per_s,
                .eta_s = f->eta_s};
    ev.fraction = f->total > 0 ? (double)f->done / (double)f->total : 0;
    ev.file.state = f->state;
    ev.file.all_done = f->all_done;
    ev.file.all_total = f->all_total;
    ev.file.files_done = f->files_done;
    ev.file.files_total = f->files_total;
    copy_str(ev.text, sizeof ev.text, f->name ? f->name : "");
    emit(ctx, &ev);
}
