/* Everything the workbench computed for one teacher: its identity and shape,
 * the Plan, the per-head statistics, Stage 1 / Stage 2 numbers, the race's
 * curves, the teacher's perplexity, the Results rows and the prompt box's
 * last generation. Opening another
 * teacher switches to its own teacher_state (state.h); nothing here is ever
 * shown or used under another teacher. The UI thread owns it. */
#ifndef GRAFT_WORKBENCH_TEACHER_STATE_H
#define GRAFT_WORKBENCH_TEACHER_STATE_H

#include <stdbool.h>
#include <stddef.h>

#include "jobs/event.h"
#include "workbench/generation.h"
#include "workbench/halflife_view.h"
#include "workbench/recall_view.h"
#include "workbench/method_state.h"
#include "workbench/results.h"

typedef enum {
    MET_MEAN_DIST,     /* mean attention distance, tokens */
    MET_ENTROPY,       /* attention entropy, nats */
    MET_CONCENTRATION, /* attention concentration */
    MET_OUT_RMS,       /* head output RMS */
    MET_DIST_NOSINK,   /* mean attention distance without the first key, tokens */
    MET_SINK,          /* share of attention on the first key (the attention sink) */
    MET_HALFLIFE_IDLE, /* GDN idle half-life, tokens */
    MET_HALFLIFE_DATA, /* GDN data-dependent half-life: a student's median per-token half-life on text, tokens */
    MET_BETA,          /* beta* */
    MET_SIGMA,         /* sigma* */
    MET_ALIGN_LOSS,    /* alignment loss per head */
    MET_HL_LOG2_RATIO, /* log2 of that median over the teacher distance Stage 1 aimed at (halflife_view.h) */
    MET_COUNT
} head_metric;

typedef struct {
    const char *key;    /* "mean_dist" (snapshot JSON) */
    const char *name;   /* "mean attention distance" */
    const char *unit;   /* "tokens", or "" */
    const char *symbol; /* "d", "H", "beta*" */
    bool log_scale;     /* the default scale */
    const char *source; /* the job that computes it ("the teacher statistics (Enter on 3 Stats)") */
} metric_info;

const metric_info *metric_get(head_metric m);

#define APP_MAX_INITS 6 /* teacher and the initializations that have numbers */
#define APP_MAX_SERIES 8
#define APP_N_STRATEGIES 4 /* uniform, ar, ga-s2, manual (select.h order) */
#define APP_MAX_FILES 24

typedef struct {
    char name[32];           /* "teacher", "random", "taylor-calibrate" */
    double *m[MET_COUNT];    /* [n_layers * n_heads] or NULL; NaN = not yet known */
} head_stats;

typedef struct {
    char name[96];           /* "race/<init label>": "race/taylor-calibrate[decay,beta,gate]" */
    double *x, *y;           /* [n] */
    size_t n, cap;
} loss_series;

typedef struct {
    char name[256];          /* repo path of the file */
    file_state state;
    long long done, total;   /* bytes; total -1 unknown */
} download_file;

/* The Recover race as the screen shows it (filled by race events and the race's end). */
typedef struct {
    long tokens;             /* the budget of the last race (per init) */
    char checkpoint[512];    /* "<init> step N: PATH", "" none yet */
    bool has_target;
    double target;           /* KL per token */
    char reached[200];       /* "target reached: random 2560, taylor-calibrate 512 -> ratio 5.00", "" */
    /* held-out perplexity at the end, the teacher's on the same sequences (eval_seqs of eval_ctx
     * tokens); eval_seqs 0: no race ended yet */
    double teacher_ppl, ppl[2];
    char labels[2][32];
    int eval_seqs, eval_ctx;
    char source[256];        /* the race JSON these curves were imported from, "" for a race run here */
} race_state;

