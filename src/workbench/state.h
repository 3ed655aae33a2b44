/* The workbench's state, owned by the UI thread: the teachers seen in this
 * session (each with everything computed for it, teacher_state.h) and which
 * one is current; the teacher being opened and its download; the settings;
 * the log; the running job and the job history. Jobs never touch it: their
 * events are applied here (app_apply_event), each to the teacher the job was
 * started for. The UI reads it and calls the ops to start jobs. */
#ifndef GRAFT_WORKBENCH_STATE_H
#define GRAFT_WORKBENCH_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "jobs/eta.h"
#include "jobs/event.h"
#include "jobs/job.h"
#include "workbench/settings.h"
#include "workbench/teacher_state.h"
#include "workbench/wb_log.h"

#define APP_MAX_TEACHERS 16
#define APP_MAX_RECENT 8
#define JOB_HISTORY_CAP 64

typedef struct {
    download_file files[APP_MAX_FILES];
    int n_files, files_done, files_total;
    long long done, total;   /* bytes over every file */
    double rate, eta_s;      /* bytes/s; seconds, <0 unknown */
    bool active;             /* a transfer is under way */
} download_state;

typedef struct {
    char arg[512];           /* what the user typed: ORG/NAME[@REV][:PATH] or a path */
    char path[1024];         /* where it resolved on disk ("" until loaded) */
} recent_teacher;

/* JOB_INTERRUPTED: the workbench ended while the job ran (hang-up, a signal, a crash; the
 * record comes back from the session with where the job had got to). */
typedef enum { JOB_RUNNING, JOB_DONE, JOB_FAILED, JOB_CANCELLED, JOB_INTERRUPTED } job_outcome;

typedef struct {
    int id;
    char name[32];
    char teacher[160];       /* the teacher it ran for ("" for a load) */
    teacher_state *owner;    /* where its events go; NULL: none (a load) */
    time_t started;          /* wall clock */
    double seconds;          /* how long it ran (final event), or so far */
    job_outcome outcome;
    char text[256];          /* error / cancel message */
    double cancel_latency_s; /* c to the job's end, <0 unknown */
    /* where it had got to (the last progress event): kept with the session, so that an
     * interrupted job says "interrupted at step N" on the next start */
    char phase[32], label[64];
    double done, total, fraction;
    char checkpoint[512];    /* a race's last checkpoint ("<init> step N: PATH"), "" none */
} job_record;

/* The running job, as the header shows it. */
typedef struct {
    bool active;
    int id;
    char name[32], label[64], phase[32];
    int phase_i, n_phases;
    double fraction, done, total, rate;
    double started;          /* job_now() when it started */
    double eta;              /* seconds left to show, <0 unknown */
    eta_smoother eta_state;
    bool cancel_requested;
} job_status;

/* What Enter (and a few keys) start. */
typedef enum {
    ACT_LOAD, ACT_STATS, ACT_SELECT, ACT_CALIBRATE, ACT_CALIBRATE_ONE, ACT_ALIGN, ACT_RACE, ACT_EVALUATE,
    ACT_ABLATE, ACT_GENERATE, ACT_RECALL, ACT_HALFLIFE, ACT_HALFLIFE_FIX, ACT_COUNT
} wb_action;

typedef struct app_state app_state;
/* Starts the job of an action. 0, or -1 with a one-line error. */
typedef int (*app_run_fn)(app_state *st, job_runner *jr, wb_action a);
/* Opens a teacher (what the user typed): 0 when the load job started, -1 with a one-line error. */
typedef int (*app_open_fn)(app_state *st, job_runner *jr, const char *arg);
/* A job's final event: result (owned, may be NULL; only for "done") and the teacher it ran for. */
typedef void (*app_end_fn)(app_state *st, const job_record *job, const event *ev);

struct app_state {
    teacher_state *teachers[APP_MAX_TEACHERS];
    int n_teachers;
    int cur;                 /* index of the current teacher, -1 none */

