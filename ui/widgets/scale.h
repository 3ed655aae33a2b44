/* Mapping data values to [0,1] (linear or log) and formatting numbers compactly. */
#ifndef GRAFT_UI_WIDGETS_SCALE_H
#define GRAFT_UI_WIDGETS_SCALE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    double lo, hi; /* the range shown; lo == hi maps everything to 0.5 */
    bool log;      /* log10 mapping; values <= 0 count as no data */
} value_scale;

/* Range of the finite values (positive ones only when log). Returns false when none. */
bool scale_fit(value_scale *s, const double *v, size_t n, bool log);
/* [0,1] position of v, or NaN for no data (NaN, +-inf, <= 0 on a log scale). */
double scale_unit(const value_scale *s, double v);
/* The value at position u in [0,1] (inverse of scale_unit). */
double scale_value(const value_scale *s, double u);

/* At most 7 characters: 0.123, 12.3, 1234, 1.2e+05, -0.5 ... "-" for NaN. */
void fmt_num(char *buf, size_t n, double v);

/* mean, median and max of the finite values; false when there are none. */
bool summary_stats(const double *v, size_t n, double *mean, double *median, double *max);

#endif
