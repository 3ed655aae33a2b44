/* 1 Teacher: what is loaded, in words. */
#include <stdio.h>

#include "screens/screens.h"

static void draw(ui *u, grid *g, rect r) {
    const app_state *st = u->st;
    if (!st->teacher[0]) {
        draw_unavailable(u, g, r, "a teacher model", "start graft with MODEL (graft tui MODEL) or run graft inspect");
        return;
    }
    int y = r.y + 1;
    grid_text(g, r.x + 2, y++, r.w - 4, st->teacher, theme_accent(&u->th));
    if (st->shape[0]) grid_text(g, r.x + 2, y++, r.w - 4, st->shape, STYLE_PLAIN);
    if (st->device[0]) grid_printf(g, r.x + 2, y++, r.w - 4, STYLE_PLAIN, "device: %s", st->device);
    y++;
    for (int i = 0; i < st->n_teacher_lines && y < r.y + r.h; i++)
        grid_text(g, r.x + 2, y++, r.w - 4, st->teacher_lines[i], STYLE_PLAIN);
    if (st->strategy[0] && y + 1 < r.y + r.h)
        grid_printf(g, r.x + 2, ++y, r.w - 4, theme_dim(&u->th), "session: strategy %s, keep %.0f%%, corpus %s",
                    st->strategy, st->keep_ratio * 100, st->corpus[0] ? st->corpus : "-");
}

const screen screen_teacher = {"Teacher", draw, NULL, NULL, NULL, 0};
