/* Small chart widgets: colour bar, histogram, line chart, horizontal bars. */
#ifndef GRAFT_UI_WIDGETS_CHARTS_H
#define GRAFT_UI_WIDGETS_CHARTS_H

#include <stdbool.h>
#include <stddef.h>

#include "grid.h"
#include "theme.h"
#include "widgets/scale.h"

/* One line: "lo ▕gradient▏ hi (log)". */
void colorbar_draw(grid *g, rect r, const value_scale *s, const theme *t);

/* Histogram of the finite values (positive ones with log_bins): bars of
 * eighth blocks in r.h - 2 rows, the bin range under them, then
 * "mean x  median y  max z" on the last row. Returns the number of values binned. */
size_t histogram_draw(grid *g, rect r, const double *v, size_t n, bool log_bins, const theme *t);
/* Counts per bin (exposed for tests): bins over [lo, hi] (log-spaced when log). */
void histogram_bins(const double *v, size_t n, bool log_bins, double lo, double hi, int n_bins, size_t *counts);

typedef struct {
    const char *name;
    const double *x, *y; /* [n] */
    size_t n;
} chart_series;

typedef enum { DOTS_BRAILLE, DOTS_BLOCKS, DOTS_ASCII } dot_style;

/* Line chart: legend on the first row, y labels on the left, x axis and its
 * labels at the bottom; the series as braille dots (2x4 per cell), half blocks
 * (1x2) or ASCII markers (1x1; one marker per series). */
void linechart_draw(grid *g, rect r, const chart_series *s, int n_series, const char *x_label,
                    dot_style dots, const theme *t);
/* Braille with colour; markers (one per series) in ASCII or without colour. */
dot_style dots_for(const theme *t);

/* "label ████▌ 0.91 <mark>" per line, bars scaled to [lo, hi]. marks may be NULL. */
void hbars_draw(grid *g, rect r, const char *const *labels, const double *v, int n, double lo,
                double hi, const char *const *marks, const theme *t);

#endif
