/* Jobs behind the Plan and Results screens, for the current teacher.
 *
 *   select    (Plan, Enter on ar / ga-s2): per-layer scores, as graft select
 *             (ga-s2 builds every layer under taylor-calibrate with the
 *             settings' Stage 2 steps); the plan re-ranks from them.
 *   evaluate  (Results, Enter): builds the student of the teacher's plan under
 *             the chosen init, measures teacher and student perplexity on the
 *             corpus's evaluation slice, writes the student folder to
 *             $XDG_DATA_HOME/graft/students/<teacher>-<strategy>-<keep>-<init>/
 *             and adds a Results row.
 *   ablate    (Results, a): graft ablate's table (3 strategies x 3 ratios x
 *             six inits) with the settings' ablation Stage 2 steps, rows
 *             streamed in as they finish; with the settings' ablation on
 *             Stage 1 components, `graft ablate --stage1-subsets`'s rows
 *             (all, none, each component alone, each left out; the teacher's
 *             distance; its half-life override as one more row).
 *
 * Students with Stage 1 are built under the teacher's Stage 1 options
 * (stage1_choice.h); each row records them.
 *
 * The workbench split: ctx 256, 4 calibration + 1 held-out sequences, 8
 * selection windows, the settings' evaluation windows. Every row records its
 * Stage 2 steps and slice, and carries the headless command that repeats it. */
#ifndef GRAFT_WORKBENCH_PLAN_JOBS_H
#define GRAFT_WORKBENCH_PLAN_JOBS_H

#include "student/calib_split.h"
#include "student/student.h"
#include "workbench/stage1_choice.h"
#include "workbench/workbench.h"

/* A student's settings as the command line makes them (its defaults), so a
 * workbench student equals `graft convert ... --steps N --seed S [--keep-best
 * heldout] [--stage1 ... --distance ... --half-life ...]`'s; s1 counts only for
 * an init with Stage 1. 0, or -1 with an error. */
int plan_student_settings(student_init init, int steps, int keep_best_heldout, const stage1_choice *s1, long seed,
                          student_settings *set);

/* The split the workbench's jobs use, with eval_windows evaluation windows. */
void plan_split_spec(split_spec *sp, int eval_windows);

int plan_start_select(workbench *wb, app_state *st, job_runner *jr);
int results_start_evaluate(workbench *wb, app_state *st, job_runner *jr); /* under st->eval_init */
int results_start_ablate(workbench *wb, app_state *st, job_runner *jr);

#endif
