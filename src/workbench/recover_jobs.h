/* The Recover screen's job: a race between initializations (random vs
 * taylor-calibrate) on the loaded teacher and corpus, the same code and
 * numbers as `graft race MODEL --data CORPUS --ctx 128 --batch 4
 * --tokens N --lr-mixer 1e-3 --lr-rest 1e-4 --keep KEEP`. Losses stream
 * as "race/<init>" series (x = tokens), progress carries tokens/s, and each run
 * checkpoints under $XDG_STATE_HOME/graft/race/. */
#ifndef GRAFT_WORKBENCH_RECOVER_JOBS_H
#define GRAFT_WORKBENCH_RECOVER_JOBS_H

#include "workbench/workbench.h"

/* The options of the race, fixed here (ctx, batch, lrs) */
#define RECOVER_CTX 128
#define RECOVER_BATCH 4
#define RECOVER_LR_MIXER 1e-3
#define RECOVER_LR_REST 1e-4
#define RECOVER_CKPT_EVERY 8 /* steps */

/* Enter on Recover: starts the "race" job. 0 or -1 with an error. */
int recover_start_race(workbench *wb, app_state *st, job_runner *jr);
/* on_done for "race": logs the outcome, adds Results rows, frees result. */
void recover_race_done(app_state *st, void *result);

#endif