    /* opening a teacher */
    char opening[512];       /* the argument being opened (load job), "" when idle */
    char teacher_error[512]; /* the last open's one-line error, "" when none */
    char fallback_note[512]; /* why the default teacher was opened instead of the session's, "" */
    char notice[512];        /* a one-time message for the status line (the UI shows it once, then clears it) */
    download_state download; /* the files of the load in progress */
    recent_teacher recent[APP_MAX_RECENT]; /* most recent first (persisted) */
    int n_recent;

    char corpus[256];        /* the calibration / evaluation text of this session */
    char eval_init[32];      /* the init Results' Enter builds (default taylor-calibrate) */
    wb_settings settings;

    wb_log log;
    job_status job;
    job_record history[JOB_HISTORY_CAP]; /* ring, oldest first */
    int hist_start, n_hist;

    app_run_fn run;           /* NULL: Enter says what is missing */
    app_open_fn open_teacher; /* NULL: the Teacher screen cannot open models */
    app_end_fn on_end;        /* NULL: results are freed with free() */
    bool ephemeral;           /* demo data: never saved as the session */
    /* one writer per session (session.h): another graft tui holds the lock -> read-only here */
    bool read_only;
    long lock_holder;         /* that process's id, 0 unknown */
    int lock_fd;              /* the held lock, -1 none */
    char session_name[64];    /* graft tui --session NAME, "" the default session */
    bool session_dirty;       /* something saved with the session changed since the last write */
    bool race_resume;         /* the next race continues from its checkpoints (Recover's R; read once) */
    /* Results' build refused: its folder holds a student of another request. Asked y/N once the
     * refused job has ended; y sets force_folder and builds again (graft convert --force). */
    struct {
        bool ask;
        char folder[700];
        char held[16], want[16]; /* the folder's recorded digest ("" none) and the build's, short */
    } overwrite;
    char force_folder[700];   /* the next build may replace this folder, and only it (the y; read once) */
    void *user;
};

void app_state_init(app_state *st);
void app_state_free(app_state *st);

/* The current teacher, or NULL. */
teacher_state *app_cur(const app_state *st);
teacher_state *app_find_teacher(const app_state *st, const char *key);
/* The teacher called key, created when absent (the oldest idle one makes room when full). */
teacher_state *app_teacher(app_state *st, const char *key);
void app_switch(app_state *st, teacher_state *t); /* NULL: none */

void app_log(app_state *st, log_level level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define app_state_log(st, ...) app_log((st), LOG_INFO, __VA_ARGS__)

/* Puts arg (resolved to path, may be "") first among the recent teachers. */
void app_add_recent(app_state *st, const char *arg, const char *path);
void app_clear_download(app_state *st);

/* Starts a job for owner (NULL: none, e.g. a load) and records it. 0, or -1 with an error. */
int app_start_job(app_state *st, job_runner *jr, const char *name, job_fn fn, void *arg, teacher_state *owner);
/* The history, oldest first; NULL outside. */
const job_record *app_job_at(const app_state *st, int i);
const job_record *app_job_find(const app_state *st, int id);
/* The clock tick while a job runs: elapsed time and the smoothed ETA. */
void app_job_tick(app_state *st, double now);
/* The running job's record marked interrupted (the workbench is ending under it); false when none runs. */
bool app_mark_interrupted(app_state *st);
/* "interrupted at step 12 of 50 (train taylor-calibrate, 63 %)" for a record, into buf. */
void app_job_progress_text(const job_record *r, char *buf, size_t n);
/* The newest job called name run for teacher t (by its name), or NULL. */
const job_record *app_last_job(const app_state *st, const teacher_state *t, const char *name);
/* Appends a record restored from the session (a negative id: never a live job's). */
void app_restore_job(app_state *st, const job_record *r);
/* c: asks the runner and remembers it for the header. */
void app_cancel_job(app_state *st, job_runner *jr);

/* Applies one job event. Returns true when something visible changed. */
bool app_apply_event(app_state *st, const event *ev);

#endif
