/* 8 Log: every log line with its time, newest at the bottom; search (/, n next
 * older hit, N newer), a filter (\), sideways scroll for long lines (left /
 * right), and the job history with how long each job took and how it ended (h),
 * an interrupted job with where it had got to. */
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

static void job_line(const job_record *j, char *line, size_t size) {
    char when[16], took[24];
    log_line fake = {.when = j->started};
    wb_log_stamp(&fake, when);
    fmt_duration(took, sizeof took, j->seconds);
    const char *what = j->outcome == JOB_RUNNING ? "running" : j->outcome == JOB_DONE ? "done"
                       : j->outcome == JOB_FAILED ? "failed" : j->outcome == JOB_INTERRUPTED ? "interrupted"
                       : "cancelled";
    int n = snprintf(line, size, "%s %-11s %-9s %s", when, j->name, took, what);
    if (j->outcome == JOB_INTERRUPTED && n < (int)size) {
        char at[200];
        app_job_progress_text(j, at, sizeof at);
        n += snprintf(line + n, size - (size_t)n, " %s", at);
        if (j->checkpoint[0] && n < (int)size) n += snprintf(line + n, size - (size_t)n, "; checkpoint %s", j->checkpoint);
    }
    if (j->outcome == JOB_CANCELLED && j->cancel_latency_s >= 0 && n < (int)size)
        n += snprintf(line + n, size - (size_t)n, " (stopped %.2f s after c)", j->cancel_latency_s);
    if (j->text[0] && n < (int)size) n += snprintf(line + n, size - (size_t)n, ": %s", j->text);
    if (j->teacher[0] && n < (int)size) snprintf(line + n, size - (size_t)n, "  [%s]", j->teacher);
}

