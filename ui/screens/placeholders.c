/* Screens waiting for the engine: each says what it needs.
 * 2 Plan shows the kept-layer plan once app_state has one; 5 Align draws its loss series as soon as loss events arrive. */
#include <stdio.h>
#include <string.h>

#include "screens/screens.h"
#include "widgets/charts.h"

static void draw_plan(ui *u, grid *g, rect r) {
    const app_state *st = u->st;
    if (!st->kept || !st->n_layers) {
        draw_unavailable(u, g, r, "a layer plan (which layers keep attention)",
                         "needs the layer-selection job: graft select MODEL --strategy S --keep R");
        return;
    }
    char labels[256][12];
    const char *lp[256], *marks[256];
    double v[256];
    int n = st->n_layers < 256 ? st->n_layers : 256, kept = 0;
    for (int i = 0; i < n; i++) {
        snprintf(labels[i], sizeof labels[i], "%d", i);
        lp[i] = labels[i];
        v[i] = st->layer_score ? st->layer_score[i] : (st->kept[i] ? 1 : 0);
        marks[i] = st->kept[i] ? "attention" : "GDN";
        kept += st->kept[i];
    }
    grid_printf(g, r.x + 1, r.y, r.w - 2, STYLE_PLAIN, "strategy %s   %d of %d layers keep attention",
                st->strategy[0] ? st->strategy : "-", kept, st->n_layers);
    int rows = r.h - 1;
    if (n > rows && rows > 1) { /* no scrolling yet: say what is cut */
        grid_printf(g, r.x + 1, r.y + rows, r.w - 2, theme_dim(&u->th), "%s %d more layers",
                    theme_glyph(&u->th, G_ELLIPSIS), n - (rows - 1));
        rows--;
    }
    hbars_draw(g, (rect){r.x + 1, r.y + 1, r.w - 2, rows}, lp, v, n < rows ? n : rows, 0, 1, marks, &u->th);
}

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
static void draw_calibrate(ui *u, grid *g, rect r) {
    draw_unavailable(u, g, r, "Taylor-Calibrate results (Stage 1)", "needs the calibrate job; its beta*, sigma* and half-lives also appear on Stats");
}

const screen screen_plan = {"Plan", draw_plan, NULL, NULL, NULL, 0};
const screen screen_calibrate = {"Calibrate", draw_calibrate, NULL, NULL, NULL, 0};
const screen screen_align = {"Align", draw_align, NULL, NULL, NULL, 0};
