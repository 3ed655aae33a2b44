#include "widgets/charts.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

void histogram_bins(const double *v, size_t n, bool log_bins, double lo, double hi, int n_bins, size_t *counts) {
    memset(counts, 0, (size_t)n_bins * sizeof *counts);
    value_scale s = {lo, hi, log_bins};
    for (size_t i = 0; i < n; i++) {
        double u = scale_unit(&s, v[i]);
        if (isnan(u)) continue;
        int b = (int)(u * n_bins);
        counts[b >= n_bins ? n_bins - 1 : b]++;
    }
}

size_t histogram_draw(grid *g, rect r, const double *v, size_t n, bool log_bins, const theme *t) {
    if (r.w < 4 || r.h < 3) return 0;
    value_scale s;
    scale_fit(&s, v, n, log_bins);
    int bars_h = r.h - 2, n_bins = r.w;
    size_t *counts = gf_calloc((size_t)n_bins, sizeof *counts);
    histogram_bins(v, n, log_bins, s.lo, s.hi, n_bins, counts);
    size_t peak = 0, total = 0;
    for (int b = 0; b < n_bins; b++) {
        total += counts[b];
        if (counts[b] > peak) peak = counts[b];
    }
    style bar = {theme_scale_color(t, 0.6), COLOR_DEFAULT, 0};
    for (int b = 0; peak && b < n_bins; b++) {
        int eighths = (int)lround((double)counts[b] / (double)peak * bars_h * 8);
        if (counts[b] && eighths == 0) eighths = 1; /* a non-empty bin is never invisible */
        for (int row = 0; row < bars_h; row++) {
            int e = eighths - row * 8;
            if (e <= 0) break;
            grid_put(g, r.x + b, r.y + bars_h - 1 - row, theme_vbar_eighth(t, e > 8 ? 8 : e), bar);
        }
    }
    free(counts);
    char lo[16], hi[16], line[96];
    fmt_num(lo, sizeof lo, s.lo);
    fmt_num(hi, sizeof hi, s.hi);
    grid_text(g, r.x, r.y + bars_h, r.w, lo, theme_dim(t));
    int hw = (int)strlen(hi);
    if (hw + (int)strlen(lo) + 1 < r.w) grid_text(g, r.x + r.w - hw, r.y + bars_h, hw, hi, theme_dim(t));
    double mean, median, max;
    if (summary_stats(v, n, &mean, &median, &max)) {
        char a[16], b[16], c[16];
        fmt_num(a, sizeof a, mean);
        fmt_num(b, sizeof b, median);
        fmt_num(c, sizeof c, max);
        snprintf(line, sizeof line, "mean %s  median %s  max %s", a, b, c);
        if ((int)strlen(line) > r.w) /* narrow (side by side): a shorter form, all three numbers kept */
            snprintf(line, sizeof line, "mean %s med %s max %s", a, b, c);
        if ((int)strlen(line) > r.w) snprintf(line, sizeof line, "%s/%s/%s mean/med/max", a, b, c);
    } else {
        snprintf(line, sizeof line, "no data");
    }
    grid_text(g, r.x, r.y + r.h - 1, r.w, line, STYLE_PLAIN);
    return total;
}
