/* Synthetic data for trying the workbench without an engine
 * (graft tui --demo): statistics shaped like a 28-layer, 12-head teacher,
 * three initializations, a layer plan, loss curves, results, and demo jobs
 * that stream statistics and losses through the real job/event path. */
#ifndef GRAFT_UI_DEMO_H
#define GRAFT_UI_DEMO_H

#include "app_state.h"

void demo_fill(app_state *st, int n_layers, int n_heads);
/* Calibrate / Align demo data (ui/demo_method.c); demo_fill calls it. */
void demo_fill_method(app_state *st);
/* app_run_fn for demo mode: Enter on Stats recomputes the statistics slowly,
 * on Align / Recover streams a loss curve, elsewhere a generic counting job. */
int demo_run(app_state *st, job_runner *jr, int screen);

#endif
