/* Events a job publishes for the front ends (terminal UI, command line).
 *
 * One struct for every kind keeps the queue simple; each kind documents which
 * fields it fills. The job layer knows no domain: numbers a job computes
 * (statistics, scores, results rows, curves) travel as EV_DATA, a typed
 * payload copied into `data` whose layout producer and consumer share
 * (the workbench's is src/workbench/wb_event.h). Strings are copied in, so an
 * event owns no memory except `result` (EV_DONE), which passes to whoever pops it. */
#ifndef GRAFT_JOBS_EVENT_H
#define GRAFT_JOBS_EVENT_H

#include <stddef.h>

typedef enum {
    EV_PROGRESS,  /* fraction (the whole job, phases weighted; never decreases within a job), phase,
                     n_phases, phase_name, done / total (units of the current phase), rate (units/s
                     in this phase), eta_s (the whole job, raw; <0 unknown), label */
    EV_LOG,       /* text */
    EV_DATA,      /* data[0 .. data_len): a typed payload (see above) */
    EV_DONE,      /* result (owned by the receiver; may be NULL) */
    EV_ERROR,     /* text = one-line message */
    EV_CANCELLED, /* the job stopped because job_cancel was called; text, cancel_latency_s */
    EV_FILE,      /* one file of a download: text = its name ("" = the whole download),
                     file.state, done / total = its bytes (total -1 unknown), rate (bytes/s,
                     all files), eta_s (<0 unknown), file.all_done / all_total / files_done /
                     files_total over every file */
} event_kind;

/* EV_FILE states */
typedef enum {
    FILE_QUEUED,      /* known, not started */
    FILE_ACTIVE,      /* transferring */
    FILE_DONE,        /* downloaded and verified */
    FILE_CACHED,      /* already on disk (cache or a local folder) */
    FILE_FAILED,      /* see the job's error */
} file_state;

#define EVENT_DATA_MAX 1536 /* the largest typed payload: a Results row (src/workbench/wb_event.h) */

typedef struct {
    event_kind kind;
    int job_id;         /* increments with each job_start */
    char job_name[32];
    double t;           /* seconds since the job started */
    char label[64];
    char text[256];
    double fraction, done, total, rate, eta_s;
    int phase, n_phases;
    char phase_name[32];
    double cancel_latency_s; /* EV_CANCELLED: seconds from job_cancel to the job's end (<0 unknown) */
    void *result;
    struct {
        file_state state;
        long long all_done, all_total;
        int files_done, files_total;
    } file; /* EV_FILE only */
    size_t data_len;
    _Alignas(16) unsigned char data[EVENT_DATA_MAX]; /* EV_DATA only */
} event;

const char *event_kind_name(event_kind k);
/* A job's final event: done, error or cancelled. */
static inline int event_is_final(event_kind k) { return k == EV_DONE || k == EV_ERROR || k == EV_CANCELLED; }

#endif
