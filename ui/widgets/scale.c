#include "widgets/scale.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/error.h"

static bool usable(double v, bool log) { return isfinite(v) && (!log || v > 0); }

bool scale_fit(value_scale *s, const double *v, size_t n, bool log) {
    s->log = log;
    s->lo = s->hi = NAN;
    bool any = false;
    for (size_t i = 0; i < n; i++) {
        if (!usable(v[i], log)) continue;
        if (!any || v[i] < s->lo) s->lo = v[i];
        if (!any || v[i] > s->hi) s->hi = v[i];
        any = true;
    }
    if (!any) s->lo = s->hi = log ? 1 : 0;
    return any;
}

double scale_unit(const value_scale *s, double v) {
    if (!usable(v, s->log)) return NAN;
    double a = s->lo, b = s->hi, x = v;
    if (s->log) {
        if (!(a > 0) || !(b > 0)) return NAN;
        a = log10(a), b = log10(b), x = log10(v);
    }
    if (!(b > a)) return 0.5;
    double u = (x - a) / (b - a);
    return u < 0 ? 0 : u > 1 ? 1 : u;
}

double scale_value(const value_scale *s, double u) {
    if (s->log && s->lo > 0 && s->hi > 0) return pow(10, log10(s->lo) + u * (log10(s->hi) - log10(s->lo)));
    return s->lo + u * (s->hi - s->lo);
}

void fmt_num(char *buf, size_t n, double v) {
    double a = fabs(v);
    if (isnan(v)) snprintf(buf, n, "-");
    else if (isinf(v)) snprintf(buf, n, v > 0 ? "inf" : "-inf");
    else if (a == 0) snprintf(buf, n, "0");
    else if (a >= 99999.5 || a < 0.001) snprintf(buf, n, "%.1e", v);
    else if (a >= 100) snprintf(buf, n, "%.0f", v);
    else if (a >= 10) snprintf(buf, n, "%.1f", v);
    else if (a >= 1) snprintf(buf, n, "%.2f", v);
    else snprintf(buf, n, "%.3f", v);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

bool summary_stats(const double *v, size_t n, double *mean, double *median, double *max) {
    double *tmp = gf_malloc((n ? n : 1) * sizeof *tmp);
    size_t m = 0;
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i])) tmp[m++] = v[i], sum += v[i];
    if (m == 0) {
        free(tmp);
        *mean = *median = *max = NAN;
        return false;
    }
    qsort(tmp, m, sizeof *tmp, cmp_double);
    *mean = sum / (double)m;
    *median = m % 2 ? tmp[m / 2] : 0.5 * (tmp[m / 2 - 1] + tmp[m / 2]);
    *max = tmp[m - 1];
    free(tmp);
    return true;
}
