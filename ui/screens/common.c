#include "screens/screens.h"

#include <stdio.h>
#include <string.h>

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
