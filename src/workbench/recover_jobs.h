/* The Recover screen's job: a race between initializations (random vs
 * taylor-calibrate) on the current teacher and the corpus, the same code and
 * numbers as `graft race MODEL --data CORPUS --ctx 128 --batch 4
 * --tokens N --lr-mixer A --lr-rest B --keep KEEP` (tokens and learning
 * rates from the settings, KEEP the teacher's Plan ratio). Losses stream as
 * race points (x = tokens), progress covers both builds and both runs, each
 * run checkpoints under $XDG_STATE_HOME/graft/race/, and both runs become
 * Results rows of that teacher. */
#ifndef GRAFT_WORKBENCH_RECOVER_JOBS_H
#define GRAFT_WORKBENCH_RECOVER_JOBS_H

#include "workbench/workbench.h"

/* The options of the race fixed here (ctx, batch, checkpoint interval) */
#define RECOVER_CTX 128
#define RECOVER_BATCH 4
#define RECOVER_CKPT_EVERY 8 /* steps */

/* Enter on Recover: starts the "race" job. 0 or -1 with an error. */
int recover_start_race(workbench *wb, app_state *st, job_runner *jr);
/* The end of "race" (done): the outcome on the Recover screen, rows in Results; frees result. */
void recover_race_done(app_state *st, teacher_state *owner, void *result);

#endif
