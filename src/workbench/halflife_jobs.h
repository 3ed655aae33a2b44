/* The "halflife" job behind Stats' h: graft halflife's measurement
 * (engine/halflife/halflife.h) of a student folder on the workbench corpus,
 * with progress per sequence and c cancelling between layers. When it ends
 * its result goes into the teacher's halflife_view and the heat maps
 * "half-life p50" and "log2(p50 / teacher distance)" under the student's
 * init. */
#ifndef GRAFT_WORKBENCH_HALFLIFE_JOBS_H
#define GRAFT_WORKBENCH_HALFLIFE_JOBS_H

#include "workbench/workbench.h"

/* Picks the student to measure for t: the Results row whose seq is sel_seq
 * when it has a student folder, else the newest row with one. false when no
 * row has a student folder. */
bool halflife_pick_student(const teacher_state *t, long sel_seq, halflife_view_request *out);
/* Starts the job for app_cur(st)'s hl.req. 0, or -1 with a one-line error. */
int stats_start_halflife(workbench *wb, app_state *st, job_runner *jr);
/* After its end (UI thread): takes the result (EV_DONE), fills the heat maps, logs the command. */
void stats_halflife_done(app_state *st, teacher_state *owner, const event *ev);

/* The "halflife-fix" job behind Calibrate's x / X: on the student Stats measured,
 * hl.fix_req's head set to its half-life (graft halflife --fix), Stage 2 of its
 * layer alone (the Settings' Stage 2 steps), the perplexity of the corpus's
 * evaluation slice before and after, the half-lives measured before and after,
 * and the fixed student written as a new folder beside the original. */
int calib_start_halflife_fix(workbench *wb, app_state *st, job_runner *jr);
void calib_halflife_fix_done(app_state *st, teacher_state *owner, const event *ev);

#endif
