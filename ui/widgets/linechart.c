#include "widgets/charts.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

/* Without colour (NO_COLOR, a mono terminal) series differ by their marker alone: braille
 * dots would all look alike, so each series draws its own marker (the legend shows it). */
dot_style dots_for(const theme *t) { return t->utf8 && t->depth != DEPTH_MONO ? DOTS_BRAILLE : DOTS_ASCII; }

typedef struct {
    int cw, ch;        /* cells */
    int dx, dy;        /* dots per cell */
    uint8_t *bits;     /* [ch, cw] dot bits per cell */
    int8_t *owner;     /* [ch, cw] last series drawn in the cell */
} canvas;

static void canvas_dot(canvas *c, int px, int py, int series) {
    if (px < 0 || py < 0 || px >= c->cw * c->dx || py >= c->ch * c->dy) return;
    int cx = px / c->dx, cy = py / c->dy, sx = px % c->dx, sy = py % c->dy;
    uint8_t bit;
    if (c->dx == 2) { /* braille numbering: dots 1-3 and 7 on the left, 4-6 and 8 on the right */
        static const uint8_t map[2][4] = {{0x01, 0x02, 0x04, 0x40}, {0x08, 0x10, 0x20, 0x80}};
        bit = map[sx][sy];
    } else {
        bit = (uint8_t)(1u << sy);
    }
    c->bits[cy * c->cw + cx] |= bit;
    c->owner[cy * c->cw + cx] = (int8_t)series;
}

static void canvas_line(canvas *c, int x0, int y0, int x1, int y1, int series) {
    int dx = abs(x1 - x0), dy = -abs(y1 - y0), sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
    int err = dx + dy;
    for (;;) {
        canvas_dot(c, x0, y0, series);
        if (x0 == x1 && y0 == y1) break;
        int e2 = 2 * err;
        if (e2 >= dy) err += dy, x0 += sx;
        if (e2 <= dx) err += dx, y0 += sy;
    }
}

static void braille_utf8(uint8_t bits, char out[4]) {
    unsigned cp = 0x2800u + bits;
    out[0] = (char)(0xE0 | (cp >> 12));
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[2] = (char)(0x80 | (cp & 0x3F));
    out[3] = 0;
}

static const char *cell_glyph(const canvas *c, uint8_t bits, int series, const theme *t, char buf[4]) {
    if (!bits) return " ";
    if (c->dx == 2) {
        braille_utf8(bits, buf);
        return buf;
    }
    if (c->dy == 2) return bits == 3 ? theme_glyph(t, G_FULL) : bits == 1 ? theme_glyph(t, G_UPPER_HALF) : theme_glyph(t, G_LOWER_HALF);
    return theme_series_marker(series);
}

void linechart_draw(grid *g, rect r, const chart_series *s, int n_series, const char *x_label,
                    dot_style dots, const theme *t) {
    if (r.w < 12 || r.h < 4) return;
    /* legend */
    int x = r.x;
    for (int k = 0; k < n_series && x < r.x + r.w; k++) {
        style st = {theme_series_color(t, k), COLOR_DEFAULT, ATTR_BOLD};
        const char *mark = dots == DOTS_ASCII ? theme_series_marker(k) : theme_glyph(t, G_HLINE);
        for (int i = 0; i < 3; i++) grid_put(g, x + i, r.y, mark, st);
        x += 4;
        x += grid_text(g, x, r.y, r.x + r.w - x, s[k].name, STYLE_PLAIN) + 3;
    }
    /* ranges */
    double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
    for (int k = 0; k < n_series; k++)
        for (size_t i = 0; i < s[k].n; i++) {
            if (!isfinite(s[k].x[i]) || !isfinite(s[k].y[i])) continue;
            xmin = fmin(xmin, s[k].x[i]), xmax = fmax(xmax, s[k].x[i]);
            ymin = fmin(ymin, s[k].y[i]), ymax = fmax(ymax, s[k].y[i]);
        }
    if (!(xmax >= xmin)) {
        grid_text(g, r.x, r.y + 1, r.w, "no data yet", theme_dim(t));
        return;
    }
    if (xmax == xmin) xmax = xmin + 1;
    if (ymax == ymin) ymax = ymin + 1;
    char ylo[16], yhi[16], xlo[16], xhi[16];
    fmt_num(ylo, sizeof ylo, ymin);
    fmt_num(yhi, sizeof yhi, ymax);
    fmt_num(xlo, sizeof xlo, xmin);
    fmt_num(xhi, sizeof xhi, xmax);
    int lw = (int)fmax(strlen(ylo), strlen(yhi));
    int plot_x = r.x + lw + 1, plot_y = r.y + 1, plot_h = r.h - 3, plot_w = r.w - lw - 1;
    style dim = theme_dim(t);
    /* axes */
    grid_text(g, r.x + lw - (int)strlen(yhi), plot_y, lw, yhi, dim);
    grid_text(g, r.x + lw - (int)strlen(ylo), plot_y + plot_h - 1, lw, ylo, dim);
    for (int i = 0; i < plot_h; i++)
        grid_put(g, r.x + lw, plot_y + i, theme_glyph(t, (i == 0 || i == plot_h - 1) ? G_TEE_LEFT : G_VLINE), dim);
    grid_put(g, r.x + lw, plot_y + plot_h, theme_glyph(t, G_BL), dim);
    for (int i = 0; i < plot_w; i++) grid_put(g, plot_x + i, plot_y + plot_h, theme_glyph(t, G_HLINE), dim);
    grid_text(g, plot_x, plot_y + plot_h + 1, plot_w, xlo, dim);
    char right[64];
    snprintf(right, sizeof right, "%s %s", x_label ? x_label : "", xhi);
    int rw = utf8_width(right);
    if (rw + (int)strlen(xlo) + 1 < plot_w) grid_text(g, plot_x + plot_w - rw, plot_y + plot_h + 1, rw, right, dim);
    /* the dots */
    canvas c = {plot_w, plot_h, dots == DOTS_BRAILLE ? 2 : 1, dots == DOTS_BRAILLE ? 4 : dots == DOTS_BLOCKS ? 2 : 1, NULL, NULL};
    c.bits = gf_calloc((size_t)(c.cw * c.ch), 1);
    c.owner = gf_calloc((size_t)(c.cw * c.ch), 1);
    int W = c.cw * c.dx, H = c.ch * c.dy;
    for (int k = 0; k < n_series; k++) {
        int px = -1, py = -1;
        for (size_t i = 0; i < s[k].n; i++) {
            if (!isfinite(s[k].x[i]) || !isfinite(s[k].y[i])) { px = -1; continue; }
            int qx = (int)lround((s[k].x[i] - xmin) / (xmax - xmin) * (W - 1));
            int qy = (H - 1) - (int)lround((s[k].y[i] - ymin) / (ymax - ymin) * (H - 1));
            if (px < 0) canvas_dot(&c, qx, qy, k);
            else canvas_line(&c, px, py, qx, qy, k);
            px = qx, py = qy;
        }
    }
    for (int cy = 0; cy < c.ch; cy++)
        for (int cx = 0; cx < c.cw; cx++) {
            uint8_t bits = c.bits[cy * c.cw + cx];
            if (!bits) continue;
            char buf[4];
            int k = c.owner[cy * c.cw + cx];
            grid_put(g, plot_x + cx, plot_y + cy, cell_glyph(&c, bits, k, t, buf),
                     (style){theme_series_color(t, k), COLOR_DEFAULT, 0});
        }
    free(c.bits);
    free(c.owner);
}
