/* The race loop that `graft race` and the workbench's Recover job share:
 * one student per entry, trained in turn on the same options, data order and
 * budget, then tokens-to-target (engine/train/race.h). Students come from a
 * caller's callback (folders, the builder, or in-memory stand-ins). */
#ifndef GRAFT_METHOD_RACE_RUN_H
#define GRAFT_METHOD_RACE_RUN_H

#include <stdatomic.h>

#include "method/train_cli.h"
#include "method/train_student.h"

#define RACE_MAX_RUNS 8

/* Makes student i: fills *s (and *handle, may stay NULL) and *label. */
typedef int (*race_make_fn)(void *ud, int i, cli_student *s, train_student **handle, const char **label);

typedef struct {
    int n;                               /* runs */
    race_make_fn make;
    void *make_ud;
    /* each run's training options: base (on_step, ud, ckpt options included);
     * ckpt_dir non-NULL: run i checkpoints to ckpt_dir/<label>.ckpt */
    train_opts base;
    const char *ckpt_dir;
    bool resume;                         /* with ckpt_dir: each run continues from its checkpoint (a
                                            finished run's curve is read back, not retrained) */
    /* optional: called before run i trains (label known), on the caller's thread */
    void (*on_run)(void *ud, int i, const char *label, const char *ckpt_path);
    void *run_ud;
    atomic_int *stop;                    /* polled between layers and after every step; may be NULL */
} race_spec;

typedef struct {
    int n_done;                          /* runs trained (results to free) */
    const char *labels[RACE_MAX_RUNS];
    train_result res[RACE_MAX_RUNS];
    double target, ttt[RACE_MAX_RUNS];   /* ttt: -1 never reached */
    int window;
    double build_s[RACE_MAX_RUNS];       /* seconds making each student (Stage 1 / 2 with the builder) */
    double train_s[RACE_MAX_RUNS];       /* seconds training it (final evaluation included) */
    bool stopped;                        /* *stop cut a run short: no tokens-to-target */
    double teacher_ppl;                  /* the teacher's perplexity on the held-out sequences every run is scored on */
} race_outcome;

/* 0, or -1 with an error. On a stop, returns 0 with out->stopped set. Free
 * out with race_outcome_free in every case. */
int race_run(const race_spec *spec, transformer *teacher_tm, train_data *data, race_outcome *out);
/* Tokens-to-target of n_runs loss curves, run 0 the baseline (engine/train/race.h's rule): what
 * race_run computes at its end, and what an imported race's curves are scored with. */
int race_score(const curve *curves, int n_runs, double *target, double *ttt, int *window);
void race_outcome_free(race_outcome *out);

/* tokens-to-target ratio baseline / second run, or -1 when undefined */
double race_ratio(const race_outcome *o);

#endif
