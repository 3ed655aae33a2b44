#include "widgets/charts.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void hbars_draw(grid *g, rect r, const char *const *labels, const double *v, int n, double lo,
                double hi, const char *const *marks, const theme *t) {
    int lw = 0;
    for (int i = 0; i < n; i++) {
        int w = labels[i] ? utf8_width(labels[i]) : 0;
        if (w > lw) lw = w;
    }
    int bar_w = r.w - lw - 1 - 8 - 12; /* label, value, mark */
    if (bar_w < 4) bar_w = 4;
    for (int i = 0; i < n && i < r.h; i++) {
        int y = r.y + i, x = r.x;
        if (labels[i]) grid_text(g, x + lw - utf8_width(labels[i]), y, lw, labels[i], theme_dim(t));
        x += lw + 1;
        double u = hi > lo ? (v[i] - lo) / (hi - lo) : 0.5;
        u = isfinite(u) ? fmax(0, fmin(1, u)) : 0;
        int eighths = (int)lround(u * bar_w * 8);
        style st = {theme_scale_color(t, u), COLOR_DEFAULT, 0};
        for (int c = 0; c < bar_w; c++) {
            int e = eighths - c * 8;
            if (e <= 0) break;
            grid_put(g, x + c, y, theme_hbar_eighth(t, e > 8 ? 8 : e), st);
        }
        x += bar_w + 1;
        char num[16];
        fmt_num(num, sizeof num, v[i]);
        x += grid_text(g, x, y, r.x + r.w - x, num, STYLE_PLAIN) + 1;
        if (marks && marks[i]) grid_text(g, x, y, r.x + r.w - x, marks[i], theme_accent(t));
    }
}
