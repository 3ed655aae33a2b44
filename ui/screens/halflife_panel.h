/* Stats' half-life panels (docs/half-life.md): the histogram over tokens of
 * the head under the cursor (its 30 log bins, with the idle half-life, the
 * median and the teacher distance Stage 1 aimed at marked under it) and the
 * flagged heads, worst first. Drawn beside the heat maps when the metric is
 * one of the half-life ones. */
#ifndef GRAFT_UI_SCREENS_HALFLIFE_PANEL_H
#define GRAFT_UI_SCREENS_HALFLIFE_PANEL_H

#include "grid.h"
#include "ui.h"
#include "workbench/halflife_view.h"

/* Draws the head's histogram into r; returns the rows used. */
int halflife_hist_draw(ui *u, grid *g, rect r, const halflife_view *v, int layer, int head);
/* The same for one head of any result, under its own title line. */
int halflife_head_hist_draw(ui *u, grid *g, rect r, const halflife_head *h, const char *title);
/* 4 Calibrate's fix panel: which head x / X fix, then the last fix's perplexity
 * change, its folder and the head's histogram before and after side by side. */
void halflife_fix_draw(ui *u, grid *g, rect r, const halflife_view *v, int layer, int head);
/* Draws the flagged heads (the one last jumped to marked) into r; returns the rows used. */
int halflife_flagged_draw(ui *u, grid *g, rect r, const halflife_view *v);
/* Column (0 .. HL_HIST_BINS-1) of a half-life in the histogram; -1 when not finite. */
int halflife_hist_col(double tokens);

#endif
