/* 1 Teacher: open a teacher (Hub repo id or local path), watch its files
 * download, pick one of the recent teachers, and read the architecture. */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "keys.h"
#include "screens/screens.h"

/* 1000-based like the Hub's own listings: "12.3 MB". */
static void fmt_bytes(char *buf, size_t n, long long b) {
    if (b < 0) snprintf(buf, n, "?");
    else if (b < 1000) snprintf(buf, n, "%lld B", b);
    else if (b < 1000000) snprintf(buf, n, "%.1f kB", b / 1e3);
    else if (b < 1000000000) snprintf(buf, n, "%.1f MB", b / 1e6);
    else snprintf(buf, n, "%.2f GB", b / 1e9);
}

/* A bar of w cells, filled to frac (full blocks; '#'/'-' in ASCII). */
static void draw_bar(grid *g, int x, int y, int w, double frac, const theme *t) {
    if (frac < 0) frac = 0;
    if (frac > 1) frac = 1;
    int full = (int)(frac * w + 0.5);
    for (int i = 0; i < w; i++)
        grid_put(g, x + i, y, i < full ? theme_glyph(t, G_FULL) : theme_glyph(t, G_MIDDOT),
                 i < full ? theme_accent(t) : theme_dim(t));
}

static const char *state_word(file_state s) {
    switch (s) {
    case FILE_QUEUED: return "queued";
    case FILE_ACTIVE: return "active";
    case FILE_DONE: return "done";
    case FILE_CACHED: return "cached";
    case FILE_FAILED: return "failed";
    }
    return "";
}

/* The files of the teacher being opened (with sizes and bars, the totals on
 * top), else the files the current teacher was loaded from. Returns the next row. */
static int draw_files(ui *u, grid *g, int x, int y, int w, int max_y) {
    const download_state *d = &u->st->download;
    const teacher_state *t = app_cur(u->st);
    style acc = theme_accent(&u->th), dim = theme_dim(&u->th);
    char done[24], total[24], line[200];
    if (!u->st->opening[0] && d->n_files == 0 && !d->active) {
        if (!t || t->n_files == 0) return y;
        grid_printf(g, x, y++, w, acc, "Files of %s", t->name);
        for (int i = 0; i < t->n_files && y < max_y; i++, y++) {
            fmt_bytes(total, sizeof total, t->files[i].total);
            grid_text(g, x, y, 6, state_word(t->files[i].state), dim);
            grid_printf(g, x + 7, y, w - 7, STYLE_PLAIN, "%9s  %s", total, t->files[i].name);
        }
        return y + 1;
    }
    if (d->n_files == 0 && !d->active) return y;
    fmt_bytes(done, sizeof done, d->done);
    fmt_bytes(total, sizeof total, d->total);
    snprintf(line, sizeof line, "Files %d/%d  %s / %s (opening)", d->files_done, d->files_total, done, total);
    grid_text(g, x, y++, w, line, acc);
    if (d->active && d->total > 0 && y < max_y) { /* the total: a bar, speed and time left */
        line[0] = 0;
        if (d->rate > 0) {
            char rate[24];
            fmt_bytes(rate, sizeof rate, (long long)d->rate);
            int n = snprintf(line, sizeof line, "%s/s", rate);
            if (d->eta_s >= 0) snprintf(line + n, sizeof line - n, "  eta %.0fs", d->eta_s);
        }
        int bw = w - 24 > 10 ? w - 24 : 10;
        draw_bar(g, x, y, bw, (double)d->done / (double)d->total, &u->th);
        grid_text(g, x + bw + 1, y++, w - bw - 1, line, STYLE_PLAIN);
    }
    for (int i = 0; i < d->n_files && y < max_y; i++, y++) {
        const download_file *f = &d->files[i];
        fmt_bytes(done, sizeof done, f->done);
        fmt_bytes(total, sizeof total, f->total);
        if (f->state == FILE_ACTIVE) { /* the name, then a bar with the bytes under it */
            grid_printf(g, x, y++, w, acc, "%s %s", theme_glyph(&u->th, G_RARROW), f->name);
            if (y >= max_y) break;
            draw_bar(g, x + 2, y, 10, f->total > 0 ? (double)f->done / (double)f->total : 0, &u->th);
            grid_printf(g, x + 13, y, w - 13, STYLE_PLAIN, "%s / %s", done, total);
        } else {
            grid_text(g, x, y, 6, state_word(f->state), f->state == FILE_FAILED ? acc : dim);
            grid_printf(g, x + 7, y, w - 7, STYLE_PLAIN, "%9s  %s", total, f->name);
        }
    }
    return y + 1;
}

