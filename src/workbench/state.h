/* Everything the workbench shows, filled by the lead from engine results (or
 * by events from jobs through app_state_apply_event). The UI thread owns it;
 * jobs never touch it directly. Absent data stays NULL / empty and the screens
 * say what is missing. */
#ifndef GRAFT_UI_APP_STATE_H
#define GRAFT_UI_APP_STATE_H

#include <stdbool.h>
#include <stddef.h>

#include "jobs/event.h"
#include "jobs/job.h"
#include "keymap.h"
#include "method_state.h"

typedef enum {
    MET_MEAN_DIST,     /* mean attention distance, tokens */
    MET_ENTROPY,       /* attention entropy, nats */
    MET_CONCENTRATION, /* attention concentration */
    MET_OUT_RMS,       /* head output RMS */
    MET_HALFLIFE_IDLE, /* GDN idle half-life, tokens */
    MET_HALFLIFE_DATA, /* GDN data-dependent half-life, tokens */
    MET_BETA,          /* beta* */
    MET_SIGMA,         /* sigma* */
    MET_ALIGN_LOSS,    /* alignment loss per head */
    MET_COUNT
} head_metric;

typedef struct {
    const char *key;    /* event label, e.g. "mean_dist" */
    const char *name;   /* "mean attention distance" */
    const char *unit;   /* "tokens", or "" */
    const char *symbol; /* "d", "H", "beta*" */
    bool log_scale;     /* the default scale */
} metric_info;

const metric_info *metric_get(head_metric m);
int metric_from_key(const char *key); /* -1 when unknown */

#define APP_MAX_INITS 5 /* teacher, random, taylor-only, taylor-calibrate, align-only */
#define APP_MAX_SERIES 8
#define APP_RESULT_COLS 10
#define APP_N_STRATEGIES 4 /* uniform, ar, ga-s2, manual (select.h order) */
#define APP_LOG_CAP 2000

typedef struct {
    char name[32];           /* "teacher", "random", "taylor-calibrate" */
    double *m[MET_COUNT];    /* [n_layers * n_heads] or NULL; NaN = not yet known */
} head_stats;

typedef struct {
    char name[32];
    double *x, *y;           /* [n] */
    size_t n, cap;
} loss_series;

typedef struct {
    char *cells[APP_RESULT_COLS];
} result_row;

#define APP_MAX_FILES 24
#define APP_MAX_RECENT 8

typedef struct {
    char name[256];          /* repo path of the file */
    file_state state;
    long long done, total;   /* bytes; total -1 unknown */
} download_file;

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

typedef struct app_state app_state;
/* The lead's seam: Enter on a screen (screen index 0..7) starts the job that
 * fills it. Returns 0, or -1 with a one-line error shown in the log. */
typedef int (*app_run_fn)(app_state *st, job_runner *jr, int screen);
/* screen | APP_RUN_ALT: the screen's second job (Results: the ablation table). */
#define APP_RUN_ALT 0x100
/* Opens a teacher (what the user typed on the Teacher screen): 0 when the
 * load job started, -1 with a one-line error. */
typedef int (*app_open_fn)(app_state *st, job_runner *jr, const char *arg);
/* Called on EV_DONE for a job; takes ownership of result. */
typedef void (*app_done_fn)(app_state *st, const char *job_name, void *result);

struct app_state {
    /* teacher summary (the top line and the Teacher screen) */
    char teacher[160];       /* "Qwen/Qwen2.5-1.5B-Instruct @main" */
    char shape[160];         /* "28 layers · 12 heads (2 KV)" */
    char device[64];         /* "cpu 2 threads" */
    char *teacher_lines[32]; /* free-form summary lines (owned) */
    int n_teacher_lines;
    char teacher_error[256]; /* the last load's one-line error, "" when none */
    char opening[512];       /* the teacher being opened (load job), "" when idle */
    download_state download; /* the teacher's files, from EV_FILE events of the load job */
    recent_teacher recent[APP_MAX_RECENT]; /* most recent first (persisted) */
    int n_recent;
    /* session choices */
    char strategy[32];
    double keep_ratio;       /* fraction of layers keeping attention; <0 unset */
    long race_tokens;        /* the Recover race's budget per init; 0: the default */
    char corpus[256];

