/* The frame: top line, tab bar, the current screen, key bar, overlays; global keys. */
#include "ui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/error.h"
#include "keys.h"
#include "screens/screens.h"

static const screen *const screens[SCR_COUNT] = {
    &screen_teacher, &screen_plan, &screen_stats, &screen_calibrate,
    &screen_align,   &screen_recover, &screen_results, &screen_log,
};

const screen *ui_screen(int i) { return i >= 0 && i < SCR_COUNT ? screens[i] : NULL; }

void ui_init(ui *u, app_state *st, job_runner *jr, theme th) {
    memset(u, 0, sizeof *u);
    u->st = st;
    u->jr = jr;
    u->th = th;
    u->th.palette = st->palette;
    u->screen = SCR_STATS;
    u->cal_layer = -1;
    u->al_layer = -1;
    for (int m = 0; m < MET_COUNT; m++) u->log_scale[m] = metric_get((head_metric)m)->log_scale;
}

bool ui_select_screen(ui *u, const char *name) {
    for (int i = 0; i < SCR_COUNT; i++) {
        char num[12];
        snprintf(num, sizeof num, "%d", i + 1);
        if (!strcasecmp(name, screens[i]->title) || !strcmp(name, num)) {
            u->screen = i;
            u->typing = false;
            return true;
        }
    }
    return false;
}

static bool job_active(const ui *u) { return u->jr ? job_running(u->jr) : u->st->job.active; }

static void draw_top_line(ui *u, grid *g) {
    const app_state *st = u->st;
    style acc = theme_accent(&u->th), dim = theme_dim(&u->th);
    const char *dot = theme_glyph(&u->th, G_MIDDOT);
    int x = grid_text(g, 1, 0, g->w, "graft", acc) + 3;
    char left[400] = "no teacher loaded";
    if (st->teacher[0]) {
        int n = snprintf(left, sizeof left, "%s", st->teacher);
        if (st->shape[0] && n < (int)sizeof left) n += snprintf(left + n, sizeof left - n, " %s %s", dot, st->shape);
        if (st->device[0] && n < (int)sizeof left) snprintf(left + n, sizeof left - n, " %s %s", dot, st->device);
    }
    char right[160] = "";
    if (job_active(u)) {
        const char *name = u->jr ? job_current_name(u->jr) : st->job.name;
        bool have = st->job.total > 0 && !strcmp(st->job.name, name);
        char eta[24] = "", stale[32] = "";
        if (have && st->job.eta_s >= 0) snprintf(eta, sizeof eta, " eta %.0fs", st->job.eta_s);
        /* never freeze: say the data is late instead */
        if (u->now > 0 && u->last_event > 0 && u->now - u->last_event >= 5)
            snprintf(stale, sizeof stale, " (stale %.0fs)", u->now - u->last_event);
        if (have)
            snprintf(right, sizeof right, "%s %s %.0f/%.0f %3.0f%%%s%s", theme_glyph(&u->th, G_BULLET), name,
                     st->job.done, st->job.total, 100 * st->job.fraction, eta, stale);
        else
            snprintf(right, sizeof right, "%s %s%s", theme_glyph(&u->th, G_BULLET), name, stale);
    }
    int rw = utf8_width(right);
    grid_text(g, x, 0, g->w - x - rw - 2, left, dim);
    if (rw) grid_text(g, g->w - rw - 1, 0, rw, right, acc);
}

static const key_hint global_keys[] = {
    {"?", NULL, "help"}, {"q", NULL, "quit"}, {"c", NULL, "cancel"},
    {"\u23ce", "Enter", "run"}, {"p", NULL, "palette"}, {"1-8", NULL, "screens"},
};

static int keys_width(const key_hint *k, int n, const theme *t) {
    int w = 1;
    for (int i = 0; i < n; i++)
        w += utf8_width(t->utf8 || !k[i].ascii_key ? k[i].key : k[i].ascii_key) + 1 + utf8_width(k[i].label) + 2;
    return w;
}

