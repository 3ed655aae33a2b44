/* The Calibrate and Align jobs of the workbench: Stage 1 layer by layer
 * (taylor-only) and Stage 2 on the converted layers (taylor-calibrate or
 * align-only), publishing what the Calibrate, Align and Stats screens show
 * (ui/method_state.h lists the event labels). The teacher capture of the
 * corpus's calibration slice is made once and kept in a calib_cache between
 * jobs (until the teacher or corpus changes). */
#ifndef GRAFT_WORKBENCH_CALIB_JOBS_H
#define GRAFT_WORKBENCH_CALIB_JOBS_H

#include "app_state.h"
#include "model/model.h"

typedef struct calib_cache calib_cache;

/* Starts "calibrate" on the converted layers (app_state_converted) not yet
 * calibrated: the next one when st->method.run_arg is CALIB_RUN_ONE, all of
 * them otherwise. *cache is created on first use. 0, or -1 with an error. */
int calib_start(calib_cache **cache, const model *m, const char *corpus, app_state *st, job_runner *jr);
/* Starts "align": Stage 2 on every converted layer from st->method.align_init;
 * steps from GRAFT_ALIGN_STEPS (default 300). */
int align_start(calib_cache **cache, const model *m, const char *corpus, app_state *st, job_runner *jr);
/* Drops the capture and students (the teacher or corpus changed). NULL is fine. */
void calib_cache_free(calib_cache *c);
/* Stage 2 steps for the workbench: GRAFT_ALIGN_STEPS when set (>= 0), else 300. */
int align_steps_setting(void);

#endif
