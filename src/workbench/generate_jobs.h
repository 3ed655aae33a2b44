/* The "generate" job behind Results' prompt box: the current teacher's
 * gen.req (a Results row's student folder, or the teacher itself) continues
 * the prompt through generate_text, the call `graft generate` makes (attention
 * layers through their KV cache, GDN layers through their recurrent state;
 * greedy or sampled). The text streams back as WB_GEN_TEXT events (progress
 * per token), the KV-cache bytes per token of the model and of its teacher as
 * WB_GEN_MEMORY; c cancels between tokens (and between layers of a pass). */
#ifndef GRAFT_WORKBENCH_GENERATE_JOBS_H
#define GRAFT_WORKBENCH_GENERATE_JOBS_H

#include "workbench/workbench.h"

/* Starts it for app_cur(st). 0, or -1 with a one-line error (no teacher, the
 * teacher not loaded for a teacher request, the student folder gone, a job running). */
int results_start_generate(workbench *wb, app_state *st, job_runner *jr);
/* After its end (UI thread): the Log line with what it made and the command that repeats it. */
void results_generate_done(app_state *st, teacher_state *owner, const event *ev);

#endif
