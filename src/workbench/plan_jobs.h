/* Jobs behind the Plan and Results screens.
 *
 *   select    (Plan, Enter on ar / ga-s2): per-layer scores, as graft select
 *             (ga-s2 builds every layer under taylor-calibrate, the CLI's
 *             default); scores arrive as "plan/ar" / "plan/ga-s2" stats and
 *             the plan re-ranks from them.
 *   evaluate  (Results, Enter): builds the student of the current plan under
 *             st->eval_init, measures teacher and student perplexity on the
 *             corpus's evaluation slice, writes the student folder to
 *             $XDG_DATA_HOME/graft/students/<teacher>-<strategy>-<keep>-<init>/
 *             and adds a results row.
 *   ablate    (Results, a): graft ablate's table with quick settings, rows
 *             streamed in as they finish.
 *
 * The workbench split: ctx 256, 4 calibration + 1 held-out sequences, 8
 * selection windows, GRAFT_TUI_EVAL_WINDOWS evaluation windows (default 32);
 * Stage 2 runs GRAFT_TUI_STEPS steps (default 300; ablate at most 50).
 * `graft eval STUDENT --text CORPUS --split --eval-windows N` scores the same
 * slice headless. */
#ifndef GRAFT_WORKBENCH_PLAN_JOBS_H
#define GRAFT_WORKBENCH_PLAN_JOBS_H

#include "app_state.h"
#include "model/model.h"
#include "student/calib_split.h"
#include "workbench/workbench.h"

/* Copies what the Plan's cost line needs from the teacher and makes a plan. */
void plan_show_model(app_state *st, const model *m);
/* The split the workbench's jobs use (environment knobs applied). */
void plan_split_spec(split_spec *sp);

int plan_start_select(workbench *wb, app_state *st, job_runner *jr);
int results_start_evaluate(workbench *wb, app_state *st, job_runner *jr);
int results_start_ablate(workbench *wb, app_state *st, job_runner *jr);

#endif