/* The recent teachers in the rows left: a window that keeps the cursor in view when they do not all fit. */
static int draw_recent(ui *u, grid *g, int x, int y, int w, int max_y) {
    const app_state *st = u->st;
    if (st->n_recent == 0 || y >= max_y) return y;
    int cur = u->v.teacher.recent_cur < st->n_recent ? u->v.teacher.recent_cur : st->n_recent - 1;
    const bool path = st->recent[cur].path[0] && strcmp(st->recent[cur].path, st->recent[cur].arg);
    int rows = max_y - y - 1 - (path ? 1 : 0);
    if (rows < 1) rows = 1;
    int first = 0;
    if (rows < st->n_recent) {
        first = cur - rows / 2;
        if (first > st->n_recent - rows) first = st->n_recent - rows;
        if (first < 0) first = 0;
        grid_printf(g, x, y++, w, theme_accent(&u->th), "Recent teachers (Enter opens one; %d-%d of %d, %s more)",
                    first + 1, first + rows, st->n_recent, theme_glyph(&u->th, G_ARROW_UD));
    } else {
        grid_text(g, x, y++, w, "Recent teachers (Enter opens one)", theme_accent(&u->th));
    }
    for (int i = first; i < st->n_recent && i < first + rows && y < max_y; i++, y++) {
        grid_text(g, x, y, 2, i == cur ? theme_glyph(&u->th, G_RARROW) : " ", STYLE_PLAIN);
        draw_tail(g, x + 2, y, w - 2, st->recent[i].arg, STYLE_PLAIN, &u->th);
        if (i == cur && !u->typing) grid_add_attr(g, (rect){x, y, w, 1}, ATTR_REVERSE);
    }
    if (y < max_y && path) draw_tail(g, x + 2, y++, w - 2, st->recent[cur].path, theme_dim(&u->th), &u->th);
    return y + 1;
}

/* Nothing converted yet in this session: the one line that says where a first conversion starts. */
static bool first_start(const app_state *st) {
    for (int i = 0; i < st->n_teachers; i++)
        if (st->teachers[i]->n_results > 0) return false;
    for (int i = 0; i < st->n_hist; i++) {
        const job_record *r = app_job_at(st, i);
        if (strcmp(r->name, "load") && strcmp(r->name, "stats")) return false;
    }
    return true;
}

static int draw_summary(ui *u, grid *g, int x, int y, int w, int max_y) {
    const app_state *st = u->st;
    const teacher_state *t = app_cur(st);
    if (!t) {
        grid_text(g, x, y++, w, "no teacher loaded", theme_dim(&u->th));
        return y + 1;
    }
    draw_tail(g, x, y++, w, t->name, theme_accent(&u->th), &u->th);
    if (t->shape[0] && y < max_y) grid_text(g, x, y++, w, t->shape, STYLE_PLAIN);
    if (!t->loaded && y < max_y)
        grid_text(g, x, y++, w, "restored from the session, not loaded: Enter loads it", theme_dim(&u->th));
    y++;
    for (int i = 0; i < t->n_lines && y < max_y; i++) {
        const char *l = t->lines[i];
        int lw = utf8_width(l);
        if (lw > w && w > 24 && !strncmp(l, "path ", 5)) {
            grid_printf(g, x, y, 12, STYLE_PLAIN, "%.12s", l);
            draw_tail(g, x + 12, y++, w - 12, l + 12, STYLE_PLAIN, &u->th);
        } else {
            grid_text(g, x, y++, w, l, STYLE_PLAIN);
        }
    }
    if (y + 1 < max_y)
        grid_printf(g, x, ++y, w, theme_dim(&u->th), "its plan: %s, keep %.0f%%; %d results rows", t->strategy,
                    t->keep_ratio * 100, t->n_results);
    return y + 2;
}

