/* Screens waiting for the engine: each says what it needs.
 * 2 Plan shows the kept-layer plan once app_state has one. */
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

const screen screen_plan = {"Plan", draw_plan, NULL, NULL, NULL, 0};
