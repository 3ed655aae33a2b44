/* Aggregates per-file byte counts from worker threads into hub_events:
 * totals, speed over a sliding window, ETA; throttles PROGRESS events. */
#ifndef GRAFT_HUB_PROGRESS_H
#define GRAFT_HUB_PROGRESS_H

#include <pthread.h>

#include "hub/hub.h"

typedef struct {
    pthread_mutex_t mu;
    const hub_callbacks *cb;
    long long total_done, total_total;
    int files_done, files_total;
    double last_emit;             /* monotonic seconds */
    double win_t;                 /* speed window start */
    long long win_bytes;          /* total_done at window start */
    double speed;                 /* bytes/s */
} hub_progress;

typedef struct {
    const char *name;
    long long done, total;
} hub_file_progress;

void hub_progress_init(hub_progress *p, const hub_callbacks *cb, long long total_bytes, int n_files);
void hub_progress_destroy(hub_progress *p);
/* Sets f->done to done (it may go back when a transfer restarts) and emits
 * an event of the given state (PROGRESS events are throttled). */
void hub_progress_update(hub_progress *p, hub_file_progress *f, long long done, hub_state state, const char *message);
/* A whole-download event (file NULL). */
void hub_progress_final(hub_progress *p, hub_state state, const char *message);

#endif
