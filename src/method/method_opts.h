/* Options shared by select, convert and ablate (student settings, data split)
 * and the pieces of their pipeline: teacher capture, student construction. */
#ifndef GRAFT_METHOD_METHOD_OPTS_H
#define GRAFT_METHOD_METHOD_OPTS_H

#include <cjson/cJSON.h>

#include "align/stage2.h"
#include "calibrate/capture.h"
#include "method/args.h"
#include "method/mem_check.h"
#include "core/progress.h"
#include "select/select.h"
#include "student/calib_split.h"
#include "student/student.h"

typedef struct {
    const char *write_gate;
    double damping;
    bool conv, qkv_bias, no_scale;
    int chunk, steps;
    const char *keep_best;
    split_spec split;
    /* Stage 1 components (NULL: all), decay distance, half-life override (NULL: none) */
    const char *stage1, *distance, *half_life;
    const char *sigma_fit; /* Stage 1 value-scale fit: reference (default), scaled or gated */
} method_cli;

void method_cli_default(method_cli *o);

#define METHOD_OPTS(o)                                                                                     \
    {"write-gate", OPT_STR, &(o).write_gate, "Stage 1 write-gate mode: reference (default) or mean-logit"}, \
    {"damping", OPT_DOUBLE, &(o).damping, "output-gate damping of alpha* (default 0.01)"},                 \
    {"conv", OPT_FLAG, &(o).conv, "short causal conv on q, k, v (starts as the identity)"},                \
    {"qkv-bias", OPT_FLAG, &(o).qkv_bias, "keep the teacher's q/k/v biases in GDN layers"},                \
    {"no-query-scale", OPT_FLAG, &(o).no_scale, "query scale 1 instead of dk^-1/2 (everywhere)"},          \
    {"chunk", OPT_INT, &(o).chunk, "GDN chunk length: 16, 32 or 64 (default 64)"},                        \
    {"steps", OPT_INT, &(o).steps, "Stage 2 steps (default 300)"},                                         \
    {"keep-best", OPT_STR, &(o).keep_best, "Stage 2 state kept: train (default) or heldout loss"},         \
    {"ctx", OPT_INT, &(o).split.ctx, "tokens per calibration sequence and eval window (default 256)"},     \
    {"calib-seqs", OPT_INT, &(o).split.n_calib, "calibration sequences (default 4)"},                     \
    {"heldout-seqs", OPT_INT, &(o).split.n_heldout, "held-out alignment sequences (default 1)"},          \
    {"select-windows", OPT_INT, &(o).split.sel_windows, "windows of held-out text scoring ar / ga-s2 (default 8)"}, \
    {"eval-windows", OPT_INT, &(o).split.eval_windows, "evaluation windows (default 64; 0 = to the end)"}

/* Stage 1 options, kept apart from METHOD_OPTS (convert, select, ablate, race). */
#define STAGE1_OPTS(o)                                                                                                \
    {"stage1", OPT_STR, &(o).stage1, "Stage 1 components: any of decay,beta,sigma,gate (default all), or none (ablate: sets A/B/...)"},     \
    {"distance", OPT_STR, &(o).distance, "distance behind the decay: all (default) or no-sink (without the first key)"}, \
    {"half-life", OPT_STR, &(o).half_life, "decay override: every head's idle half-life N tokens, A_log = 0 (ablate: rows N,M,...)"}, \
    {"sigma-fit", OPT_STR, &(o).sigma_fit, "Stage 1 value-scale fit: reference (default; query scale 1 in the fit), scaled (dk^-1/2 as the forward) or gated (fit after the gated norm, scales Wg)"}

/* Fills settings from the options (seed from --seed); -1 + error on bad values.
 * --half-life needs the decay among the components. */
int method_cli_settings(const method_cli *o, long seed, student_init init, student_settings *out);
/* -1 + error when --stage1, --distance, --half-life or --sigma-fit scaled was given for an init without Stage 1. */
int method_cli_stage1_check(const method_cli *o, student_init init);
/* Any Stage 1 option away from its default (--stage1, --distance, --half-life, --sigma-fit scaled). */
bool method_cli_stage1_given(const method_cli *o);
/* Parses a half-life N (> 0, finite, at most 1e9 tokens). */
int half_life_parse(const char *text, double *out);

/* Progress on stderr when it is a terminal (nothing otherwise). */
progress_sink cli_progress(void);

/* Teacher pass over the calibration (with heads) and held-out sequences. */
int method_capture(const model *m, const token_split *sp, teacher_capture *cal, teacher_capture *held,
                   const progress_sink *pr);

/* The device memory of a method command (src/cli/mem_check.h): the teacher
 * capture, building GDN layers (Stage 1 / 2), scoring runs, and the GDN
 * blocks of `students` students held at once. */
typedef struct {
    const split_spec *sp;
    student_settings set;  /* the GDN layers' settings and init */
    const char *strategy;  /* a manual layer list is counted from it; else keep */
    double keep;
    bool all_layers;       /* every layer built (ga-s2 selection, ablate) */
    int students;          /* students held at once (0 counts as 1) */
    bool score;            /* perplexity runs over the selection / evaluation slice */
} method_plan;
void method_plan_fill(mem_job *j, void *ud);
/* Chooses the layers that keep attention as graft convert does (strategy ss,
 * k of them unless manual; ar / ga-s2 score on sp's selection slice with
 * windows of ctx), then builds the other layers of s (an empty student) as
 * GDN layers from cal / held (held may have L = 0) and runs them; obs (may
 * be NULL) sees every Stage 2 step. sel gets the selection. 0, or -1 with an
 * error. */
int method_select_and_build(student *s, layer_selection *sel, const strategy_spec *ss, int k, const token_split *sp,
                            const teacher_capture *cal, const teacher_capture *held, int ctx,
                            const progress_sink *pr, const stage2_observer *obs);


#endif
