/* Events a job publishes for the front ends (terminal UI, command line).
 *
 * One flat struct for every kind keeps the queue simple; each kind documents
 * which fields it fills. Strings are copied in, so an event owns no memory
 * except `result` (EV_DONE), which passes to whoever pops it. */
#ifndef GRAFT_JOBS_EVENT_H
#define GRAFT_JOBS_EVENT_H

typedef enum {
    EV_PROGRESS,  /* fraction, done, total, rate (units/s), eta_s (<0 unknown), label */
    EV_LOG,       /* text */
    EV_SCALAR,    /* label = name, step, value */
    EV_STAT,      /* label = statistic ("mean_dist", "entropy", ...), layer, head, value */
    EV_LOSS,      /* label = series ("calib", "held-out", "random"), step, value */
    EV_DONE,      /* result (owned by the receiver; may be NULL) */
    EV_ERROR,     /* text = one-line message */
    EV_CANCELLED, /* the job stopped because job_cancel was called */
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

typedef struct {
    event_kind kind;
    int job_id;         /* increments with each job_start */
    char job_name[32];
    char label[64];
    char text[256];
    double fraction, done, total, rate, eta_s;
    int layer, head;
    long step;
    double value;
    void *result;
    struct {
        file_state state;
        long long all_done, all_total;
        int files_done, files_total;
    } file; /* EV_FILE only */
} event;

const char *event_kind_name(event_kind k);

#endif
