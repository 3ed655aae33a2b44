/* The eight screens, and helpers they share. */
#ifndef GRAFT_UI_SCREENS_H
#define GRAFT_UI_SCREENS_H

#include "ui.h"

extern const screen screen_teacher, screen_plan, screen_stats, screen_calibrate, screen_align,
    screen_recover, screen_results, screen_log;

/* The Recover race's budget per init: st->race_tokens, else $GRAFT_RACE_TOKENS, else 51200. */
long recover_budget(const app_state *st);

/* A framed panel: "not available yet: <needed>" with an optional hint line. */
void draw_unavailable(ui *u, grid *g, rect r, const char *needed, const char *hint);
/* A box outline in box-drawing (or ASCII) glyphs. */
void draw_box(grid *g, rect r, const theme *t, style s);

#endif
