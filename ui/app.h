/* The terminal workbench: `graft tui`. */
#ifndef GRAFT_UI_APP_H
#define GRAFT_UI_APP_H

#include "app_state.h"
#include "jobs/job.h"

/* Runs the workbench until the user quits. Loads settings (palette, refresh
 * rate, key overrides) from the XDG config file and saves them on exit; saves
 * the session on exit unless st->ephemeral. Loading the session is the caller's
 * choice (persist_load_session, as cmd_tui does) before filling st.
 * Returns 0, or -1 with a one-line error (no terminal, ...). */
int ui_run(app_state *st, job_runner *jr);

/* `graft tui [MODEL] [--demo] [--snapshot SCREEN --size WxH --keys K]`. */
int cmd_tui(int argc, char **argv);

#endif