static void draw_history(ui *u, grid *g, rect r) {
    const app_state *st = u->st;
    log_view *v = &u->v.log;
    style acc = theme_accent(&u->th), dim = theme_dim(&u->th);
    grid_text(g, r.x + 1, r.y, r.w - 2, "job history (h: back to the log; arrows scroll)", acc);
    grid_text(g, r.x + 1, r.y + 1, r.w - 2, "started   job         took      outcome", dim);
    int rows = r.h - 2 > 0 ? r.h - 2 : 1;
    int max_scroll = st->n_hist > rows ? st->n_hist - rows : 0;
    if (v->hist_scroll > max_scroll) v->hist_scroll = max_scroll;
    if (v->hist_scroll < 0) v->hist_scroll = 0;
    int first = st->n_hist - rows - v->hist_scroll;
    if (first < 0) first = 0;
    for (int i = 0; i < rows && first + i < st->n_hist; i++) {
        const job_record *j = app_job_at(st, first + i);
        char line[1200];
        job_line(j, line, sizeof line);
        draw_scrolled(g, r.x + 1, r.y + 2 + i, r.w - 2, line, v->hscroll,
                      j->outcome == JOB_FAILED || j->outcome == JOB_INTERRUPTED ? acc : STYLE_PLAIN);
    }
    if (v->hist_scroll || v->hscroll) {
        char more[64];
        snprintf(more, sizeof more, "[%d newer jobs below, %d columns left]", v->hist_scroll, v->hscroll);
        grid_text(g, r.x + r.w - utf8_width(more) - 1, r.y + r.h - 1, r.w, more, acc);
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
    style acc = theme_accent(&u->th);
    if (v->searching) {
        entry_draw(g, r.x + 1, r.y, r.w - 2, "search: ", &v->search, true, STYLE_PLAIN);
        top = 1;
    } else if (v->filtering || v->filter.len) { /* the filter line */
        if (v->filtering) entry_draw(g, r.x + 1, r.y, r.w - 2, "filter: ", &v->filter, true, STYLE_PLAIN);
        else grid_printf(g, r.x + 1, r.y, r.w - 2, acc, "filter: %s   (\\ edits, Esc in it clears)", v->filter.text);
        top = 1;
    } else if (v->search.len) {
        grid_printf(g, r.x + 1, r.y, r.w - 2, acc, "search: %s   (n older hit, N newer, / again)", v->search.text);
        top = 1;
    }
    /* the lines that match, newest last */
    static int match[WB_LOG_CAP];
    int n = 0;
    for (int i = 0; i < st->log.n; i++)
        if (wb_log_matches(wb_log_get(&st->log, i), v->filter.text)) match[n++] = i;
    v->rows = r.h - top;
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
    const long base = st->log.total - st->log.n; /* the number of the oldest line kept */
    for (int i = 0; i < rows && first + i < n; i++) {
        const log_line *ln = wb_log_get(&st->log, match[first + i]);
        char stamp[16], line[1100];
        wb_log_stamp(ln, stamp);
        snprintf(line, sizeof line, "%s%s", stamp, ln->text);
        style s = ln->level == LOG_ERROR ? acc : STYLE_PLAIN;
        draw_scrolled(g, r.x + 1, r.y + top + i, r.w - 2, line, v->hscroll, s);
        if (base + match[first + i] == v->hit) grid_add_attr(g, (rect){r.x + 1, r.y + top + i, r.w - 2, 1}, ATTR_REVERSE);
    }
    if (v->scroll || v->hscroll) {
        char more[64];
        snprintf(more, sizeof more, "[%d newer lines below, %d columns left]", v->scroll, v->hscroll);
        grid_text(g, r.x + r.w - utf8_width(more) - 1, r.y + r.h - 1, r.w, more, acc);
    }
}

/* The next line holding the search text, older (dir -1) or newer (+1) than the current hit
 * (or than the newest line shown); scrolls it into view. */
static void find(ui *u, int dir) {
    const app_state *st = u->st;
    log_view *v = &u->v.log;
    if (!v->search.len) {
        ui_say(u, "nothing to search for: / types it");
        return;
    }
    static int match[WB_LOG_CAP];
    int n = 0;
    for (int i = 0; i < st->log.n; i++)
        if (wb_log_matches(wb_log_get(&st->log, i), v->filter.text)) match[n++] = i;
    const long base = st->log.total - st->log.n;
    int from = -1; /* position in match[] of the current hit */
    for (int p = 0; p < n && v->hit >= 0; p++)
        if (base + match[p] == v->hit) from = p;
    if (from < 0) from = dir < 0 ? n - v->scroll : n - v->scroll - 1 - (v->rows > 0 ? v->rows - 1 : 0);
    for (int p = from + dir; p >= 0 && p < n; p += dir) {
        if (!wb_log_matches(wb_log_get(&st->log, match[p]), v->search.text)) continue;
        v->hit = base + match[p];
        int rows = v->rows > 0 ? v->rows : 1;
        if (p < n - rows - v->scroll || p >= n - v->scroll) v->scroll = n - p - (rows + 1) / 2;
        ui_say(u, "'%s': line %d of %d shown", v->search.text, p + 1, n);
        return;
    }
    ui_say(u, "'%s': no %s line holds it", v->search.text, dir < 0 ? "older" : "newer");
}

static bool key(ui *u, int k) {
    log_view *v = &u->v.log;
    if (v->searching || v->filtering) {
        entry *e = v->searching ? &v->search : &v->filter;
        entry_result res = entry_key(e, k);
        if (res == ENTRY_CANCEL) {
            entry_clear(e);
            v->hit = -1;
        }
        if (res == ENTRY_CANCEL || res == ENTRY_SUBMIT) {
            bool was_search = v->searching;
            v->searching = v->filtering = u->typing = false;
            if (was_search && res == ENTRY_SUBMIT) {
                v->hit = -1;
                find(u, -1);
            }
        }
        if (!v->searching) v->scroll = v->filtering ? 0 : v->scroll;
        return true;
    }
    const bool h = v->history;
    int *scroll = h ? &v->hist_scroll : &v->scroll;
    switch (k) {
    case '/':
        if (h) return false;
        v->searching = u->typing = true;
        entry_clear(&v->search);
        return true;
    case '\\':
        if (h) return false;
        v->filtering = u->typing = true;
        v->scroll = 0;
        return true;
    case 'n':
        if (!h) find(u, -1);
        return !h;
    case 'N':
        if (!h) find(u, 1);
        return !h;
    case 'h':
        v->history = !v->history;
        v->hscroll = 0;
        ui_say(u, "%s", v->history ? "job history: each job, how long it took, how it ended" : "the log");
        return true;
    case UK_UP: (*scroll)++; return true;
    case UK_DOWN: (*scroll)--; return true;
    case UK_PGUP: *scroll += 10; return true;
    case UK_PGDN: *scroll -= 10; return true;
    case UK_HOME: *scroll = WB_LOG_CAP; return true;
    case UK_END: *scroll = 0, v->hscroll = 0; return true;
    /* sideways only: Tab and the number keys switch screens here */
    case UK_RIGHT: v->hscroll += 16; return true;
    case UK_LEFT: v->hscroll = v->hscroll > 16 ? v->hscroll - 16 : 0; return true;
    }
    return false;
}

static const key_hint keys[] = {
    {"\u2191\u2193", "up/down", "scroll"}, {"\u2190\u2192", "left/right", "long lines"}, {"/", NULL, "search"},
    {"n", NULL, "next hit"}, {"N", NULL, "previous hit"}, {"\\", NULL, "filter"}, {"h", NULL, "job history"},
    {"End", NULL, "newest"}, {"Home", NULL, "oldest"},
};
const screen screen_log = {"Log", draw, key, NULL, keys, sizeof keys / sizeof keys[0], -1};
