/* Screens waiting for the engine: each says what it needs.
 * 6 Recover draws its loss series as soon as loss events arrive. */
#include <stdio.h>
#include <string.h>

#include "screens/screens.h"
#include "widgets/charts.h"

static void draw_series(ui *u, grid *g, rect r, const char *title, const char *needed, const char *hint) {
    const app_state *st = u->st;
    if (st->n_series == 0) {
        draw_unavailable(u, g, r, needed, hint);
        return;
    }
    chart_series s[APP_MAX_SERIES];
    for (int i = 0; i < st->n_series; i++)
        s[i] = (chart_series){st->series[i].name, st->series[i].x, st->series[i].y, st->series[i].n};
    grid_text(g, r.x + 1, r.y, r.w - 2, title, theme_accent(&u->th));
    linechart_draw(g, (rect){r.x + 1, r.y + 1, r.w - 2, r.h - 1}, s, st->n_series, "step", dots_for(&u->th), &u->th);
}

static void draw_recover(ui *u, grid *g, rect r) {
    draw_series(u, g, r, "recovery race, KL per token", "recovery training curves", "needs the train job: graft train STUDENT --teacher MODEL");
}

const screen screen_recover = {"Recover", draw_recover, NULL, NULL, NULL, 0};
