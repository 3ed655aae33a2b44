#include "widgets/charts.h"

#include <stdio.h>
#include <string.h>

void colorbar_draw(grid *g, rect r, const value_scale *s, const theme *t) {
    char lo[16], hi[16];
    fmt_num(lo, sizeof lo, s->lo);
    fmt_num(hi, sizeof hi, s->hi);
    const char *suffix = s->log ? " (log)" : "";
    int fixed = (int)strlen(lo) + (int)strlen(hi) + (int)strlen(suffix) + 4;
    int bar = r.w - fixed;
    if (bar > 40) bar = 40;
    if (bar < 3) bar = 3;
    int x = r.x;
    x += grid_text(g, x, r.y, r.x + r.w - x, lo, STYLE_PLAIN);
    x += grid_text(g, x, r.y, 1, " ", STYLE_PLAIN);
    grid_put(g, x++, r.y, theme_glyph(t, G_BAR_LEFT), STYLE_PLAIN);
    for (int i = 0; i < bar && x < r.x + r.w; i++, x++) {
        double u = bar > 1 ? (double)i / (bar - 1) : 0.5;
        if (t->depth == DEPTH_MONO) grid_put(g, x, r.y, theme_shade(t, u), STYLE_PLAIN);
        else grid_put(g, x, r.y, " ", (style){COLOR_DEFAULT, theme_scale_color(t, u), 0});
    }
    grid_put(g, x++, r.y, theme_glyph(t, G_BAR_RIGHT), STYLE_PLAIN);
    x += grid_text(g, x, r.y, 1, " ", STYLE_PLAIN);
    x += grid_text(g, x, r.y, r.x + r.w - x, hi, STYLE_PLAIN);
    grid_text(g, x, r.y, r.x + r.w - x, suffix, theme_dim(t));
}
