#include "grid.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "core/error.h"

static const cell blank = {" ", COLOR_DEFAULT, COLOR_DEFAULT, 0};

void grid_init(grid *g, int w, int h) {
    g->w = g->h = 0;
    g->cells = NULL;
    g->ellipsis = "\u2026";
    grid_resize(g, w, h);
}

void grid_resize(grid *g, int w, int h) {
    if (w < 0) w = 0;
    if (h < 0) h = 0;
    size_t n = (size_t)w * (size_t)h;
    if (n == 0) n = 1;
    if (!g->cells || n > (size_t)g->w * (size_t)g->h) g->cells = gf_realloc(g->cells, n * sizeof(cell));
    g->w = w;
    g->h = h;
    grid_clear(g);
}

void grid_free(grid *g) {
    free(g->cells);
    g->cells = NULL;
    g->w = g->h = 0;
}

void grid_clear(grid *g) {
    for (int i = 0; i < g->w * g->h; i++) g->cells[i] = blank;
}

cell *grid_at(grid *g, int x, int y) {
    if (x < 0 || y < 0 || x >= g->w || y >= g->h) return NULL;
    return &g->cells[y * g->w + x];
}

int utf8_seq_len(const char *s) {
    unsigned char c = (unsigned char)s[0];
    int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    for (int i = 1; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80) return 1;
    return n;
}

/* Terminal columns of the glyph at s (n bytes): 0 for combining marks and
 * other zero-width code points, 2 for East Asian wide and fullwidth ones
 * (utf8proc's table of the Unicode data), 1 otherwise and for invalid bytes. */
static int glyph_columns(const char *s, int n) {
    utf8proc_int32_t cp;
    if (utf8proc_iterate((const utf8proc_uint8_t *)s, n, &cp) != n) return 1;
    int w = utf8proc_charwidth(cp);
    return w < 0 ? 1 : w > 2 ? 2 : w;
}

int utf8_width(const char *s) {
    int w = 0;
    while (*s) {
        int n = utf8_seq_len(s);
        w += glyph_columns(s, n);
        s += n;
    }
    return w;
}

void grid_put(grid *g, int x, int y, const char *glyph, style s) {
    cell *c = grid_at(g, x, y);
    if (!c) return;
    int n = utf8_seq_len(glyph);
    if (!glyph[0]) n = 0;
    memcpy(c->ch, glyph, (size_t)n);
    c->ch[n] = 0;
    if (n == 0) strcpy(c->ch, " ");
    c->fg = s.fg;
    c->bg = s.bg;
    c->attr = s.attr;
}

int grid_text(grid *g, int x, int y, int max_w, const char *utf8, style s) {
    int col = 0;
    if (max_w > g->w - x) max_w = g->w - x;
    const char *p = utf8;
    while (*p && col < max_w) {
        int n = utf8_seq_len(p);
        char buf[5];
        memcpy(buf, p, (size_t)n);
        buf[n] = 0;
        if ((unsigned char)buf[0] < 0x20) strcpy(buf, " "); /* control characters never reach the screen */
        int w = glyph_columns(buf, n);
        if (col + w > max_w) break; /* a wide glyph that does not fit whole is not drawn */
        p += n;
        if (w == 0) continue;       /* a cell holds one glyph: combining marks are left out */
        grid_put(g, x + col, y, buf, s);
        if (w == 2) grid_put_continuation(g, x + col + 1, y, s);
        col += w;
    }
    if (*p && col > 0 && g->ellipsis) { /* cut short: say so, in the last column */
        cell *last = grid_at(g, x + col - 1, y);
        if (last && !last->ch[0] && col >= 2) { /* over a wide glyph: replace it whole */
            grid_put(g, x + col - 2, y, g->ellipsis, s);
            grid_put(g, x + col - 1, y, " ", s);
        } else {
            grid_put(g, x + col - 1, y, g->ellipsis, s);
        }
    }
    return col;
}

void grid_put_continuation(grid *g, int x, int y, style s) {
    cell *c = grid_at(g, x, y);
    if (!c) return;
    c->ch[0] = 0;
    c->fg = s.fg;
    c->bg = s.bg;
    c->attr = s.attr;
}

int grid_printf(grid *g, int x, int y, int max_w, style s, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return grid_text(g, x, y, max_w, buf, s);
}

void grid_fill(grid *g, rect r, const char *glyph, style s) {
    for (int y = r.y; y < r.y + r.h; y++)
        for (int x = r.x; x < r.x + r.w; x++) grid_put(g, x, y, glyph, s);
}

void grid_add_attr(grid *g, rect r, uint8_t attr) {
    for (int y = r.y; y < r.y + r.h; y++)
        for (int x = r.x; x < r.x + r.w; x++) {
            cell *c = grid_at(g, x, y);
            if (c) c->attr |= attr;
        }
}

size_t grid_row_text(const grid *g, int y, char *buf, size_t n) {
    size_t len = 0, keep = 0;
    if (n == 0) return 0;
    for (int x = 0; y >= 0 && y < g->h && x < g->w; x++) {
        const char *ch = g->cells[y * g->w + x].ch;
        size_t k = strlen(ch);
        if (len + k + 1 > n) break;
        memcpy(buf + len, ch, k);
        len += k;
        if (strcmp(ch, " ")) keep = len;
    }
    buf[keep] = 0;
    return keep;
}

size_t grid_to_text_buf(const grid *g, char *buf, size_t n) {
    size_t len = 0;
    for (int y = 0; y < g->h && len + 1 < n; y++) {
        len += grid_row_text(g, y, buf + len, n - len);
        if (len + 1 < n) buf[len++] = '\n';
    }
    if (n) buf[len < n ? len : n - 1] = 0;
    return len;
}

char *grid_to_text(const grid *g, size_t *len_out) {
    size_t n = (size_t)g->w * g->h * 4 + g->h + 1;
    char *buf = gf_malloc(n);
    size_t len = grid_to_text_buf(g, buf, n);
    if (len_out) *len_out = len;
    return buf;
}
