/* The Calibrate and Align jobs of the workbench, for the current teacher:
 * Stage 1 layer by layer (taylor-only) and Stage 2 on the converted layers
 * (taylor-calibrate or align-only, the teacher's method.align_init), with the
 * settings' Stage 2 steps and the teacher's Stage 1 options (components,
 * distance, half-life override; a change of options calibrates every
 * converted layer again), publishing what the Calibrate, Align and Stats
 * screens show (wb_event.h). The teacher capture of the corpus's calibration
 * slice is made once and kept in the workbench's calib_cache between jobs
 * (until the teacher or corpus changes). */
#ifndef GRAFT_WORKBENCH_CALIB_JOBS_H
#define GRAFT_WORKBENCH_CALIB_JOBS_H

#include <stdbool.h>

#include "workbench/workbench.h"

/* Starts "calibrate" on the converted layers not yet calibrated: the next
 * one when one_layer, all of them otherwise. 0, or -1 with an error. */
int calib_start(workbench *wb, app_state *st, job_runner *jr, bool one_layer);
/* Starts "align": Stage 2 on every converted layer. */
int align_start(workbench *wb, app_state *st, job_runner *jr);

#endif
