#include "workbench/build_progress.h"

#include <string.h>

void build_progress_init(build_progress *b, job_ctx *ctx, int layers, int steps) {
    memset(b, 0, sizeof *b);
    b->ctx = ctx;
    atomic_init(&b->steps_done, 0);
    b->steps_total = (long)layers * (steps + 1);
}

static void report(void *ud, const char *what, double done, double total) {
    build_progress *b = ud;
    if (!strcmp(what, "align")) return; /* one thread's layer: counted by the observer instead */
    if (!b->phase) {
        job_progress(b->ctx, done, total, what);
        return;
    }
    if (strcmp(what, "stage 1")) return;
    double f = total > 0 ? done / total : 0;
    job_progress(b->ctx, b->base + (f < 0 ? 0 : f > 1 ? 1 : f) * b->s1, b->total, b->phase);
}

progress_sink build_progress_sink(build_progress *b) {
    return (progress_sink){.report = report, .ud = b, .cancel = job_cancel_flag(b->ctx)};
}

static void on_step(void *ud, int layer, int step, double loss, double heldout) {
    build_progress *b = ud;
    long d = atomic_fetch_add(&b->steps_done, 1) + 1;
    if (b->on_step) b->on_step(b, layer, step, loss, heldout);
    if (d % 4 && d != b->steps_total) return;
    double f = b->steps_total > 0 ? (double)d / (double)b->steps_total : 1;
    if (b->phase) job_progress(b->ctx, b->base + b->s1 + (f > 1 ? 1 : f) * b->s2, b->total, b->phase);
    else job_progress(b->ctx, (double)d, (double)b->steps_total, "align");
}

stage2_observer build_progress_observer(build_progress *b) { return (stage2_observer){on_step, b}; }
