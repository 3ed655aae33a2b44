#include "widgets/bars.h"

#include <stdio.h>
#include <string.h>


static int total_width(const char *const *names, int n, int per_tab) {
    int s = 1;
    for (int i = 0; i < n; i++) s += utf8_width(names[i]) + per_tab;
    return s;
}

/* Glyphs kept of each inactive tab so that the compact bar fits w (64: all). */
static int compact_len(const char *const *names, int n, int active, int w) {
    for (int cut = 64; cut > 1; cut--) {
        int total = n - 1;
        for (int i = 0; i < n; i++) {
            int tw = utf8_width(names[i]);
            total += i == active || tw < cut ? tw : cut;
        }
        if (total <= w) return cut;
    }
    return 1;
}

void tabbar_draw(grid *g, int y, int w, const char *const *names, int n, int active, const theme *t,
                 tabbar_hits *hits) {
    if (n > TABBAR_MAX) n = TABBAR_MAX;
    tabbar_hits h = {.n = n, .y = y};
    style dim = theme_dim(t), acc = theme_accent(t);
    style on = {acc.fg, acc.bg, ATTR_REVERSE | ATTR_BOLD};
    bool boxed = total_width(names, n, 3) <= w; /* "┌" then " name ┬" per tab */
    int x = 0;
    if (boxed) grid_put(g, x++, y, theme_glyph(t, G_TL), dim);
    for (int i = 0; i < n; i++) {
        if (!boxed && x > 0) x++;
        int tw = utf8_width(names[i]);
        h.x0[i] = x;
        if (boxed) {
            grid_put(g, x++, y, " ", i == active ? on : STYLE_PLAIN);
            grid_text(g, x, y, w - x, names[i], i == active ? on : STYLE_PLAIN);
            x += tw;
            grid_put(g, x++, y, " ", i == active ? on : STYLE_PLAIN);
            h.x1[i] = x;
            grid_put(g, x++, y, theme_glyph(t, i == n - 1 ? G_TR : G_TEE_DOWN), dim);
        } else {
            /* compact: "1 Teacher 2 Plan ..."; if still too wide, inactive tabs cut to the
             * longest length that fits ("4 Calib"), down to their number */
            char name[64];
            int cut = i == active ? 64 : compact_len(names, n, active, w);
            int k = 0, bytes = 0;
            for (const char *p = names[i]; *p && k < cut; k++) p += utf8_seq_len(p), bytes = (int)(p - names[i]);
            snprintf(name, sizeof name, "%.*s", bytes, names[i]);
            for (size_t e = strlen(name); e > 1 && name[e - 1] == ' ';) name[--e] = 0; /* "1 " -> "1" */
            x += grid_text(g, x, y, w - x, name, i == active ? on : STYLE_PLAIN);
            h.x1[i] = x;
        }
    }
    if (hits) *hits = h;
}

int tabbar_hit(const tabbar_hits *h, int x, int y) {
    if (y != h->y) return -1;
    for (int i = 0; i < h->n; i++)
        if (x >= h->x0[i] && x < h->x1[i]) return i;
    return -1;
}

void keybar_draw(grid *g, int y, int w, const key_hint *hints, int n, const theme *t) {
    style acc = theme_accent(t);
    int x = 1;
    for (int i = 0; i < n; i++) {
        const char *k = t->utf8 || !hints[i].ascii_key ? hints[i].key : hints[i].ascii_key;
        int need = utf8_width(k) + 1 + utf8_width(hints[i].label) + 2;
        if (x + need - 2 > w) break;
        x += grid_text(g, x, y, w - x, k, acc);
        x += grid_text(g, x + 1, y, w - x - 1, hints[i].label, STYLE_PLAIN) + 3;
    }
}
