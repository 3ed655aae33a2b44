/* The "recall" job behind Results' Recall view (R, then Enter): graft
 * recall's run (engine/eval/recall.h) on the loaded teacher, then on the
 * view's student folder, the same prompts for both; progress over both runs,
 * c cancels between layers. Its result (recall_view_result) goes into the
 * teacher's recall view when it ends. */
#ifndef GRAFT_WORKBENCH_RECALL_JOBS_H
#define GRAFT_WORKBENCH_RECALL_JOBS_H

#include "workbench/workbench.h"

/* Starts it for app_cur(st)'s recall.req. 0, or -1 with a one-line error. */
int results_start_recall(workbench *wb, app_state *st, job_runner *jr);
/* After its end (UI thread): takes the result (EV_DONE) and logs the command that repeats it. */
void results_recall_done(app_state *st, teacher_state *owner, const event *ev);

#endif
