/* The nine screens, and helpers they share. */
#ifndef GRAFT_UI_SCREENS_H
#define GRAFT_UI_SCREENS_H

#include "ui.h"

extern const screen screen_teacher, screen_plan, screen_stats, screen_calibrate, screen_align, screen_recover,
    screen_results, screen_log, screen_settings;

/* The keys of the Results prompt box while it is open (else NULL), for the key bar and help. */
const key_hint *results_mode_keys(ui *u, int *n, const char **title);

/* Every screen's view state at its start. */
void views_init(views *v);

/* A framed panel: "not available yet: <needed>" with an optional hint line. */
void draw_unavailable(ui *u, grid *g, rect r, const char *needed, const char *hint);
/* A box outline in box-drawing (or ASCII) glyphs. */
void draw_box(grid *g, rect r, const theme *t, style s);
/* Text cut at its start when it does not fit (a path's end says more than its beginning). */
void draw_tail(grid *g, int x, int y, int w, const char *text, style s, const theme *t);
/* Text wrapped over up to max_lines lines of w columns (breaking at spaces when it can); returns the lines used. */
int draw_wrapped(grid *g, int x, int y, int w, int max_lines, const char *text, style s);

#endif
