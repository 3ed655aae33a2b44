#include "screens/screens.h"

#include <stdio.h>
#include <string.h>

void views_init(views *v) {
    memset(v, 0, sizeof *v);
    for (int m = 0; m < MET_COUNT; m++) v->stats.log_scale[m] = metric_get((head_metric)m)->log_scale;
    v->calibrate.layer = -1;
    v->align.layer = -1;
    v->results.cursor = -1;
    v->results.sort_col = -1;
    v->results.sel_seq = -1;
    v->log.hit = -1;
}

void draw_box(grid *g, rect r, const theme *t, style s) {
    if (r.w < 2 || r.h < 2) return;
    for (int x = r.x + 1; x < r.x + r.w - 1; x++) {
        grid_put(g, x, r.y, theme_glyph(t, G_HLINE), s);
        grid_put(g, x, r.y + r.h - 1, theme_glyph(t, G_HLINE), s);
    }
    for (int y = r.y + 1; y < r.y + r.h - 1; y++) {
        grid_put(g, r.x, y, theme_glyph(t, G_VLINE), s);
        grid_put(g, r.x + r.w - 1, y, theme_glyph(t, G_VLINE), s);
    }
    grid_put(g, r.x, r.y, theme_glyph(t, G_TL), s);
    grid_put(g, r.x + r.w - 1, r.y, theme_glyph(t, G_TR), s);
    grid_put(g, r.x, r.y + r.h - 1, theme_glyph(t, G_BL), s);
    grid_put(g, r.x + r.w - 1, r.y + r.h - 1, theme_glyph(t, G_BR), s);
}

void draw_unavailable(ui *u, grid *g, rect r, const char *needed, const char *hint) {
    char line[256];
    snprintf(line, sizeof line, "not available yet: %s", needed);
    int w = utf8_width(line) + 4;
    if (hint && utf8_width(hint) + 4 > w) w = utf8_width(hint) + 4;
    if (w > r.w) w = r.w;
    int h = hint ? 4 : 3;
    rect box = {r.x + (r.w - w) / 2, r.y + (r.h - h) / 2, w, h};
    if (box.y < r.y) box.y = r.y;
    draw_box(g, box, &u->th, theme_dim(&u->th));
    grid_text(g, box.x + 2, box.y + 1, w - 4, line, theme_accent(&u->th));
    if (hint) grid_text(g, box.x + 2, box.y + 2, w - 4, hint, STYLE_PLAIN);
}

void draw_tail(grid *g, int x, int y, int w, const char *text, style s, const theme *t) {
    int tw = utf8_width(text);
    if (tw <= w || w < 2) {
        grid_text(g, x, y, w, text, s);
        return;
    }
    grid_text(g, x, y, 1, theme_glyph(t, G_ELLIPSIS), s);
    for (int skip = tw - (w - 1); skip > 0 && *text; skip--) text += utf8_seq_len(text);
    grid_text(g, x + 1, y, w - 1, text, s);
}

int draw_wrapped(grid *g, int x, int y, int w, int max_lines, const char *text, style s) {
    int lines = 0;
    while (*text && lines < max_lines && w > 0) {
        /* glyphs that fit, then back to the last space when the text goes on */
        const char *p = text, *brk = NULL;
        int k = 0;
        while (*p && k < w) {
            if (*p == ' ') brk = p;
            p += utf8_seq_len(p);
            k++;
        }
        const char *end = *p && brk && brk > text && lines + 1 < max_lines ? brk : p;
        if (lines + 1 == max_lines) end = text + strlen(text); /* the last line: cut with an ellipsis */
        char buf[1024];
        snprintf(buf, sizeof buf, "%.*s", (int)(end - text), text);
        grid_text(g, x, y + lines, w, buf, s);
        lines++;
        text = end;
        while (*text == ' ') text++;
    }
    return lines;
}
