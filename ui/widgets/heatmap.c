#include "widgets/heatmap.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int digits(int n) {
    int d = 1;
    while (n >= 10) n /= 10, d++;
    return d;
}

static int label_width(const heatmap_spec *h) {
    int lw = digits(h->rows > 0 ? h->rows - 1 : 0);
    int tw = h->col_title ? (int)strlen(h->col_title) : 0;
    if (lw < 2) lw = 2;
    /* number, space, marker, space; the header's title must fit there too */
    return (tw + 1 > lw + 3 ? tw + 1 : lw + 3);
}

static int cell_w(const heatmap_spec *h) { return h->cell_w < 1 ? 1 : h->cell_w > 3 ? 3 : h->cell_w; }

int heatmap_width(const heatmap_spec *h) {
    int pitch = cell_w(h) + (h->gap ? 1 : 0);
    return label_width(h) + 1 + h->cols * pitch;
}

bool heatmap_uses_half_blocks(const theme *t) { return t->utf8 && t->depth != DEPTH_MONO; }
int heatmap_rows_per_line(const heatmap_spec *h, const theme *t) { return heatmap_uses_half_blocks(t) && !h->tall ? 2 : 1; }

static double value_at(const heatmap_spec *h, int r, int c) {
    if (r < 0 || r >= h->rows || c < 0 || c >= h->cols) return NAN;
    return h->values[r * h->cols + c];
}

/* Draws one character cell holding matrix rows r (upper) and r+1 (lower, half-block mode). */
static void draw_cell(grid *g, int x, int y, const heatmap_spec *h, const theme *t, int r, int c, int rpl) {
    int cw = cell_w(h);
    double up = scale_unit(&h->scale, value_at(h, r, c));
    const char *glyph = " ";
    style s = STYLE_PLAIN;
    if (rpl == 2) {
        double lo = r + 1 < h->rows ? scale_unit(&h->scale, value_at(h, r + 1, c)) : NAN;
        if (!isnan(up)) {
            glyph = theme_glyph(t, G_UPPER_HALF);
            s.fg = theme_scale_color(t, up);
            if (!isnan(lo)) s.bg = theme_scale_color(t, lo);
        } else if (!isnan(lo)) {
            glyph = theme_glyph(t, G_LOWER_HALF);
            s.fg = theme_scale_color(t, lo);
        }
    } else if (!isnan(up)) {
        if (t->depth == DEPTH_MONO) glyph = theme_shade(t, up);
        else if (t->utf8) glyph = theme_glyph(t, G_FULL), s.fg = theme_scale_color(t, up);
        else s.bg = theme_scale_color(t, up); /* ASCII: a coloured blank */
    }
    for (int i = 0; i < cw; i++) grid_put(g, x + i, y, glyph, s);
}

static const char *marker(const heatmap_spec *h, const theme *t, int r, int rpl) {
    if (!h->row_marked) return " ";
    bool a = r < h->rows && h->row_marked[r];
    bool b = rpl == 2 && r + 1 < h->rows && h->row_marked[r + 1];
    if (rpl == 1 || !t->utf8) return (a || b) ? theme_glyph(t, G_KEPT) : " ";
    return a && b ? theme_glyph(t, G_FULL) : a ? theme_glyph(t, G_UPPER_HALF) : b ? theme_glyph(t, G_LOWER_HALF) : " ";
}

