/* The engine behind the workbench: which teacher and corpus are open, and the
 * jobs that Enter starts on each screen (load, statistics, ...). It owns the
 * loaded model; jobs run one at a time on the job runner's worker thread and
 * hand results back through app_state's on_done. */
#ifndef GRAFT_WORKBENCH_WORKBENCH_H
#define GRAFT_WORKBENCH_WORKBENCH_H

#include <stdbool.h>

#include "app_state.h"
#include "model/model.h"
#include "workbench/calib_jobs.h"

/* Command-line choices (graft tui's shared options). */
typedef struct {
    const char *tokenizer; /* --tokenizer for the teacher named on the command line; NULL: beside it */
    long seed;             /* --seed of the students the jobs build (graft's default is 1) */
} workbench_opts;

typedef struct {
    char *model_arg;   /* what the user named */
    char *tokenizer;   /* --tokenizer, for tokenizer_for only (NULL: none) */
    char *tokenizer_for; /* the teacher named on the command line */
    long seed;
    char *corpus;      /* calibration / evaluation text, or NULL */
    model *m;          /* loaded teacher, or NULL */
    int stats_ctx, stats_seqs;
    calib_cache *calib; /* Calibrate / Align: the teacher capture kept between jobs */
} workbench;

/* Sets st->run / st->on_done / st->user and starts loading model_arg (NULL:
 * the default teacher). opts may be NULL (defaults). Returns 0 or -1 with a
 * one-line error. */
int workbench_attach(workbench *wb, app_state *st, job_runner *jr, const char *model_arg, const char *corpus,
                     const workbench_opts *opts);
void workbench_free(workbench *wb);

#endif
