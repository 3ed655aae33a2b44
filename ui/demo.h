/* Synthetic data for trying the workbench without an engine
 * (graft tui --demo): statistics shaped like a 28-layer, 12-head teacher,
 * three initializations, a layer plan, loss curves, results, and demo jobs
 * that stream statistics and losses through the real job/event path. */
#ifndef GRAFT_UI_DEMO_H
#define GRAFT_UI_DEMO_H

#include "workbench/state.h"

/* Makes a demo teacher current in st and fills it. */
void demo_fill(app_state *st, int n_layers, int n_heads);
/* Calibrate / Align demo data (ui/demo_method.c); demo_fill calls it. */
void demo_fill_method(teacher_state *t);
/* app_run_fn for demo mode: statistics recomputed slowly, a loss curve for
 * Align / Recover, a counting job elsewhere. */
int demo_run(app_state *st, job_runner *jr, wb_action a);

#endif
