/* The frame: top line (teacher and the resource meter), tabs, the current
 * screen, the job line, the key bar, overlays; global keys. */
#include "ui.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/error.h"
#include "keys.h"
#include "screens/screens.h"
#include "widgets/wrap.h"

static const screen *const screens[SCR_COUNT] = {
    &screen_teacher, &screen_plan,    &screen_stats, &screen_calibrate, &screen_align,
    &screen_recover, &screen_results, &screen_log,   &screen_settings,
};

const screen *ui_screen(int i) { return i >= 0 && i < SCR_COUNT ? screens[i] : NULL; }

void ui_init(ui *u, app_state *st, job_runner *jr, ui_prefs *prefs, theme th) {
    memset(u, 0, sizeof *u);
    u->st = st;
    u->jr = jr;
    u->prefs = prefs;
    u->th = th;
    u->th.palette = prefs->palette;
    u->screen = SCR_STATS;
    meter_init(&u->meter);
    views_init(&u->v);
}

void ui_say(ui *u, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(u->status, sizeof u->status, fmt, ap);
    va_end(ap);
    u->status_job = 0;
    u->status_at = u->now;
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

static void fmt_duration(char *b, size_t n, double s) {
    if (s < 0) snprintf(b, n, "?");
    else if (s < 10) snprintf(b, n, "%.1fs", s);
    else if (s < 60) snprintf(b, n, "%.0fs", s);
    else if (s < 3600) snprintf(b, n, "%dm%02ds", (int)s / 60, (int)s % 60);
    else snprintf(b, n, "%dh%02dm", (int)s / 3600, (int)s / 60 % 60);
}

/* "graft  name · 30 layers · 9 heads (3 KV) · d 576" on the left, the meter on the right:
 * when room is short the meter shortens, then shape parts go whole (never "d 57"),
 * then the name is cut with an ellipsis. */
static void draw_top_line(ui *u, grid *g) {
    const app_state *st = u->st;
    const teacher_state *t = app_cur(st);
    style acc = theme_accent(&u->th), dim = theme_dim(&u->th);
    const char *dot = theme_glyph(&u->th, G_MIDDOT);
    int x = grid_text(g, 1, 0, g->w, "graft", acc) + 3;
    if (st->read_only) /* another graft tui writes this session: nothing here is saved */
        x += grid_text(g, x - 1, 0, g->w - x, "[read-only]", theme_accent(&u->th)) + 1;
    char name[200], parts[6][64];
    int n_parts = 0;
    if (t) {
        snprintf(name, sizeof name, "%s%s", t->name, t->loaded ? "" : " (not loaded)");
        char shape[160];
        snprintf(shape, sizeof shape, "%s", t->shape);
        for (char *p = strtok(shape, "\xc2\xb7"); p && n_parts < 5; p = strtok(NULL, "\xc2\xb7")) {
            while (*p == ' ') p++;
            size_t len = strlen(p);
            while (len && p[len - 1] == ' ') p[--len] = 0;
            if (len) snprintf(parts[n_parts++], sizeof parts[0], "%s", p);
        }
    } else if (st->opening[0]) {
        snprintf(name, sizeof name, "opening %.180s", st->opening);
    } else {
        snprintf(name, sizeof name, "no teacher loaded");
    }
    /* where jobs run: the settings' device (and threads on the cpu) */
    if (strcmp(settings_device_name(&st->settings), "cpu"))
        snprintf(parts[n_parts++], sizeof parts[0], "%s", settings_device_name(&st->settings));
    else if (st->settings.threads > 0)
        snprintf(parts[n_parts++], sizeof parts[0], "%s %d threads", settings_device_name(&st->settings), st->settings.threads);
    else
        snprintf(parts[n_parts++], sizeof parts[0], "%s %d threads", settings_device_name(&st->settings), u->meter.cores);
    int room = g->w - x - 1;
    char meter[128];
    meter_format(&u->meter, meter, sizeof meter, room / 2);
    int mw = utf8_width(meter);
    if (mw) room -= mw + 2;
    /* drop shape parts from the end while the line does not fit */
    for (;;) {
        int need = utf8_width(name);
        for (int i = 0; i < n_parts; i++) need += 3 + utf8_width(parts[i]);
        if (need <= room || n_parts == 0) break;
        n_parts--;
    }
    char left[600];
    int len = snprintf(left, sizeof left, "%s", name);
    for (int i = 0; i < n_parts && len < (int)sizeof left; i++)
        len += snprintf(left + len, sizeof left - (size_t)len, " %s %s", dot, parts[i]);
    grid_text(g, x, 0, room, left, t ? dim : theme_dim(&u->th));
    if (mw) grid_text(g, g->w - mw - 1, 0, mw, meter, dim);
}

/* The running job over the whole job (phases weighted): bar, percent, phase, elapsed, ETA. */
static void draw_job_line(ui *u, grid *g, int y) {
    const app_state *st = u->st;
    const job_status *j = &st->job;
    style acc = theme_accent(&u->th), dim = theme_dim(&u->th);
    /* a message answers the last key; while a job runs, its line comes back after a few seconds
     * (at once when the message only said the job started or is being cancelled) */
    bool say = u->status[0] && !(j->active && (u->status_job == j->id || (u->now > 0 && u->now - u->status_at >= 4)));
    if (say) {
        grid_text(g, 1, y, g->w - 2, u->status, acc);
        return;
    }
    if (!j->active) { /* the last job's outcome, until the next one */
        const job_record *r = app_job_at(st, st->n_hist - 1);
        if (!r || r->outcome == JOB_RUNNING) return;
        char took[24], line[400];
        fmt_duration(took, sizeof took, r->seconds);
        if (r->outcome == JOB_DONE) snprintf(line, sizeof line, "last job: %s done in %s", r->name, took);
        else if (r->outcome == JOB_FAILED) snprintf(line, sizeof line, "last job: %s failed after %s: %s", r->name, took, r->text);
        else if (r->outcome == JOB_INTERRUPTED) { /* the workbench ended under it (a hang-up, a signal) */
            char at[200];
            app_job_progress_text(r, at, sizeof at);
            snprintf(line, sizeof line, "last job: %s interrupted %s (8 Log, h: the history)", r->name, at);
        }
        else if (r->cancel_latency_s >= 0)
            snprintf(line, sizeof line, "last job: %s cancelled after %s (stopped %.2f s after c)", r->name, took,
                     r->cancel_latency_s);
        else snprintf(line, sizeof line, "last job: %s cancelled after %s", r->name, took);
        grid_text(g, 1, y, g->w - 2, line, r->outcome == JOB_FAILED || r->outcome == JOB_INTERRUPTED ? acc : dim);
        return;
    }
    double now = u->now > 0 ? u->now : job_now();
    char elapsed[24], eta[40] = "", phase[96] = "";
    fmt_duration(elapsed, sizeof elapsed, now - j->started);
    if (j->eta >= 0) {
        char e[24];
        fmt_duration(e, sizeof e, j->eta);
        snprintf(eta, sizeof eta, ", eta %s", e);
    }
    if (j->n_phases > 1) snprintf(phase, sizeof phase, "  %s (%d/%d)", j->phase, j->phase_i + 1, j->n_phases);
    else if (j->label[0]) snprintf(phase, sizeof phase, "  %s", j->label);
    char count[48] = "";
    if (j->total >= 1 && j->total < 1e12 && j->total == floor(j->total)) /* units, not cost estimates */
        snprintf(count, sizeof count, " %.0f/%.0f", j->done, j->total);
    int x = 1 + grid_printf(g, 1, y, g->w - 2, acc, "%s %s", theme_glyph(&u->th, G_BULLET), j->name) + 1;
    int bw = g->w >= 120 ? 24 : 16;
    if (g->w >= 100 && x + bw + 2 < g->w) { /* a bar where there is room; the percent always */
        int fill = (int)lround(j->fraction * bw);
        grid_put(g, x, y, theme_glyph(&u->th, G_BAR_LEFT), dim);
        for (int i = 0; i < bw; i++)
            grid_put(g, x + 1 + i, y, theme_glyph(&u->th, i < fill ? G_FULL : G_MIDDOT), i < fill ? acc : dim);
        grid_put(g, x + 1 + bw, y, theme_glyph(&u->th, G_BAR_RIGHT), dim);
        x += bw + 3;
    }
    char rest[400];
    /* never freeze silently: say when the job has been quiet a while */
    char quiet[40] = "";
    if (u->now > 0 && u->last_event > 0 && u->now - u->last_event >= 5)
        snprintf(quiet, sizeof quiet, "  (no news for %.0fs)", u->now - u->last_event);
    snprintf(rest, sizeof rest, "%3.0f%%%s%s  %s elapsed%s%s%s", 100 * j->fraction, phase, count, elapsed, eta,
             j->cancel_requested ? "  cancelling..." : "", quiet);
    grid_text(g, x, y, g->w - x - 1, rest, STYLE_PLAIN);
}

/* The keys of a mode a screen is in (a box with keys of its own, screens.h),
 * or NULL: the key bar shows them instead of the screen's, help lists them. */
static const key_hint *mode_keys(ui *u, int *n, const char **title) {
    *n = 0;
    return u->screen == SCR_RESULTS ? results_mode_keys(u, n, title) : NULL;
}

static const key_hint global_keys[] = {
    {"?", NULL, "help"}, {"q", NULL, "quit"}, {"c", NULL, "cancel"},
    {"\u23ce", "Enter", "run"}, {"p", NULL, "palette"}, {"1-9", NULL, "screens"},
};

static int keys_width(const key_hint *k, int n, const theme *t) {
    int w = 1;
    for (int i = 0; i < n; i++)
        w += utf8_width(t->utf8 || !k[i].ascii_key ? k[i].key : k[i].ascii_key) + 1 + utf8_width(k[i].label) + 2;
    return w;
}

/* Results' build was refused (its folder holds another request's student): the question, once the job has ended. */
static bool asking_overwrite(const ui *u) { return u->st->overwrite.ask && !u->st->job.active; }

static void draw_key_bar(ui *u, grid *g, int y) {
    const screen *s = screens[u->screen];
    key_hint all[24];
    int n = 0, n_mode = 0;
    const char *title = NULL;
    const key_hint *mode = mode_keys(u, &n_mode, &title);
    if (u->confirm_quit) {
        all[n++] = (key_hint){"y", NULL, "quit (cancels the job)"};
        all[n++] = (key_hint){"n", NULL, "stay"};
    } else if (asking_overwrite(u)) {
        all[n++] = (key_hint){"y", NULL, "overwrite (as graft convert --force)"};
        all[n++] = (key_hint){"n", NULL, "or any other key: keep the folder"};
    } else if (mode) { /* the mode's keys, most important first, as many as fit */
        for (int i = 0; i < n_mode && n < 24; i++) all[n++] = mode[i];
        while (n > 1 && keys_width(all, n, &u->th) > g->w) n--;
    } else if (u->typing) { /* every key edits the text until Enter or Esc */
        all[n++] = (key_hint){"\u23ce", "Enter", "done"};
        all[n++] = (key_hint){"Esc", NULL, "cancel"};
        all[n++] = (key_hint){"^U", NULL, "clear"};
        all[n++] = (key_hint){"\u2190\u2192", "left/right", "move"};
    } else {
        /* screen keys that fit, but always room for help and quit */
        for (int i = 0; i < s->n_keys && n < 16; i++) all[n++] = s->keys[i];
        while (n > 0 && keys_width(all, n, &u->th) + 16 > g->w) n--;
        bool own_enter = false; /* the screen names what its Enter does */
        for (int i = 0; i < s->n_keys; i++) own_enter |= !strcmp(s->keys[i].key, "\u23ce");
        for (int i = 0; i < (int)(sizeof global_keys / sizeof global_keys[0]); i++) {
            if (i == 2 && !u->st->job.active) continue;
            if (i == 3 && (s->action < 0 || own_enter)) continue;
            all[n++] = global_keys[i];
        }
    }
    char bufs[24][2];
    for (int i = 0; i < n; i++) {
        all[i].key = keymap_show(&u->prefs->keys, all[i].key, bufs[i]);
        if (all[i].key == bufs[i]) all[i].ascii_key = NULL;
    }
    keybar_draw(g, y, g->w, all, n, &u->th);
}

/* The global keys, in the help and (the same words) in man/graft.1. */
static const char *const global_help[] = {
    "1-9, Tab, Shift-Tab  switch screens (or click a tab)",
    "Left/Right           switch screens where arrows are not used",
    "Enter                run this screen's job",
    "c                    cancel the running job",
    "p                    cycle the colour palette",
    "?, F1                this help (arrows scroll it, any other key closes)",
    "q, F10               quit (asks while a job runs)",
    "/, n                 search, next hit (Log, Results)",
    "mouse                click a tab, a row or a cell; the wheel scrolls",
};
#define N_GLOBAL_HELP ((int)(sizeof global_help / sizeof global_help[0]))

/* One line of a key's help: the key padded by glyphs, not bytes (UTF-8 keys), then its label. */
static void key_line(char *line, size_t n, const char *k, const char *label) {
    int pad = 21 - utf8_width(k);
    snprintf(line, n, "%s%*s%s", k, pad > 1 ? pad : 1, "", label);
}

#define HELP_MAX_LINES 64
/* The help's lines: the global keys, then this screen's (or its mode's). Returns the count;
 * accent[i] marks the section titles. */
static int help_lines(ui *u, char lines[][160], bool *accent) {
    const screen *s = screens[u->screen];
    int n_mode = 0, n = 0;
    const char *title = NULL;
    const key_hint *mode = mode_keys(u, &n_mode, &title);
    if (!mode) n_mode = 0;
    for (int i = 0; i < N_GLOBAL_HELP; i++) accent[n] = false, snprintf(lines[n++], 160, "%s", global_help[i]);
    accent[n] = false, lines[n++][0] = 0;
    const key_hint *k = n_mode ? mode : s->keys;
    int nk = n_mode ? n_mode : s->n_keys;
    accent[n] = true;
    if (n_mode) snprintf(lines[n++], 160, "%s:", title ? title : "now");
    else snprintf(lines[n++], 160, "on %s:", s->title);
    for (int i = 0; i < nk && n < HELP_MAX_LINES; i++) {
        char kb[2];
        const char *name = u->th.utf8 || !k[i].ascii_key ? k[i].key : k[i].ascii_key;
        if (!n_mode) name = keymap_show(&u->prefs->keys, name, kb); /* a mode's keys are typed, never remapped */
        accent[n] = false;
        key_line(lines[n++], 160, name, k[i].label);
    }
    return n;
}

static void draw_help(ui *u, grid *g) {
    static char lines[HELP_MAX_LINES][160];
    bool accent[HELP_MAX_LINES];
    int n = help_lines(u, lines, accent);
    int w = 76 < g->w - 2 ? 76 : g->w - 2, h = n + 2 < g->h - 2 ? n + 2 : g->h - 2;
    int rows = h - 2;
    if (u->help_scroll > n - rows) u->help_scroll = n - rows;
    if (u->help_scroll < 0) u->help_scroll = 0;
    rect box = {(g->w - w) / 2, (g->h - h) / 2, w, h};
    grid_fill(g, box, " ", STYLE_PLAIN);
    draw_box(g, box, &u->th, theme_accent(&u->th));
    grid_text(g, box.x + 2, box.y, w - 4, " help ", theme_accent(&u->th));
    for (int i = 0; i < rows && u->help_scroll + i < n; i++) {
        int k = u->help_scroll + i;
        grid_text(g, box.x + 2, box.y + 1 + i, w - 4, lines[k], accent[k] ? theme_accent(&u->th) : STYLE_PLAIN);
    }
    if (rows < n) { /* where in the help, on the bottom border */
        char more[64];
        snprintf(more, sizeof more, " %s lines %d-%d of %d ", u->th.utf8 ? "\u2191\u2193" : "up/down", u->help_scroll + 1,
                 u->help_scroll + rows, n);
        grid_text(g, box.x + w - 2 - utf8_width(more), box.y + h - 1, utf8_width(more), more, theme_accent(&u->th));
    }
}

/* Keys while the help shows: arrows and pages scroll it, any other key closes it. */
static bool help_key(ui *u, int key) {
    switch (key) {
    case UK_UP: u->help_scroll--; return true;
    case UK_DOWN: u->help_scroll++; return true;
    case UK_PGUP: u->help_scroll -= 10; return true;
    case UK_PGDN: u->help_scroll += 10; return true;
    case UK_HOME: u->help_scroll = 0; return true;
    case UK_END: u->help_scroll = HELP_MAX_LINES; return true; /* clamped when drawn */
    }
    u->help = false;
    return true;
}

bool ui_wheel(ui *u, int dir, int x, int y) {
    (void)x, (void)y;
    if (u->confirm_quit || asking_overwrite(u)) return false;
    if (u->help) {
        u->help_scroll += 3 * dir;
        return true;
    }
    const screen *s = screens[u->screen];
    if (!s->key || u->typing) return false;
    bool any = false;
    for (int i = 0; i < 3; i++) any |= s->key(u, dir < 0 ? UK_UP : UK_DOWN);
    return any;
}

/* "folder X holds a student of another request (digest D); overwrite? y/N", wrapped in a box */
static void draw_overwrite(ui *u, grid *g) {
    const app_state *st = u->st;
    char q[1024], held[48];
    if (st->overwrite.held[0]) snprintf(held, sizeof held, "digest %s", st->overwrite.held);
    else snprintf(held, sizeof held, "no request recorded");
    snprintf(q, sizeof q, "folder %s holds a student of another request (%s; this build's: %s); overwrite? y/N",
             st->overwrite.folder, held, st->overwrite.want);
    int w = utf8_width(q) + 4;
    if (w > g->w - 4) w = g->w - 4;
    text_span lines[8];
    int n = wrap_lines(q, strlen(q), w - 4, lines, 8);
    if (n > 8) n = 8;
    rect box = {(g->w - w) / 2, g->h / 2 - (n + 2) / 2, w, n + 2};
    grid_fill(g, box, " ", STYLE_PLAIN);
    draw_box(g, box, &u->th, theme_accent(&u->th));
    for (int i = 0; i < n; i++) {
        char line[1024];
        wrap_clean(q + lines[i].start, lines[i].len, line, sizeof line);
        grid_text(g, box.x + 2, box.y + 1 + i, w - 4, line, theme_accent(&u->th));
    }
}

/* y: build again, replacing that folder (and only it); anything else keeps it as it is */
static void answer_overwrite(ui *u, int key) {
    app_state *st = u->st;
    st->overwrite.ask = false;
    if (key == 'y' || key == 'Y') {
        app_log(st, LOG_INFO, "overwrite %s: yes, building again (as graft convert --force)", st->overwrite.folder);
        snprintf(st->force_folder, sizeof st->force_folder, "%s", st->overwrite.folder);
        ui_run_action(u, ACT_EVALUATE);
        st->force_folder[0] = 0; /* unused when the build did not start */
    } else {
        app_log(st, LOG_INFO, "overwrite %s: no, the folder is kept as it was", st->overwrite.folder);
        ui_say(u, "kept %s; nothing was built", st->overwrite.folder);
    }
}

void ui_render(ui *u, grid *g) {
    grid_clear(g);
    g->ellipsis = theme_glyph(&u->th, G_ELLIPSIS);
    if (g->w < 20 || g->h < 6) {
        grid_text(g, 0, 0, g->w, "window too small", STYLE_PLAIN);
        return;
    }
    u->th.palette = u->prefs->palette;
    /* a status that spoke of a job ("started x", "cancelling x") ends with it */
    if (u->status_job && !(u->st->job.active && u->st->job.id == u->status_job)) {
        u->status[0] = 0;
        u->status_job = 0;
    }
    if (u->st->notice[0]) { /* a one-time message from the workbench (the default teacher opened instead, ...) */
        ui_say(u, "%s", u->st->notice);
        u->st->notice[0] = 0;
    }
    draw_top_line(u, g);
    const char *names[SCR_COUNT];
    char buf[SCR_COUNT][24];
    for (int i = 0; i < SCR_COUNT; i++) {
        snprintf(buf[i], sizeof buf[i], "%d %s", i + 1, screens[i]->title);
        names[i] = buf[i];
    }
    tabbar_draw(g, 1, g->w, names, SCR_COUNT, u->screen, &u->th, &u->tabs);
    rect body = {0, 2, g->w, g->h - 4};
    screens[u->screen]->draw(u, g, body);
    draw_job_line(u, g, g->h - 2);
    draw_key_bar(u, g, g->h - 1);
    if (u->help) draw_help(u, g);
    if (u->confirm_quit) {
        const char *q = "A job is running. Quit anyway? (y/n)";
        int w = utf8_width(q) + 4;
        rect box = {(g->w - w) / 2, g->h / 2 - 1, w, 3};
        grid_fill(g, box, " ", STYLE_PLAIN);
        draw_box(g, box, &u->th, theme_accent(&u->th));
        grid_text(g, box.x + 2, box.y + 1, w - 4, q, theme_accent(&u->th));
    } else if (asking_overwrite(u)) {
        draw_overwrite(u, g);
    }
}

void ui_run_action(ui *u, int action) {
    app_state *st = u->st;
    if (action < 0) {
        ui_say(u, "%s has no job: Enter does nothing here", screens[u->screen]->title);
        return;
    }
    if (!st->run || !u->jr) {
        ui_say(u, "nothing to run here: no engine is attached (graft tui MODEL)");
        return;
    }
    if (st->read_only && (action == ACT_EVALUATE || action == ACT_ABLATE || action == ACT_RACE || action == ACT_SELECT)) {
        ui_say(u, "read-only session: its rows would not be saved here (graft tui --session NAME opens one of your own)");
        return;
    }
    if (st->run(st, u->jr, (wb_action)action) != 0) {
        ui_say(u, "%s", gf_last_error());
        app_log(st, LOG_WARN, "%s", gf_last_error());
    } else {
        ui_say(u, "started %s", job_current_name(u->jr));
        u->status_job = st->job.id;
        u->last_event = u->now; /* staleness counts from the start */
    }
}

bool ui_key(ui *u, int key) {
    u->status[0] = 0;
    u->status_job = 0;
    /* typing: raw keys to the screen's entry (no key map, no global keys) */
    if (u->typing && !u->help && !u->confirm_quit && !asking_overwrite(u) && screens[u->screen]->key) {
        screens[u->screen]->key(u, key);
        return true;
    }
    key = keymap_translate(&u->prefs->keys, key);
    if (u->confirm_quit) {
        if (key == 'y' || key == 'Y') {
            if (u->jr) app_cancel_job(u->st, u->jr);
            u->quit = true;
        }
        u->confirm_quit = false;
        return true;
    }
    if (asking_overwrite(u)) {
        answer_overwrite(u, key);
        return true;
    }
    if (u->help) return help_key(u, key);
    if (screens[u->screen]->key && screens[u->screen]->key(u, key)) {
        /* what these screens change (plan, Stage 1 options, budgets, settings) is saved with the session */
        if (u->screen == SCR_PLAN || u->screen == SCR_CALIBRATE || u->screen == SCR_RECOVER || u->screen == SCR_SETTINGS)
            u->st->session_dirty = true;
        return true;
    }
    switch (key) {
    case '?':
    case UK_F1:
        u->help = true;
        u->help_scroll = 0;
        return true;
    case 'q':
    case 'Q':
    case UK_F10:
        if (u->st->job.active) u->confirm_quit = true;
        else u->quit = true;
        return true;
    case 'c':
        if (u->jr && u->st->job.active) {
            app_cancel_job(u->st, u->jr);
            ui_say(u, "cancelling %s ...", u->st->job.name);
            u->status_job = u->st->job.id;
        } else {
            ui_say(u, "no job is running");
        }
        return true;
    case 'p':
        u->prefs->palette = (u->prefs->palette + 1) % palette_count();
        ui_say(u, "palette: %s", palette_name(u->prefs->palette));
        return true;
    case UK_TAB:
    case UK_RIGHT: u->screen = (u->screen + 1) % SCR_COUNT; return true;
    case UK_BTAB:
    case UK_LEFT: u->screen = (u->screen + SCR_COUNT - 1) % SCR_COUNT; return true;
    case UK_ENTER: ui_run_action(u, screens[u->screen]->action); return true;
    default:
        if (key >= '1' && key < '1' + SCR_COUNT) {
            u->screen = key - '1';
            return true;
        }
    }
    return false;
}

bool ui_click(ui *u, int x, int y) {
    if (asking_overwrite(u)) return false; /* a key answers */
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
