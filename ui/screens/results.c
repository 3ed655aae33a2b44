/* 7 Results: one row per run. Enter evaluates the current plan (builds the
 * student under the chosen init, zero-shot perplexity next to the teacher's,
 * half-lives, where the folder was written); a runs the ablation table
 * (strategies x ratios x inits, quick settings) with rows streaming in.
 * At 80 columns init names are abbreviated and long cells cut; at 200 the
 * table shows whole. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "keys.h"
#include "screens/screens.h"
#include "student/student.h"

static const char *const abbrev[][2] = {
    {"taylor-calibrate", "t-calib"}, {"taylor-only", "taylor"}, {"align-only", "align"},
    {"small-gate", "small-g"},       {"zero-gate", "zero-g"},   {"random", "random"},
};

static const char *short_cell(const char *s, bool abbreviate) {
    if (!abbreviate || !s) return s;
    for (size_t i = 0; i < sizeof abbrev / sizeof abbrev[0]; i++)
        if (!strcmp(s, abbrev[i][0])) return abbrev[i][1];
    return s;
}

static int col_index(const app_state *st, const char *name) {
    for (int c = 0; c < st->n_result_cols; c++)
        if (!strcmp(st->result_header[c], name)) return c;
    return -1;
}

/* Column widths for w columns: abbreviated init names when the whole table
 * does not fit, then the student path and kept list cut down. */
static int fit_widths(const app_state *st, int w, int *widths, bool *abbreviate) {
    int total = 0;
    for (int pass = 0; pass < 2; pass++) {
        *abbreviate = pass == 1;
        total = 0;
        for (int c = 0; c < st->n_result_cols; c++) {
            widths[c] = utf8_width(st->result_header[c]);
            for (int i = 0; i < st->n_results; i++) {
                const char *s = short_cell(st->results[i].cells[c], *abbreviate);
                if (s && utf8_width(s) > widths[c]) widths[c] = utf8_width(s);
            }
            total += widths[c] + 2;
        }
        if (total <= w) return total;
    }
    /* then cut: the kept list down to 5 columns and the student path to 16, then the path further */
    const struct { const char *col; int min; } cuts[] = {{"kept", 5}, {"student", 16}, {"student", 7}};
    for (int k = 0; k < 3 && total > w; k++) {
        int c = col_index(st, cuts[k].col);
        if (c < 0) continue;
        int cut = total - w, room = widths[c] - cuts[k].min;
        if (room <= 0) continue;
        if (cut > room) cut = room;
        widths[c] -= cut;
        total -= cut;
    }
    return total;
}

/* A cell in width w: whole, else its tail ("...name") for paths, its head otherwise. */
static void draw_cell(ui *u, grid *g, int x, int y, int w, const char *s, bool tail, style st) {
    int sw = utf8_width(s);
    if (sw <= w) {
        grid_text(g, x, y, w, s, st);
        return;
    }
    const char *ell = theme_glyph(&u->th, G_ELLIPSIS);
    if (tail) {
        const char *p = s + strlen(s);
        int keep = 0;
        while (p > s && keep < w - 1) {
            p--;
            if (((unsigned char)*p & 0xC0) != 0x80) keep++;
        }
        grid_put(g, x, y, ell, st);
        grid_text(g, x + 1, y, w - 1, p, st);
    } else {
        grid_text(g, x, y, w - 1, s, st);
        grid_put(g, x + w - 1, y, ell, st);
    }
}

