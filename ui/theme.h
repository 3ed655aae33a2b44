/* How things look on this terminal: glyph set (UTF-8 or ASCII), colour depth
 * (256, 8, none) and the colour palette for scales. Widgets take a theme and
 * never ask curses or the environment themselves. */
#ifndef GRAFT_UI_THEME_H
#define GRAFT_UI_THEME_H

#include <stdbool.h>
#include <stdint.h>

#include "grid.h"

typedef enum { DEPTH_256, DEPTH_8, DEPTH_MONO } color_depth;

typedef enum {
    G_UPPER_HALF, G_LOWER_HALF, G_FULL, G_HLINE, G_VLINE, G_TL, G_TR, G_BL, G_BR,
    G_TEE_DOWN, G_TEE_UP, G_TEE_LEFT, G_BAR_LEFT, G_BAR_RIGHT, G_ARROW_LR, G_ARROW_UD,
    G_ARROW_ALL, G_ENTER, G_BULLET, G_KEPT, G_REPLACED, G_ELLIPSIS, G_MIDDOT, G_RARROW,
    G_SORT_UP, G_SORT_DOWN,
    G_COUNT
} glyph_id;

typedef struct {
    bool utf8;
    color_depth depth;
    int palette; /* index into the palette table */
} theme;

/* Detects UTF-8 from the locale (call setlocale first) and colours from
 * NO_COLOR and the given number of terminal colours (COLORS, or 0 headless). */
void theme_detect(theme *t, int n_colors);

const char *theme_glyph(const theme *t, glyph_id g);
/* A shade glyph for t in [0,1]: ░▒▓█ (UTF-8) or .:-=+*#%@ (ASCII). */
const char *theme_shade(const theme *t, double u);
/* Eighth blocks for bars: n = 1..8 eighths of a cell horizontally / vertically. */
const char *theme_hbar_eighth(const theme *t, int n);
const char *theme_vbar_eighth(const theme *t, int n);

/* Colour index for u in [0,1] on the current palette (COLOR_DEFAULT in mono). */
int16_t theme_scale_color(const theme *t, double u);
/* A distinct colour for series / category k (Okabe-Ito, colour-blind safe). */
int16_t theme_series_color(const theme *t, int k);
/* Marker glyph per series in ASCII mode: * + o x # ... */
const char *theme_series_marker(int k);
/* Accent colours for the frame (active tab, keys). */
style theme_accent(const theme *t);
style theme_dim(const theme *t);

int palette_count(void);
const char *palette_name(int i);
int palette_find(const char *name); /* -1 when unknown */
/* The xterm-256 index nearest to an RGB colour. */
int xterm_nearest(int r, int g, int b);

#endif
