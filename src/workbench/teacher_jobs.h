/* The Teacher screen's job: resolve a MODEL argument through the Hub (with
 * per-file download events) and load it; and what the UI thread does with
 * the loaded teacher (its teacher_state becomes current: summary, shape,
 * files, recent teachers). */
#ifndef GRAFT_WORKBENCH_TEACHER_JOBS_H
#define GRAFT_WORKBENCH_TEACHER_JOBS_H

#include "workbench/workbench.h"

/* Starts the "load" job for arg (which becomes wb->model_arg). 0, or -1 with a one-line error. */
int teacher_start_load(workbench *wb, app_state *st, job_runner *jr, const char *arg);
/* The end of "load": takes result, replaces wb->m and switches to the teacher's state. */
void teacher_loaded(workbench *wb, app_state *st, void *result);
/* The app_state open_teacher op (st->user is the workbench). */
int teacher_open(app_state *st, job_runner *jr, const char *arg);

#endif
