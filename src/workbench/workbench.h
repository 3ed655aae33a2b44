/* The engine behind the workbench: which teacher is loaded and which corpus
 * is used, and the jobs each action starts (load, statistics, selection,
 * Stage 1, Stage 2, evaluation, ablation, race, generation). It owns the loaded model.
 * Every job is started for the current teacher (its teacher_state) and only
 * when that teacher's weights are the ones loaded; jobs copy what they need
 * and hand numbers back as events (wb_event.h). */
#ifndef GRAFT_WORKBENCH_WORKBENCH_H
#define GRAFT_WORKBENCH_WORKBENCH_H

#include <stdbool.h>

#include "method/request.h"
#include "model/model.h"
#include "workbench/state.h"

/* Calibrate / Align keep the teacher capture between jobs (calib_jobs.c). */
typedef struct calib_cache calib_cache;
void calib_cache_free(calib_cache *c); /* NULL is fine */

/* Command-line choices (graft tui's shared options). */
typedef struct {
    const char *tokenizer; /* --tokenizer for the teacher named on the command line; NULL: beside it */
    long seed;             /* --seed of the students the jobs build (graft's default is 1) */
    double keep;           /* --keep: the Plan's ratio for the first teacher loaded; NaN: its own */
    const char *strategy;  /* --strategy: likewise (uniform, ar, ga-s2); NULL: its own */
} workbench_opts;

typedef struct {
    char *model_arg;    /* what the user named last */
    char *tokenizer;    /* --tokenizer, used for tokenizer_for only (NULL: none) */
    char *tokenizer_for; /* the teacher named on the command line */
    long seed;          /* --seed (1 by default) */
    double plan_keep;   /* --keep / --strategy for plan_for's first load (NaN / "": none) */
    char plan_strategy[16];
    char *plan_for;
    char *corpus;       /* calibration / evaluation text, or NULL */
    model *m;           /* loaded teacher, or NULL */
    gf_backend *be;     /* where it lives and every job runs: opened by its load job from
                           the Settings' device and threads (owned) */
    char *m_key;        /* its teacher_state key */
    int stats_ctx, stats_seqs;
    calib_cache *calib; /* Calibrate / Align: the teacher capture kept between jobs */
    int startup_load;   /* id of the session's first load (it falls back to the default teacher), 0 */
    char *default_arg;  /* the default teacher */
} workbench;

/* Sets st's ops and starts loading model_arg (NULL: the session's last
 * teacher, else the default one). opts may be NULL (defaults). Returns 0 or
 * -1 with a one-line error. */
int workbench_attach(workbench *wb, app_state *st, job_runner *jr, const char *model_arg, const char *corpus,
                     const workbench_opts *opts);
void workbench_free(workbench *wb);

/* The current teacher when its weights are the loaded ones, on the device the
 * Settings name; else NULL with a one-line error saying what is missing. */
teacher_state *wb_ready(workbench *wb, app_state *st);
/* "cpu" or "cuda:N": the device part of a backend's name. */
void wb_device_of(const gf_backend *be, char *buf, size_t n);
/* A request of kind k for a job on the teacher at teacher_path (its MODEL),
 * with the workbench's --seed and the device be runs on (dev: its text, 16
 * bytes, owned by the caller like every string of the request). */
void wb_request_init(request *r, req_kind k, const char *teacher_path, long seed, const gf_backend *be, char *dev);
/* Starts fn(arg) as a job of owner with the settings' thread count applied on the worker. */
int wb_start(app_state *st, job_runner *jr, const char *name, job_fn fn, void *arg, teacher_state *owner);

#endif
