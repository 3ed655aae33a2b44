/* The terminal workbench: `graft tui`. */
#ifndef GRAFT_UI_APP_H
#define GRAFT_UI_APP_H

#include <stddef.h>

#include "jobs/job.h"
#include "prefs.h"
#include "workbench/state.h"

/* Runs the workbench until the user quits; saves prefs (palette, refresh rate,
 * key overrides) and the session (unless st->ephemeral) on exit. Loading them
 * is the caller's (cmd_tui). Returns 0, or -1 with a one-line error. */
int ui_run(app_state *st, job_runner *jr, ui_prefs *prefs);
/* 0 when the terminal can show the workbench; -1 with why not (TERM unset,
 * unknown, or without cursor addressing, such as TERM=dumb). */
int ui_terminal_check(char *why, size_t n);

/* `graft tui [MODEL] [--demo] [--snapshot SCREEN --size WxH --keys K]`. */
int cmd_tui(int argc, char **argv);

#endif
