/* Results' I: a one-line entry for the path of a run's JSON (graft ablate,
 * race or stats --json, made here or on another machine); Enter imports it
 * (src/workbench/import_runs.h) and the status line says what came in and for
 * which teacher, or the one-line reason it was refused. */
#ifndef GRAFT_UI_SCREENS_IMPORT_PROMPT_H
#define GRAFT_UI_SCREENS_IMPORT_PROMPT_H

#include "ui.h"

void import_prompt_open(ui *u);
/* Whether the entry is open (it closes itself when the keyboard went elsewhere). */
bool import_prompt_active(ui *u);
/* Keys while it is open: editing, Enter imports, Esc closes. */
bool import_prompt_key(ui *u, int key);
/* The entry on row y of r. */
void import_prompt_draw(ui *u, grid *g, int x, int y, int w);
/* Imports path into u's state and says what happened; 0 or -1. */
int import_prompt_run(ui *u, const char *path);

#endif