void heatmap_draw(grid *g, rect r, const heatmap_spec *h, const theme *t, heatmap_layout *out) {
    heatmap_layout l = {0};
    l.cell_w = cell_w(h);
    l.pitch = l.cell_w + (h->gap ? 1 : 0);
    l.rows_per_line = heatmap_rows_per_line(h, t);
    l.rows = h->rows;
    l.cols = h->cols;
    int lw = label_width(h);
    l.x_cells = r.x + lw + 1;
    l.y_cells = r.y + 1;
    l.width = lw + 1 + h->cols * l.pitch;
    int avail = r.h - 1;
    if (avail < 1 || h->rows <= 0 || h->cols <= 0) {
        if (out) *out = l;
        return;
    }
    int total_lines = (h->rows + l.rows_per_line - 1) / l.rows_per_line;
    l.n_lines = total_lines < avail ? total_lines : avail;
    /* scroll in whole lines so the cursor stays visible */
    int first_line = h->first_row / l.rows_per_line;
    if (h->cursor_row >= 0) {
        int cl = h->cursor_row / l.rows_per_line;
        if (cl < first_line) first_line = cl;
        if (cl >= first_line + l.n_lines) first_line = cl - l.n_lines + 1;
    }
    if (first_line > total_lines - l.n_lines) first_line = total_lines - l.n_lines;
    if (first_line < 0) first_line = 0;
    l.first_row = first_line * l.rows_per_line;

    style dim = theme_dim(t), acc = theme_accent(t);
    /* header: title and column numbers, labelled every k columns so numbers fit */
    if (h->col_title) grid_text(g, r.x, r.y, lw, h->col_title, dim);
    int need = digits(h->cols - 1) + 1, k = 1;
    while (k * l.pitch < need) k++;
    for (int c = 0; c < h->cols; c++) {
        bool cur = c == h->cursor_col;
        if (c % k && !cur) continue;
        char num[12];
        snprintf(num, sizeof num, "%d", c);
        int x = l.x_cells + c * l.pitch;
        if (k == 1 && (int)strlen(num) < l.cell_w) x += l.cell_w - (int)strlen(num);
        if (cur) { /* clear neighbours' numbers under the cursor's */
            grid_fill(g, (rect){x, r.y, (int)strlen(num), 1}, " ", STYLE_PLAIN);
            grid_text(g, x, r.y, r.x + r.w - x, num, (style){acc.fg, acc.bg, ATTR_REVERSE | ATTR_BOLD});
        } else if (x + (int)strlen(num) <= r.x + r.w) {
            grid_text(g, x, r.y, r.x + r.w - x, num, dim);
        }
    }
    for (int line = 0; line < l.n_lines; line++) {
        int row = l.first_row + line * l.rows_per_line;
        int y = l.y_cells + line;
        bool cur_line = h->cursor_row >= row && h->cursor_row < row + l.rows_per_line;
        char num[12];
        snprintf(num, sizeof num, "%*d", lw - 3, cur_line ? h->cursor_row : row);
        style ls = cur_line ? (style){acc.fg, acc.bg, ATTR_REVERSE | ATTR_BOLD} : dim;
        grid_text(g, r.x, y, lw - 3, num, ls);
        grid_put(g, r.x + lw - 2, y, marker(h, t, row, l.rows_per_line), acc);
        for (int c = 0; c < h->cols; c++) {
            int x = l.x_cells + c * l.pitch;
            if (x + l.cell_w > r.x + r.w) break;
            draw_cell(g, x, y, h, t, row, c, l.rows_per_line);
        }
        if (cur_line && h->cursor_col >= 0 && h->cursor_col < h->cols) {
            int x = l.x_cells + h->cursor_col * l.pitch;
            if (h->gap) {
                grid_put(g, x - 1, y, "[", acc);
                grid_put(g, x + l.cell_w, y, "]", acc);
            } else {
                grid_add_attr(g, (rect){x, y, l.cell_w, 1}, ATTR_UNDERLINE | ATTR_BOLD);
            }
        }
    }
    if (out) *out = l;
}

bool heatmap_hit(const heatmap_layout *l, int x, int y, int *row, int *col) {
    if (l->pitch <= 0 || y < l->y_cells || y >= l->y_cells + l->n_lines || x < l->x_cells) return false;
    int c = (x - l->x_cells) / l->pitch;
    if (c >= l->cols || (x - l->x_cells) % l->pitch >= l->cell_w) return false;
    int rr = l->first_row + (y - l->y_cells) * l->rows_per_line;
    if (rr >= l->rows) return false;
    /* a click on a half-block line toggles between its two rows when already there */
    if (l->rows_per_line == 2 && *row == rr && *col == c && rr + 1 < l->rows) rr++;
    *row = rr;
    *col = c;
    return true;
}