typedef struct {
    /* identity */
    char key[1024];          /* the resolved model path: what makes two teachers the same */
    char arg[512];           /* what opened it: ORG/NAME[@REV][:PATH] or a path */
    char name[160];          /* shown: the repo id or the file name */
    char model_arg[1024];    /* MODEL in headless commands: the repo argument, else the absolute path */
    bool loaded;             /* its weights were loaded in this session (else restored from the session file) */
    char shape[160];         /* "5 layers · 8 heads (4 KV) · d 64" */
    char *lines[16];         /* the Teacher screen's summary (owned) */
    int n_lines;
    download_file files[APP_MAX_FILES]; /* the files it was loaded from */
    int n_files;
    int n_layers, n_heads;   /* 0 until known */
    int kv_heads, head_dim, kv_bytes;

    /* Plan */
    char strategy[32];
    double keep_ratio;       /* fraction of layers keeping attention */
    bool *kept;              /* [n_layers] layers keeping attention, or NULL */
    double *plan_score[APP_N_STRATEGIES]; /* [n_layers] ar / ga-s2 scores, NULL until computed */
    char score_corpus[256];  /* the corpus the scores were computed on */

    /* Stats: the teacher's statistics and every init's numbers */
    head_stats inits[APP_MAX_INITS];
    int n_inits;
    char stats_corpus[256];  /* the corpus of the teacher statistics, "" none */
    char stats_source[256];  /* the stats JSON they were imported from, "" when computed here */

    method_state method;     /* Calibrate and Align */
    stage1_choice stage1;    /* the Stage 1 options its jobs build with (4 Calibrate; saved) */

    loss_series series[APP_MAX_SERIES]; /* race curves ("race/<init>") */
    int n_series;
    race_state race;

    /* Results */
    double teacher_ppl;      /* NaN until measured */
    char ppl_corpus[256];    /* the evaluation slice it was measured on */
    int ppl_windows, ppl_ctx;
    result_row *results;
    int n_results;
    long next_seq;

    gen_state gen;           /* the prompt box on Results: its request and the last generation */
    recall_view recall;      /* the Recall view on Results: the teacher's and a student's recall */
    halflife_view hl;        /* Stats: a student's half-lives on the corpus, per head */
} teacher_state;

teacher_state *teacher_state_new(const char *key);
void teacher_state_free(teacher_state *t);
/* Sets the shape; drops everything computed for another shape. */
void teacher_state_set_shape(teacher_state *t, int n_layers, int n_heads);
void teacher_state_set_lines(teacher_state *t, const char *const *lines, int n);

/* Index of the initialization called name, created when absent (-1 when full). */
int teacher_init_index(teacher_state *t, const char *name);
/* The matrix of metric m for init i, allocated NaN-filled on first use (NULL without a shape). */
double *teacher_metric(teacher_state *t, int init, head_metric m);
bool teacher_has_metric(const teacher_state *t, int init, head_metric m);
/* Drops every init's numbers but the teacher statistics (a new Stage 1 / Stage 2 run). */
void teacher_drop_init_metrics(teacher_state *t, const char *init);
/* Drops what was computed on another corpus (statistics, scores, teacher perplexity). */
void teacher_forget_corpus(teacher_state *t, const char *corpus);

void teacher_set_kept(teacher_state *t, const bool *kept); /* [n_layers] */
/* Layers converted to GDN: those not kept, or uniform 50 % when no plan is set. */
void teacher_converted(const teacher_state *t, bool *out); /* [n_layers] */
int teacher_kept_count(const teacher_state *t);
/* Layers kept under the ratio: round(r * L), the same as keep_count. */
int teacher_keep_count(const teacher_state *t);
/* Fills unset plan choices (uniform, 50 %) and recomputes kept[] from the
 * strategy: uniform at once, ar / ga-s2 from their scores when every layer
 * has one (ties: lower layer first, as select_layers), manual unchanged. */
void teacher_plan_recompute(teacher_state *t);
void teacher_set_score(teacher_state *t, int strategy, int layer, double value);

loss_series *teacher_series(teacher_state *t, const char *name); /* created when absent; NULL when full */
void teacher_add_point(teacher_state *t, const char *series, double x, double y);
void teacher_clear_series(teacher_state *t, const char *prefix);

/* Appends a row (its seq set here). */
void teacher_add_result(teacher_state *t, const result_row *r);

/* The Plan: strategy names in select.h order; -1 when unknown. */
int strategy_index(const char *name);
const char *strategy_label(int i);

#endif
