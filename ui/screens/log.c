/* 8 Log: every log line, error and job event, newest at the bottom. */
#include <stdio.h>

#include "keys.h"
#include "screens/screens.h"

static void draw(ui *u, grid *g, rect r) {
    const app_state *st = u->st;
    if (st->n_log == 0) {
        grid_text(g, r.x + 1, r.y, r.w - 2, "(the log is empty)", theme_dim(&u->th));
        return;
    }
    int rows = r.h;
    int max_scroll = st->n_log > rows ? st->n_log - rows : 0;
    if (u->log_scroll > max_scroll) u->log_scroll = max_scroll;
    if (u->log_scroll < 0) u->log_scroll = 0;
    int first = st->n_log - rows - u->log_scroll;
    if (first < 0) first = 0;
    for (int i = 0; i < rows && first + i < st->n_log; i++)
        grid_text(g, r.x + 1, r.y + i, r.w - 2, app_state_log_line(st, first + i), STYLE_PLAIN);
    if (u->log_scroll) {
        char more[48];
        snprintf(more, sizeof more, "[%d newer lines below]", u->log_scroll);
        grid_text(g, r.x + r.w - utf8_width(more) - 1, r.y + r.h - 1, r.w, more, theme_accent(&u->th));
    }
}

static bool key(ui *u, int k) {
    switch (k) {
    case UK_UP: u->log_scroll++; return true;
    case UK_DOWN: u->log_scroll--; return true;
    case UK_PGUP: u->log_scroll += 10; return true;
    case UK_PGDN: u->log_scroll -= 10; return true;
    case UK_HOME: u->log_scroll = u->st->n_log; return true;
    case UK_END: u->log_scroll = 0; return true;
    }
    return false;
}

static const key_hint keys[] = {{"\u2191\u2193", "^v", "scroll"}, {"End", NULL, "newest"}};
const screen screen_log = {"Log", draw, key, NULL, keys, sizeof keys / sizeof keys[0]};
