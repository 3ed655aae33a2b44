/* Screens waiting for the engine: each says what it needs.
 * 5 Align and 6 Recover draw their loss series as soon as loss events arrive. */
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

static void draw_align(ui *u, grid *g, rect r) {
    draw_series(u, g, r, "alignment loss", "alignment losses (Stage 2)", "needs the align job: graft convert ... --init taylor-calibrate");
}
static void draw_recover(ui *u, grid *g, rect r) {
    draw_series(u, g, r, "recovery race, KL per token", "recovery training curves", "needs the train job: graft train STUDENT --teacher MODEL");
}
static void draw_calibrate(ui *u, grid *g, rect r) {
    draw_unavailable(u, g, r, "Taylor-Calibrate results (Stage 1)", "needs the calibrate job; its beta*, sigma* and half-lives also appear on Stats");
}

const screen screen_calibrate = {"Calibrate", draw_calibrate, NULL, NULL, NULL, 0};
const screen screen_align = {"Align", draw_align, NULL, NULL, NULL, 0};
const screen screen_recover = {"Recover", draw_recover, NULL, NULL, NULL, 0};
