#include "hub/progress.h"

#include <string.h>
#include <time.h>

#include "core/clock.h"

void hub_progress_init(hub_progress *p, const hub_callbacks *cb, long long total_bytes, int n_files) {
    memset(p, 0, sizeof *p);
    pthread_mutex_init(&p->mu, NULL);
    p->cb = cb;
    p->total_total = total_bytes;
    p->files_total = n_files;
    p->win_t = clock_now_s();
    p->last_emit = 0;
}

void hub_progress_destroy(hub_progress *p) { pthread_mutex_destroy(&p->mu); }

static void emit(hub_progress *p, hub_state state, const hub_file_progress *f, const char *message) {
    double now = clock_now_s();
    double dt = now - p->win_t;
    if (dt >= 0.5) { /* speed over windows of at least half a second, smoothed */
        double inst = (double)(p->total_done - p->win_bytes) / dt;
        if (inst < 0) inst = 0;
        p->speed = p->speed > 0 ? 0.5 * p->speed + 0.5 * inst : inst;
        p->win_t = now;
        p->win_bytes = p->total_done;
    }
    if (!p->cb || !p->cb->on_event) return;
    hub_event ev = {
        .state = state,
        .file = f ? f->name : NULL,
        .file_done = f ? f->done : 0,
        .file_total = f ? f->total : 0,
        .total_done = p->total_done,
        .total_total = p->total_total,
        .files_done = p->files_done,
        .files_total = p->files_total,
        .bytes_per_s = p->speed,
        .eta_s = p->speed > 0 && p->total_total >= p->total_done ? (double)(p->total_total - p->total_done) / p->speed : -1,
        .message = message,
    };
    p->last_emit = now;
    p->cb->on_event(&ev, p->cb->user);
}

void hub_progress_update(hub_progress *p, hub_file_progress *f, long long done, hub_state state, const char *message) {
    pthread_mutex_lock(&p->mu);
    p->total_done += done - f->done;
    f->done = done;
    if (state == HUB_EV_DONE) p->files_done++;
    if (state != HUB_EV_PROGRESS || clock_now_s() - p->last_emit >= 0.1) emit(p, state, f, message);
    pthread_mutex_unlock(&p->mu);
}

void hub_progress_final(hub_progress *p, hub_state state, const char *message) {
    pthread_mutex_lock(&p->mu);
    emit(p, state, NULL, message);
    pthread_mutex_unlock(&p->mu);
}