static void draw_key_bar(ui *u, grid *g, int y) {
    const screen *s = screens[u->screen];
    key_hint all[24];
    int n = 0;
    if (u->confirm_quit) {
        all[n++] = (key_hint){"y", NULL, "quit (cancels the job)"};
        all[n++] = (key_hint){"n", NULL, "stay"};
    } else if (u->typing) { /* every key edits the text until Enter or Esc */
        all[n++] = (key_hint){"\u23ce", "Enter", "open"};
        all[n++] = (key_hint){"Esc", NULL, "cancel"};
        all[n++] = (key_hint){"^U", NULL, "clear"};
        all[n++] = (key_hint){"\u2190\u2192", "left/right", "move"};
    } else {
        /* screen keys that fit, but always room for help and quit */
        for (int i = 0; i < s->n_keys && n < 16; i++) all[n++] = s->keys[i];
        while (n > 0 && keys_width(all, n, &u->th) + 16 > g->w) n--;
        for (int i = 0; i < (int)(sizeof global_keys / sizeof global_keys[0]); i++) {
            if (i == 2 && !job_active(u)) continue;
            all[n++] = global_keys[i];
        }
    }
    char bufs[24][2];
    for (int i = 0; i < n; i++) {
        all[i].key = keymap_show(&u->st->keys, all[i].key, bufs[i]);
        if (all[i].key == bufs[i]) all[i].ascii_key = NULL;
    }
    keybar_draw(g, y, g->w, all, n, &u->th);
}

static void draw_help(ui *u, grid *g) {
    static const char *global[] = {
        "1-8, Tab, Shift-Tab  switch screens (or click a tab)",
        "Left/Right           switch screens where arrows are not used",
        "Enter                run this screen's job",
        "c                    cancel the running job",
        "p                    cycle the colour palette",
        "?, F1                this help (any key closes it)",
        "q                    quit (asks while a job runs)",
    };
    const screen *s = screens[u->screen];
    int n = (int)(sizeof global / sizeof global[0]) + s->n_keys + 3;
    int w = 64 < g->w - 2 ? 64 : g->w - 2, h = n + 2 < g->h - 2 ? n + 2 : g->h - 2;
    rect box = {(g->w - w) / 2, (g->h - h) / 2, w, h};
    grid_fill(g, box, " ", STYLE_PLAIN);
    draw_box(g, box, &u->th, theme_accent(&u->th));
    grid_text(g, box.x + 2, box.y, w - 4, " help ", theme_accent(&u->th));
    int y = box.y + 1, max_y = box.y + h - 1;
    for (int i = 0; i < (int)(sizeof global / sizeof global[0]) && y < max_y; i++)
        grid_text(g, box.x + 2, y++, w - 4, global[i], STYLE_PLAIN);
    if (y < max_y) y++;
    char line[160];
    snprintf(line, sizeof line, "on %s:", s->title);
    if (y < max_y) grid_text(g, box.x + 2, y++, w - 4, line, theme_accent(&u->th));
    for (int i = 0; i < s->n_keys && y < max_y; i++) {
        char kb[2];
        const char *k = u->th.utf8 || !s->keys[i].ascii_key ? s->keys[i].key : s->keys[i].ascii_key;
        k = keymap_show(&u->st->keys, k, kb);
        /* pad by glyphs, not bytes, for UTF-8 keys */
        int pad = 21 - utf8_width(k);
        snprintf(line, sizeof line, "%s%*s%s", k, pad > 1 ? pad : 1, "", s->keys[i].label);
        grid_text(g, box.x + 2, y++, w - 4, line, STYLE_PLAIN);
    }
}