static void draw(ui *u, grid *g, rect r) {
    const app_state *st = u->st;
    int x = r.x + 2, w = r.w - 4, y = r.y + 1, max_y = r.y + r.h;
    if (u->typing)
        entry_draw(g, x, y, w, "open: ", &u->v.teacher.open_entry, true, STYLE_PLAIN);
    else
        grid_text(g, x, y, w, "o: open ORG/NAME[@REV][:PATH], a model folder, or a .bin / .gguf file",
                  theme_dim(&u->th));
    y++;
    if (first_start(st) && app_cur(st) && app_cur(st)->loaded)
        grid_text(g, x, y++, w, "first conversion: 7 then Enter builds and evaluates a hybrid student of this teacher "
                                "(2 Plan picks its layers first)", theme_accent(&u->th));
    /* what happened to the last open, in full (wrapped, never cut) */
    char msg[1200];
    if (st->opening[0]) {
        snprintf(msg, sizeof msg, "opening %s ...", st->opening);
        y += draw_wrapped(g, x, y, w, 2, msg, theme_accent(&u->th));
    }
    if (st->teacher_error[0]) {
        snprintf(msg, sizeof msg, "error: %s", st->teacher_error);
        y += draw_wrapped(g, x, y, w, 3, msg, theme_accent(&u->th));
    }
    if (st->fallback_note[0]) y += draw_wrapped(g, x, y, w, 3, st->fallback_note, theme_accent(&u->th));
    y++;
    const teacher_state *t = app_cur(st);
    bool side = st->download.n_files > 0 || st->download.active || st->n_recent > 0 || (t && t->n_files > 0);
    if (r.w >= 90 && side) { /* summary left, files and recent teachers right */
        int rw = r.w >= 120 ? r.w * 45 / 100 : 46, lw = r.w - rw - 4;
        draw_summary(u, g, x, y, lw - 2, max_y);
        int rx = r.x + lw + 2, ry = draw_files(u, g, rx, y, rw, max_y);
        draw_recent(u, g, rx, ry, rw, max_y);
    } else { /* one column: the recent teachers keep a few rows of their own at the bottom */
        int keep = st->n_recent ? (st->n_recent < 3 ? st->n_recent : 3) + 2 : 0;
        if (keep > max_y - y) keep = max_y - y;
        y = draw_summary(u, g, x, y, w, max_y - keep);
        y = draw_files(u, g, x, y, w, max_y - keep);
        if (y > max_y - keep) y = max_y - keep;
        draw_recent(u, g, x, y, w, max_y);
    }
}

static void open_arg(ui *u, const char *arg) {
    app_state *st = u->st;
    if (!st->open_teacher || !u->jr) {
        ui_say(u, "opening a teacher needs the workbench on a model (graft tui)");
        return;
    }
    if (st->open_teacher(st, u->jr, arg) != 0) {
        ui_say(u, "%s", gf_last_error());
        app_log(st, LOG_WARN, "open %s: %s", arg, gf_last_error());
    } else {
        ui_say(u, "opening %s", arg);
        u->status_job = st->job.id;
        u->v.teacher.recent_cur = 0;
        u->last_event = u->now;
    }
}

static bool key(ui *u, int k) {
    app_state *st = u->st;
    teacher_view *v = &u->v.teacher;
    if (u->typing) {
        entry_result r = entry_key(&v->open_entry, k);
        if (r == ENTRY_CANCEL) u->typing = false;
        if (r == ENTRY_SUBMIT) {
            u->typing = false;
            /* surrounding blanks are never part of a repo id or path the user meant */
            char *s = v->open_entry.text, *end = s + v->open_entry.len;
            while (*s == ' ') s++;
            while (end > s && end[-1] == ' ') *--end = 0;
            if (*s) open_arg(u, s);
        }
        return true;
    }
    switch (k) {
    case 'o':
    case '/':
        u->typing = true;
        entry_clear(&v->open_entry);
        return true;
    case UK_UP:
        if (v->recent_cur > 0) v->recent_cur--;
        return true;
    case UK_DOWN:
        if (v->recent_cur + 1 < st->n_recent) v->recent_cur++;
        return true;
    case UK_ENTER:
        if (st->n_recent == 0) return false; /* the frame's Enter: reload */
        if (v->recent_cur >= st->n_recent) v->recent_cur = st->n_recent - 1;
        char arg[sizeof st->recent[0].arg];
        snprintf(arg, sizeof arg, "%s", st->recent[v->recent_cur].arg); /* open_teacher reorders the list */
        open_arg(u, arg);
        return true;
    }
    return false;
}

static const key_hint keys[] = {
    {"o", NULL, "open"},
    {"\u2191\u2193", "up/down", "recent"},
    {"\u23ce", "Enter", "open recent"},
};

const screen screen_teacher = {"Teacher", draw, key, NULL, keys, sizeof keys / sizeof keys[0], ACT_LOAD};
