/* 8 Log: every log line with its time, newest at the bottom; a filter (/),
 * horizontal scroll for long lines (left / right), and the job history with
 * how long each job took (h). */
#include <stdio.h>
#include <string.h>

#include "keys.h"
#include "screens/screens.h"

static void fmt_duration(char *b, size_t n, double s) {
    if (s < 60) snprintf(b, n, "%.1fs", s);
    else if (s < 3600) snprintf(b, n, "%dm%02ds", (int)s / 60, (int)s % 60);
    else snprintf(b, n, "%dh%02dm", (int)s / 3600, (int)s / 60 % 60);
}

/* A line scrolled right by hscroll glyphs. */
static void draw_scrolled(grid *g, int x, int y, int w, const char *text, int hscroll, style s) {
    for (int k = 0; k < hscroll && *text; k++) text += utf8_seq_len(text);
    grid_text(g, x, y, w, text, s);
}

static void draw_history(ui *u, grid *g, rect r) {
    const app_state *st = u->st;
    const log_view *v = &u->v.log;
    style acc = theme_accent(&u->th), dim = theme_dim(&u->th);
    grid_text(g, r.x + 1, r.y, r.w - 2, "job history (h: back to the log)", acc);
    grid_text(g, r.x + 1, r.y + 1, r.w - 2, "started   job         took      outcome", dim);
    int rows = r.h - 2;
    int first = st->n_hist > rows ? st->n_hist - rows : 0;
    for (int i = 0; i < rows && first + i < st->n_hist; i++) {
        const job_record *j = app_job_at(st, first + i);
        char when[16], took[24], line[600];
        log_line fake = {.when = j->started};
        wb_log_stamp(&fake, when);
        fmt_duration(took, sizeof took, j->seconds);
        const char *what = j->outcome == JOB_RUNNING ? "running" : j->outcome == JOB_DONE ? "done"
                           : j->outcome == JOB_FAILED ? "failed" : "cancelled";
        int n = snprintf(line, sizeof line, "%s %-11s %-9s %s", when, j->name, took, what);
        if (j->outcome == JOB_CANCELLED && j->cancel_latency_s >= 0)
            n += snprintf(line + n, sizeof line - (size_t)n, " (stopped %.2f s after c)", j->cancel_latency_s);
        if (j->text[0]) n += snprintf(line + n, sizeof line - (size_t)n, ": %s", j->text);
        if (j->teacher[0]) snprintf(line + n, sizeof line - (size_t)n, "  [%s]", j->teacher);
        draw_scrolled(g, r.x + 1, r.y + 2 + i, r.w - 2, line, v->hscroll,
                      j->outcome == JOB_FAILED ? acc : STYLE_PLAIN);
    }
}

static void draw(ui *u, grid *g, rect r) {
    const app_state *st = u->st;
    log_view *v = &u->v.log;
    if (v->history) {
        draw_history(u, g, r);
        return;
    }
    int top = 0;
    if (u->typing || v->filter.len) { /* the filter line */
        if (u->typing) entry_draw(g, r.x + 1, r.y, r.w - 2, "filter: ", &v->filter, true, STYLE_PLAIN);
        else grid_printf(g, r.x + 1, r.y, r.w - 2, theme_accent(&u->th), "filter: %s   (/ edits, Esc in it clears)",
                         v->filter.text);
        top = 1;
    }
    /* the lines that match, newest last */
    static int match[WB_LOG_CAP];
    int n = 0;
    for (int i = 0; i < st->log.n; i++)
        if (wb_log_matches(wb_log_get(&st->log, i), v->filter.text)) match[n++] = i;
    if (n == 0) {
        grid_text(g, r.x + 1, r.y + top, r.w - 2, st->log.n ? "(no line matches the filter)" : "(the log is empty)",
                  theme_dim(&u->th));
        return;
    }
    int rows = r.h - top;
    int max_scroll = n > rows ? n - rows : 0;
    if (v->scroll > max_scroll) v->scroll = max_scroll;
    if (v->scroll < 0) v->scroll = 0;
    int first = n - rows - v->scroll;
    if (first < 0) first = 0;
    for (int i = 0; i < rows && first + i < n; i++) {
        const log_line *ln = wb_log_get(&st->log, match[first + i]);
        char stamp[16], line[1100];
        wb_log_stamp(ln, stamp);
        snprintf(line, sizeof line, "%s%s", stamp, ln->text);
        style s = ln->level == LOG_ERROR ? theme_accent(&u->th) : ln->level == LOG_WARN ? STYLE_PLAIN : STYLE_PLAIN;
        draw_scrolled(g, r.x + 1, r.y + top + i, r.w - 2, line, v->hscroll, s);
    }
    if (v->scroll || v->hscroll) {
        char more[64];
        snprintf(more, sizeof more, "[%d newer lines below, %d columns left]", v->scroll, v->hscroll);
        grid_text(g, r.x + r.w - utf8_width(more) - 1, r.y + r.h - 1, r.w, more, theme_accent(&u->th));
    }
}

static bool key(ui *u, int k) {
    log_view *v = &u->v.log;
    if (u->typing) {
        entry_result res = entry_key(&v->filter, k);
        if (res == ENTRY_CANCEL) {
            entry_clear(&v->filter);
            u->typing = false;
        } else if (res == ENTRY_SUBMIT) {
            u->typing = false;
        }
        v->scroll = 0;
        return true;
    }
    switch (k) {
    case '/':
        u->typing = true;
        return true;
    case 'h':
        v->history = !v->history;
        ui_say(u, "%s", v->history ? "job history: each job, how long it took, how it ended" : "the log");
        return true;
    case UK_UP: v->scroll++; return true;
    case UK_DOWN: v->scroll--; return true;
    case UK_PGUP: v->scroll += 10; return true;
    case UK_PGDN: v->scroll -= 10; return true;
    case UK_HOME: v->scroll = WB_LOG_CAP; return true;
    case UK_END: v->scroll = 0, v->hscroll = 0; return true;
    case UK_RIGHT: v->hscroll += 16; return true;
    case UK_LEFT:
        if (v->hscroll == 0) return false; /* the frame's left: the previous screen */
        v->hscroll = v->hscroll > 16 ? v->hscroll - 16 : 0;
        return true;
    }
    return false;
}

static const key_hint keys[] = {
    {"\u2191\u2193", "up/down", "scroll"}, {"\u2190\u2192", "left/right", "long lines"}, {"/", NULL, "filter"},
    {"h", NULL, "job history"}, {"End", NULL, "newest"},
};
const screen screen_log = {"Log", draw, key, NULL, keys, sizeof keys / sizeof keys[0], -1};