void ui_render(ui *u, grid *g) {
    grid_clear(g);
    if (g->w < 20 || g->h < 6) {
        grid_text(g, 0, 0, g->w, "window too small", STYLE_PLAIN);
        return;
    }
    u->th.palette = u->st->palette;
    draw_top_line(u, g);
    const char *names[SCR_COUNT];
    char buf[SCR_COUNT][24];
    for (int i = 0; i < SCR_COUNT; i++) {
        snprintf(buf[i], sizeof buf[i], "%d %s", i + 1, screens[i]->title);
        names[i] = buf[i];
    }
    tabbar_draw(g, 1, g->w, names, SCR_COUNT, u->screen, &u->th, &u->tabs);
    int status_h = u->status[0] ? 1 : 0;
    rect body = {0, 2, g->w, g->h - 3 - status_h};
    screens[u->screen]->draw(u, g, body);
    if (status_h) grid_text(g, 1, g->h - 2, g->w - 2, u->status, theme_accent(&u->th));
    draw_key_bar(u, g, g->h - 1);
    if (u->help) draw_help(u, g);
    if (u->confirm_quit) {
        const char *q = "A job is running. Quit anyway? (y/n)";
        int w = utf8_width(q) + 4;
        rect box = {(g->w - w) / 2, g->h / 2 - 1, w, 3};
        grid_fill(g, box, " ", STYLE_PLAIN);
        draw_box(g, box, &u->th, theme_accent(&u->th));
        grid_text(g, box.x + 2, box.y + 1, w - 4, q, theme_accent(&u->th));
    }
}

static void start_run(ui *u) {
    app_state *st = u->st;
    if (!st->run || !u->jr) {
        snprintf(u->status, sizeof u->status, "nothing to run here yet: no engine job is wired to %s",
                 screens[u->screen]->title);
        return;
    }
    if (st->run(st, u->jr, u->screen) != 0) {
        snprintf(u->status, sizeof u->status, "%s", gf_last_error());
        app_state_log(st, "%s", gf_last_error());
    } else {
        snprintf(u->status, sizeof u->status, "started %s", job_current_name(u->jr));
        u->last_event = u->now; /* staleness counts from the start */
    }
}

bool ui_key(ui *u, int key) {
    u->status[0] = 0;
    /* typing: raw keys to the screen's entry (no key map, no global keys) */
    if (u->typing && !u->help && !u->confirm_quit && screens[u->screen]->key) {
        screens[u->screen]->key(u, key);
        return true;
    }
    key = keymap_translate(&u->st->keys, key);
    if (u->confirm_quit) {
        if (key == 'y' || key == 'Y') {
            if (u->jr) job_cancel(u->jr);
            u->quit = true;
        }
        u->confirm_quit = false;
        return true;
    }
    if (u->help) { /* any key closes help */
        u->help = false;
        return true;
    }
    if (screens[u->screen]->key && screens[u->screen]->key(u, key)) return true;
    switch (key) {
    case '?':
    case UK_F1: u->help = true; return true;
    case 'q':
    case 'Q':
        if (job_active(u)) u->confirm_quit = true;
        else u->quit = true;
        return true;
    case 'c':
        if (u->jr && job_running(u->jr)) {
            job_cancel(u->jr);
            snprintf(u->status, sizeof u->status, "cancelling %s ...", job_current_name(u->jr));
        } else {
            snprintf(u->status, sizeof u->status, "no job is running");
        }
        return true;
    case 'p':
        u->st->palette = (u->st->palette + 1) % palette_count();
        snprintf(u->status, sizeof u->status, "palette: %s", palette_name(u->st->palette));
        return true;
    case UK_TAB:
    case UK_RIGHT: u->screen = (u->screen + 1) % SCR_COUNT; return true;
    case UK_BTAB:
    case UK_LEFT: u->screen = (u->screen + SCR_COUNT - 1) % SCR_COUNT; return true;
    case UK_ENTER: start_run(u); return true;
    default:
        if (key >= '1' && key < '1' + SCR_COUNT) {
            u->screen = key - '1';
            return true;
        }
    }
    return false;
}

bool ui_click(ui *u, int x, int y) {
    if (u->help || u->confirm_quit) {
        u->help = false;
        return true;
    }
    int tab = tabbar_hit(&u->tabs, x, y);
    if (tab >= 0) {
        u->typing = false;
        u->screen = tab;
        return true;
    }
    const screen *s = screens[u->screen];
    return s->click ? s->click(u, x, y) : false;
}
