/* 7 Results: one row per run (strategy, keep, init, perplexity, KL ...). */
#include <string.h>

#include "screens/screens.h"

static void draw(ui *u, grid *g, rect r) {
    const app_state *st = u->st;
    if (st->n_results == 0 || st->n_result_cols == 0) {
        draw_unavailable(u, g, r, "results of converted students", "convert and evaluate a student first (graft convert, graft eval)");
        return;
    }
    int widths[APP_RESULT_COLS];
    for (int c = 0; c < st->n_result_cols; c++) {
        widths[c] = utf8_width(st->result_header[c]);
        for (int i = 0; i < st->n_results; i++) {
            const char *s = st->results[i].cells[c];
            if (s && utf8_width(s) > widths[c]) widths[c] = utf8_width(s);
        }
    }
    int x = r.x + 1;
    for (int c = 0; c < st->n_result_cols; c++) {
        grid_text(g, x, r.y, r.x + r.w - x, st->result_header[c], theme_accent(&u->th));
        x += widths[c] + 2;
    }
    for (int i = 0; i < st->n_results && 1 + i < r.h; i++) {
        x = r.x + 1;
        for (int c = 0; c < st->n_result_cols; c++) {
            const char *s = st->results[i].cells[c];
            if (s) grid_text(g, x, r.y + 1 + i, r.x + r.w - x, s, STYLE_PLAIN);
            x += widths[c] + 2;
        }
    }
}

const screen screen_results = {"Results", draw, NULL, NULL, NULL, 0};