static void draw(ui *u, grid *g, rect r) {
    const app_state *st = u->st;
    const int x0 = r.x + 1, w = r.w - 2;
    style acc = theme_accent(&u->th), dim = theme_dim(&u->th);
    int y = r.y;
    char top[320];
    if (isfinite(st->teacher_ppl)) snprintf(top, sizeof top, "teacher perplexity %.4f (evaluation slice)", st->teacher_ppl);
    else snprintf(top, sizeof top, "teacher perplexity: not measured yet");
    grid_text(g, x0, y++, w, top, acc);
    if (st->n_layers) {
        int k = 0;
        for (int l = 0; st->kept && l < st->n_layers; l++) k += st->kept[l];
        grid_printf(g, x0, y, w, dim, "Enter evaluates: %s, %d of %d layers attention, init %s",
                    st->strategy[0] ? st->strategy : "uniform", st->kept ? k : 0, st->n_layers, st->eval_init);
    }
    y++;
    rect body = {r.x, y + 1, r.w, r.y + r.h - y - 1};
    if (st->n_results == 0 || st->n_result_cols == 0) {
        draw_unavailable(u, g, body, "results of converted students",
                         "Enter builds and evaluates the plan's student; a runs the ablation table");
        return;
    }
    y++;
    int widths[APP_RESULT_COLS];
    bool abbreviate;
    fit_widths(st, w, widths, &abbreviate);
    int student_col = col_index(st, "student");
    int x = x0;
    for (int c = 0; c < st->n_result_cols; c++) {
        draw_cell(u, g, x, y, widths[c], st->result_header[c], false, acc);
        x += widths[c] + 2;
    }
    y++;
    int rows = r.y + r.h - y;
    /* the newest student folder in full, to copy */
    const char *newest = NULL;
    for (int i = st->n_results - 1; i >= 0 && !newest && student_col >= 0; i--) {
        const char *s = st->results[i].cells[student_col];
        if (s && s[0] == '/') newest = s;
    }
    if (newest && rows > 2) {
        rows--;
        grid_printf(g, x0, y + rows, w, dim, "newest student: %s", newest);
    }
    if (rows < 1) return;
    bool more = st->n_results > rows;
    if (more) rows--;
    /* the newest rows by default; scrolling moves up from them */
    int first = st->n_results - rows - u->results_first;
    if (first < 0) first = 0;
    for (int i = 0; i < rows && first + i < st->n_results; i++) {
        x = x0;
        for (int c = 0; c < st->n_result_cols; c++) {
            const char *s = short_cell(st->results[first + i].cells[c], abbreviate);
            if (s) draw_cell(u, g, x, y + i, widths[c], s, c == student_col, STYLE_PLAIN);
            x += widths[c] + 2;
        }
    }
    if (more)
        grid_printf(g, x0, y + rows, w, dim, "rows %d-%d of %d (%s scroll)", first + 1,
                    first + rows < st->n_results ? first + rows : st->n_results, st->n_results,
                    theme_glyph(&u->th, G_ARROW_UD));
}

static bool key(ui *u, int k) {
    app_state *st = u->st;
    switch (k) {
    case 'i': { /* the init "evaluate" builds, among the six */
        student_init cur;
        if (student_init_parse(st->eval_init, &cur) != 0) cur = INIT_TAYLOR_CALIBRATE;
        cur = (student_init)((cur + 1) % INIT_COUNT);
        snprintf(st->eval_init, sizeof st->eval_init, "%s", student_init_name(cur));
        snprintf(u->status, sizeof u->status, "evaluate builds the student under %s", st->eval_init);
        return true;
    }
    case 'a':
        if (!st->run || !u->jr) {
            snprintf(u->status, sizeof u->status, "nothing to run here yet: no engine job is wired to Results");
        } else if (st->run(st, u->jr, SCR_RESULTS | APP_RUN_ALT) != 0) {
            snprintf(u->status, sizeof u->status, "%s", gf_last_error());
            app_state_log(st, "%s", gf_last_error());
        } else {
            snprintf(u->status, sizeof u->status, "started ablate (rows appear as they finish; c cancels)");
            u->last_event = u->now;
        }
        return true;
    case UK_UP: u->results_first++; break;
    case UK_DOWN: u->results_first--; break;
    case UK_PGUP: u->results_first += 10; break;
    case UK_PGDN: u->results_first -= 10; break;
    case UK_END: u->results_first = 0; break;
    default: return false;
    }
    if (u->results_first > st->n_results - 1) u->results_first = st->n_results - 1;
    if (u->results_first < 0) u->results_first = 0;
    return true;
}

static const key_hint keys[] = {
    {"\u23ce", "Enter", "evaluate plan"}, {"i", NULL, "init"}, {"a", NULL, "ablation table"},
    {"\u2191\u2193", "up/down", "scroll"},
};

const screen screen_results = {"Results", draw, key, NULL, keys, sizeof keys / sizeof keys[0]};
