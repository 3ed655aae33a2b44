#include "jobs/event_queue.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"

const char *event_kind_name(event_kind k) {
    static const char *names[] = {"progress", "log", "data", "done", "error", "cancelled", "file"};
    return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "?";
}

static int set_nonblock_cloexec(int fd) {
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) return -1;
    return fcntl(fd, F_SETFD, FD_CLOEXEC);
}

int event_queue_init(event_queue *q) {
    memset(q, 0, sizeof *q);
    int fds[2];
    if (pipe(fds) != 0) return gf_fail("event queue: pipe: %s", strerror(errno));
    if (set_nonblock_cloexec(fds[0]) || set_nonblock_cloexec(fds[1])) {
        close(fds[0]);
        close(fds[1]);
        return gf_fail("event queue: fcntl: %s", strerror(errno));
    }
    q->pipe_rd = fds[0];
    q->pipe_wr = fds[1];
    pthread_mutex_init(&q->mu, NULL);
    q->cap = 64;
    q->items = gf_malloc(q->cap * sizeof *q->items);
    return 0;
}

void event_queue_free(event_queue *q) {
    if (!q->items) return;
    pthread_mutex_destroy(&q->mu);
    close(q->pipe_rd);
    close(q->pipe_wr);
    free(q->items);
    memset(q, 0, sizeof *q);
}

static void grow(event_queue *q) {
    size_t ncap = q->cap * 2;
    event *n = gf_malloc(ncap * sizeof *n);
    for (size_t i = 0; i < q->count; i++) n[i] = q->items[(q->head + i) % q->cap];
    free(q->items);
    q->items = n;
    q->cap = ncap;
    q->head = 0;
}

void event_queue_push(event_queue *q, const event *ev) {
    pthread_mutex_lock(&q->mu);
    bool merged = false;
    if (ev->kind == EV_PROGRESS && q->count > 0) {
        event *last = &q->items[(q->head + q->count - 1) % q->cap];
        if (last->kind == EV_PROGRESS && last->job_id == ev->job_id) {
            *last = *ev;
            q->coalesced++;
            merged = true;
        }
    }
    if (!merged) {
        if (q->count == q->cap) grow(q);
        q->items[(q->head + q->count) % q->cap] = *ev;
        q->count++;
    }
    pthread_mutex_unlock(&q->mu);
    /* A full pipe (EAGAIN) is fine: the reader is already due to wake. */
    char b = 1;
    ssize_t w = write(q->pipe_wr, &b, 1);
    (void)w;
}

bool event_queue_pop(event_queue *q, event *out) {
    pthread_mutex_lock(&q->mu);
    bool have = q->count > 0;
    if (have) {
        *out = q->items[q->head];
        q->head = (q->head + 1) % q->cap;
        q->count--;
    }
    pthread_mutex_unlock(&q->mu);
    return have;
}

size_t event_queue_size(event_queue *q) {
    pthread_mutex_lock(&q->mu);
    size_t n = q->count;
    pthread_mutex_unlock(&q->mu);
    return n;
}

int event_queue_wake_fd(const event_queue *q) { return q->pipe_rd; }

void event_queue_clear_wake(event_queue *q) {
    char buf[256];
    while (read(q->pipe_rd, buf, sizeof buf) > 0) {
    }
}
