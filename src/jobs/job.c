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
};

static void copy_str(char *dst, size_t n, const char *src) {
    snprintf(dst, n, "%s", src ? src : "");
}

static void emit(job_ctx *ctx, event *ev) {
    ev->job_id = ctx->id;
    copy_str(ev->job_name, sizeof ev->job_name, ctx->name);
    event_queue_push(&ctx->jr->events, ev);
}

static void *worker(void *p) {
    job_ctx *ctx = p;
    gf_clear_error();
    int rc = ctx->fn(ctx, ctx->arg);
    event ev = {0};
    if (rc == 0) { /* a job that finished despite a late cancel keeps its result */
        ev.kind = EV_DONE;
        ev.result = ctx->result;
    } else if (atomic_load(&ctx->jr->cancel)) {
        ev.kind = EV_CANCELLED;
        copy_str(ev.text, sizeof ev.text, "cancelled");
    } else {
        ev.kind = EV_ERROR;
        copy_str(ev.text, sizeof ev.text, gf_last_error());
    }
    atomic_store(&ctx->finishing, true);
    emit(ctx, &ev);
    atomic_store(&ctx->jr->running, false);
    return NULL;
}

int job_runner_init(job_runner *jr) {
    memset(jr, 0, sizeof *jr);
    atomic_init(&jr->running, false);
    atomic_init(&jr->cancel, false);
    return event_queue_init(&jr->events);
}

static void reap(job_runner *jr) {
    if (!jr->joinable) return;
    pthread_join(jr->thread, NULL);
    jr->joinable = false;
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
    ctx->t0 = clock_now_s();
    atomic_store(&jr->cancel, false);
    atomic_store(&jr->running, true);
    jr->ctx = ctx;
    if (pthread_create(&jr->thread, NULL, worker, ctx) != 0) {
        atomic_store(&jr->running, false);
        jr->ctx = NULL;
        free(ctx);
        return gf_fail("job '%s': could not start a thread", name);
    }
    jr->joinable = true;
    return 0;
}

void job_cancel(job_runner *jr) {
    if (atomic_load(&jr->running)) atomic_store(&jr->cancel, true);
}
bool job_running(job_runner *jr) { return atomic_load(&jr->running); }
const char *job_current_name(job_runner *jr) { return jr->name; }
void job_wait(job_runner *jr) { reap(jr); }

bool job_pop_event(job_runner *jr, event *out) { return event_queue_pop(&jr->events, out); }
int job_wake_fd(job_runner *jr) { return event_queue_wake_fd(&jr->events); }
void job_clear_wake(job_runner *jr) { event_queue_clear_wake(&jr->events); }

bool job_cancelled(const job_ctx *ctx) { return atomic_load(&ctx->jr->cancel); }

void job_progress(job_ctx *ctx, double done, double total, const char *label) {
    event ev = {.kind = EV_PROGRESS, .done = done, .total = total, .eta_s = -1};
    ev.fraction = total > 0 ? done / total : 0;
    if (ev.fraction > 1) ev.fraction = 1;
    double dt = clock_now_s() - ctx->t0;
    if (dt > 0 && done > 0) {
        ev.rate = done / dt;
        if (total > done) ev.eta_s = (total - done) / ev.rate;
        else ev.eta_s = 0;
    }
    copy_str(ev.label, sizeof ev.label, label);
    emit(ctx, &ev);
}

void job_log(job_ctx *ctx, const char *fmt, ...) {
    event ev = {.kind = EV_LOG};
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ev.text, sizeof ev.text, fmt, ap);
    va_end(ap);
    emit(ctx, &ev);
}

static void emit_value(job_ctx *ctx, event_kind k, const char *label, int layer, int head,
                       long step, double value) {
    event ev = {.kind = k, .layer = layer, .head = head, .step = step, .value = value};
    copy_str(ev.label, sizeof ev.label, label);
    emit(ctx, &ev);
}

void job_scalar(job_ctx *ctx, const char *name, long step, double value) {
    emit_value(ctx, EV_SCALAR, name, -1, -1, step, value);
}
void job_stat(job_ctx *ctx, const char *stat, int layer, int head, double value) {
    emit_value(ctx, EV_STAT, stat, layer, head, 0, value);
}
void job_loss(job_ctx *ctx, const char *series, long step, double value) {
    emit_value(ctx, EV_LOSS, series, -1, -1, step, value);
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