    int n_layers, n_heads;   /* 0 until known */
    head_stats inits[APP_MAX_INITS];
    int n_inits;
    bool *kept;              /* [n_layers] layers keeping attention, or NULL */
    double *layer_score;     /* [n_layers] strategy score, or NULL */
    /* Plan (screen 2): per-strategy layer scores (ar, ga-s2; NULL until computed),
     * and what the cost line needs from the teacher's config */
    double *plan_score[APP_N_STRATEGIES];
    int kv_heads, head_dim, kv_bytes; /* 0 until a teacher is known */
    /* Results (screen 7) */
    char eval_init[32];      /* initialization "evaluate" builds (default taylor-calibrate) */
    double teacher_ppl;      /* on the evaluation slice; NaN until measured */

    method_state method;     /* Calibrate and Align (method_state.h) */

    loss_series series[APP_MAX_SERIES];
    int n_series;

    char result_header[APP_RESULT_COLS][24];
    int n_result_cols;
    result_row *results;
    int n_results;

    char *log[APP_LOG_CAP];  /* ring of owned lines */
    int log_start, n_log;
    long log_total;          /* lines ever appended (to detect news) */

    struct {                 /* the running job, from progress events */
        bool active;
        char name[32], label[64];
        double fraction, done, total, eta_s;
    } job;

    /* settings (persisted) */
    int palette;
    int refresh_hz;
    keymap keys;             /* overrides from config.json "keys" */

    app_run_fn run;          /* NULL: Enter says what is missing */
    app_open_fn open_teacher; /* NULL: the Teacher screen cannot open models */
    app_done_fn on_done;     /* NULL: results are logged and freed with free() */
    bool ephemeral;          /* demo data: never saved as the session */
    void *user;
};

void app_state_init(app_state *st);
void app_state_free(app_state *st);

/* Sets the model shape; drops matrices of another shape. */
void app_state_set_shape(app_state *st, int n_layers, int n_heads);
/* Index of the initialization called name, created when absent (-1 when full). */
int app_state_init_index(app_state *st, const char *name);
/* The matrix of metric m for init i, allocated NaN-filled on first use. */
double *app_state_metric(app_state *st, int init, head_metric m);
void app_state_set_kept(app_state *st, const bool *kept); /* [n_layers] */
/* Layers converted to GDN: those not kept, or uniform 50 % when no plan is set. */
void app_state_converted(const app_state *st, bool *out); /* [n_layers] */
void app_state_set_teacher_lines(app_state *st, const char *const *lines, int n);

/* Puts arg (resolved to path, may be "") first among the recent teachers; an
 * entry with the same arg moves up instead of repeating. */
void app_state_add_recent(app_state *st, const char *arg, const char *path);
/* Forgets the download listing (a new load begins). */
void app_state_clear_download(app_state *st);

void app_state_log(app_state *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *app_state_log_line(const app_state *st, int i); /* 0 = oldest kept */

void app_state_set_result_header(app_state *st, const char *const *cols, int n);
void app_state_add_result(app_state *st, const char *const *cells, int n);
loss_series *app_state_series(app_state *st, const char *name); /* created when absent; NULL when full */
void app_state_add_point(app_state *st, const char *series, double x, double y);

/* The Plan: strategy names in select.h order; -1 when unknown. */
int app_state_strategy_index(const char *name);
const char *app_state_strategy_name(int i);
/* Fills unset plan choices (strategy uniform, keep 50 %) and recomputes kept[]
 * from the strategy: uniform at once, ar / ga-s2 from their scores when every
 * layer has one (ties: lower layer first, as select_layers), manual unchanged. */
void app_state_plan_recompute(app_state *st);
/* Layers kept under ratio r: round(r * L), the same as keep_count. */
int app_state_keep_count(const app_state *st);
/* The results table's columns (evaluate and ablate rows). */
void app_state_use_result_columns(app_state *st);
extern const char *const app_result_columns[];
extern const int app_n_result_columns;

/* Applies one job event (progress, log, stat, loss, done, error). Returns true
 * when something visible changed. EV_STAT labels are metric keys, optionally
 * prefixed by an init name and '/': "taylor-calibrate/beta"; "plan/ar" and
 * "plan/ga-s2" are layer scores (head ignored). EV_LOG lines "result\tcell\t..."
 * add a results row; EV_SCALAR "teacher_ppl" sets teacher_ppl. */
bool app_state_apply_event(app_state *st, const event *ev);

#endif
