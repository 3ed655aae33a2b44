/* The frame's bars: tabs along the top, the valid keys along the bottom. */
#ifndef GRAFT_UI_WIDGETS_BARS_H
#define GRAFT_UI_WIDGETS_BARS_H

#include "grid.h"
#include "theme.h"

#define TABBAR_MAX 16

typedef struct {
    int x0[TABBAR_MAX], x1[TABBAR_MAX]; /* [x0, x1) of each tab on the row */
    int n, y;
} tabbar_hits;

/* "┌ 1 Teacher ┬ 2 Plan ┬ ... ┐" when it fits, else a compact form. */
void tabbar_draw(grid *g, int y, int w, const char *const *names, int n, int active, const theme *t,
                 tabbar_hits *hits);
/* Tab index at (x, y), or -1. */
int tabbar_hit(const tabbar_hits *h, int x, int y);

typedef struct {
    const char *key;       /* UTF-8 form, e.g. "←→" */
    const char *ascii_key; /* NULL: same as key */
    const char *label;
} key_hint;

/* "←→ tabs  m metric ..." with keys highlighted, truncated at w columns. */
void keybar_draw(grid *g, int y, int w, const key_hint *hints, int n, const theme *t);

#endif
