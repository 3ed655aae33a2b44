/* Thread-safe FIFO of events that wakes a poll() loop through a self-pipe.
 *
 * Producers (worker threads) push; one consumer (the UI or CLI thread) pops
 * without blocking. Each push writes one byte to a non-blocking pipe, so the
 * consumer can poll() the read end together with stdin; it then calls
 * event_queue_clear_wake() and pops until empty. Consecutive progress events
 * of the same job coalesce (only the latest matters), so a fast worker cannot
 * flood a slow reader with progress. */
#ifndef GRAFT_JOBS_EVENT_QUEUE_H
#define GRAFT_JOBS_EVENT_QUEUE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "jobs/event.h"

typedef struct {
    pthread_mutex_t mu;
    event *items;   /* ring buffer [cap] */
    size_t cap, head, count;
    int pipe_rd, pipe_wr;
    size_t coalesced; /* progress events merged into a queued one (for tests) */
} event_queue;

/* 0, or -1 with a one-line error (pipe creation failed). */
int event_queue_init(event_queue *q);
void event_queue_free(event_queue *q); /* drops queued events (their results leak by design: unknown types) */

void event_queue_push(event_queue *q, const event *ev);
/* Copies the oldest event into *out and returns true; false when empty. Never blocks. */
bool event_queue_pop(event_queue *q, event *out);
size_t event_queue_size(event_queue *q);

/* The fd to poll for POLLIN; drain it with event_queue_clear_wake before popping. */
int event_queue_wake_fd(const event_queue *q);
void event_queue_clear_wake(event_queue *q);

#endif
