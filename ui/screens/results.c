/* 7 Results: the current teacher's runs, one row each: evaluated plans (Enter
 * builds the plan's student under the chosen init and measures its zero-shot
 * perplexity next to the teacher's), ablation rows (a) and race runs
 * (6 Recover). Columns say what each row was run with: strategy, ratio,
 * init, Stage 2 steps, the evaluation slice. Rows sort by any column (o, O);
 * the selected row's headless command is under the table, whole, to copy.
 * Columns that do not fit are dropped by priority and named. g opens the
 * prompt box (prompt_box.c) on the selected row's student or the teacher. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/error.h"
#include "keys.h"
#include "screens/import_prompt.h"
#include "screens/prompt_box.h"
#include "screens/recall_box.h"
#include "screens/screens.h"
#include "student/student.h"
#include "workbench/best_variant.h"
#include "workbench/result_request.h"

#define MAX_ROWS_SHOWN 4096

/* Row indices in the shown order: run order (reversed with O), or by a column, stably
 * (tied rows stay in run order, ascending and descending alike). */
static int sorted_rows(const teacher_state *t, const results_view *v, int *order) {
    int n = t->n_results < MAX_ROWS_SHOWN ? t->n_results : MAX_ROWS_SHOWN;
    for (int i = 0; i < n; i++) order[i] = i;
    if (v->sort_col < 0) {
        if (v->sort_desc)
            for (int i = 0; i < n / 2; i++) {
                int x = order[i];
                order[i] = order[n - 1 - i];
                order[n - 1 - i] = x;
            }
        return n;
    }
    /* insertion sort: stable, and tables are small */
    for (int i = 1; i < n; i++) {
        int x = order[i], j = i - 1;
        while (j >= 0 && result_compare_col(&t->results[order[j]], &t->results[x], (result_col)v->sort_col,
                                            v->sort_desc) > 0) {
            order[j + 1] = order[j];
            j--;
        }
        order[j + 1] = x;
    }
    return n;
}

/* The selected row's place in the shown order: the row whose seq is sel_seq, else the newest. */
static int selected_pos(const teacher_state *t, const results_view *v, const int *order, int n) {
    int newest = 0;
    for (int p = 0; p < n; p++) {
        if (t->results[order[p]].seq == v->sel_seq) return p;
        if (t->results[order[p]].seq > t->results[order[newest]].seq) newest = p;
    }
    return newest;
}

typedef struct {
    int cols[RC_COUNT], n;       /* shown columns, in order */
    int width[RC_COUNT];
    bool abbreviate;
    char hidden[200];            /* the columns dropped, for the footer */
} layout;

static bool column_applies(const teacher_state *t, result_col c) {
    bool any = false;
    for (int i = 0; i < t->n_results && !any; i++) {
        const result_row *r = &t->results[i];
        if (c == RC_DETAIL) any = r->init_detail[0] != 0;
        else if (c == RC_TTT) any = r->kind == RUN_RACE;
        else if (c == RC_STUDENT) any = r->student[0] != 0;
        else if (c == RC_SOURCE) any = r->source[0] != 0;
        else any = true;
    }
    return any;
}

static void fit(const teacher_state *t, int w, layout *L) {
    int natural[RC_COUNT];
    bool on[RC_COUNT];
    for (int pass = 0; pass < 2; pass++) {
        L->abbreviate = pass == 1;
        int total = 0;
        for (int c = 0; c < RC_COUNT; c++) {
            on[c] = column_applies(t, (result_col)c);
            natural[c] = utf8_width(result_col_get((result_col)c)->header) + 1; /* room for a sort mark */
            for (int i = 0; on[c] && i < t->n_results; i++) {
                char cell[512];
                result_cell(&t->results[i], (result_col)c, L->abbreviate, cell, sizeof cell);
                int cw = utf8_width(cell);
                if (cw > natural[c]) natural[c] = cw;
            }
            if (on[c]) total += natural[c] + 2;
        }
        if (total <= w) break;
    }
    /* the student path shrinks to 16 (cut from the left) and the kept list to 12 first, then columns go by priority */
    int total = 0;
    for (int c = 0; c < RC_COUNT; c++)
        if (on[c]) total += natural[c] + 2;
    const struct { int col, min; } shrink[] = {{RC_STUDENT, 16}, {RC_KEPT, 12}};
    for (int k = 0; k < 2 && total > w; k++) {
        int c = shrink[k].col;
        if (!on[c] || natural[c] <= shrink[k].min) continue;
        int cut = total - w < natural[c] - shrink[k].min ? total - w : natural[c] - shrink[k].min;
        natural[c] -= cut;
        total -= cut;
    }
    L->hidden[0] = 0;
    while (total > w) {
        int worst = -1;
        for (int c = 0; c < RC_COUNT; c++)
            if (on[c] && (worst < 0 || result_col_get((result_col)c)->priority < result_col_get((result_col)worst)->priority))
                worst = c;
        if (worst < 0 || result_col_get((result_col)worst)->priority >= 9) break; /* never the essentials */
        on[worst] = false;
        total -= natural[worst] + 2;
        size_t n = strlen(L->hidden);
        snprintf(L->hidden + n, sizeof L->hidden - n, "%s%s", n ? ", " : "", result_col_get((result_col)worst)->header);
    }
    L->n = 0;
    for (int c = 0; c < RC_COUNT; c++)
        if (on[c]) {
            L->cols[L->n] = c;
            L->width[L->n++] = natural[c];
        }
}

/* A cell in width w: whole, else its tail ("…name") for paths, its head and an ellipsis otherwise. */
static void draw_cell(ui *u, grid *g, int x, int y, int w, const char *s, bool cut_left, style st) {
    if (cut_left) draw_tail(g, x, y, w, s, st, &u->th);
    else grid_text(g, x, y, w, s, st);
}

static void slice_line(const app_state *st, const teacher_state *t, char *buf, size_t n) {
    char want[96];
    result_slice_label(st->corpus, st->settings.eval_windows, 256, want, sizeof want);
    if (!isfinite(t->teacher_ppl)) {
        snprintf(buf, n, "teacher perplexity on %s: not measured yet (Enter or a measures it)", want);
        return;
    }
    char got[96];
    result_slice_label(t->ppl_corpus, t->ppl_windows, t->ppl_ctx, got, sizeof got);
    if (strcmp(got, want))
        snprintf(buf, n, "teacher perplexity %.4f on %s (the settings now say %s: the next run measures it)",
                 t->teacher_ppl, got, want);
    else
        snprintf(buf, n, "teacher perplexity %.4f on %s, the slice of evaluate and ablate rows", t->teacher_ppl, got);
}

static void draw(ui *u, grid *g, rect r) {
    const app_state *st = u->st;
    teacher_state *t = app_cur(st);
    results_view *v = &u->v.results;
    const int x0 = r.x + 1, w = r.w - 2;
    style acc = theme_accent(&u->th), dim = theme_dim(&u->th);
    if (!t) {
        draw_unavailable(u, g, r, "a teacher", "open one on 1 Teacher (the default teacher loads by itself)");
        return;
    }
    if (v->box) {
        prompt_box_draw(u, g, r);
        if (v->box) return;
    }
    if (v->recall) {
        recall_box_draw(u, g, r);
        if (v->recall) return;
    }
    int y = r.y;
    char line[600];
    slice_line(st, t, line, sizeof line);
    grid_text(g, x0, y++, w, line, acc);
    if (t->n_layers) {
        char slice[96], s1[64] = "";
        result_slice_label(st->corpus, st->settings.eval_windows, 256, slice, sizeof slice);
        student_init init;
        if (student_init_parse(st->eval_init, &init) == 0 && init_uses_stage1(init) && !stage1_choice_is_default(&t->stage1)) {
            char label[40];
            stage1_choice_label(&t->stage1, label, sizeof label);
            snprintf(s1, sizeof s1, " (stage1 %s)", label);
        }
        char s2[48] = ""; /* Stage 2 steps only for the inits that run Stage 2 */
        if (student_init_parse(st->eval_init, &init) != 0 || init_uses_stage2(init))
            snprintf(s2, sizeof s2, ", %d Stage 2 steps", st->settings.stage2_steps);
        grid_printf(g, x0, y, w, dim, "Enter evaluates: %s %d of %d attention, %s%s%s, %s", t->strategy,
                    teacher_kept_count(t), t->n_layers, st->eval_init, s1, s2, slice);
    }
    y++;
    /* an evaluation or ablation cut short when the workbench last ended: where it had got to */
    const job_record *ev = app_last_job(st, t, "evaluate"), *ab = app_last_job(st, t, "ablate");
    const job_record *cut = ev && ev->outcome == JOB_INTERRUPTED ? ev : ab && ab->outcome == JOB_INTERRUPTED ? ab : NULL;
    if (cut) {
        char at[200];
        app_job_progress_text(cut, at, sizeof at);
        grid_printf(g, x0, y++, w, acc, "%s was interrupted %s; %s runs it again", cut->name, at,
                    cut == ev ? "Enter" : "a");
    }
    /* race rows read against the teacher on the race's own held-out sequences, not the slice above */
    for (int i = t->n_results - 1; i >= 0; i--) {
        const result_row *rr = &t->results[i];
        if (rr->kind != RUN_RACE) continue;
        if (isfinite(rr->teacher_ppl))
            grid_printf(g, x0, y++, w, dim, "race rows: held-out ppl of the race's own sequences; the teacher's on them %.4f",
                        rr->teacher_ppl);
        else
            grid_text(g, x0, y++, w, "race rows: held-out ppl of the race's own sequences (teacher not measured on them)", dim);
        break;
    }
    if (import_prompt_active(u)) import_prompt_draw(u, g, x0, y++, w);
    char best[600];
    best_variant_line(t, best, sizeof best);
    if (best[0] && y + 8 <= r.y + r.h) y += draw_wrapped(g, x0, y, w, 2, best, acc); /* room left for rows */
    if (t->n_results == 0) {
        draw_unavailable(u, g, (rect){r.x, y + 1, r.w, r.y + r.h - y - 1}, "results of converted students of this teacher",
                         "Enter builds and evaluates the plan's student; a runs the ablation table; g prompts the teacher");
        return;
    }
    static int order[MAX_ROWS_SHOWN];
    int n = sorted_rows(t, v, order);
    layout L;
    fit(t, w, &L);
    /* the sort, then the header with a mark on the sort column */
    const char *up = theme_glyph(&u->th, v->sort_desc ? G_SORT_DOWN : G_SORT_UP);
    if (v->searching)
        entry_draw(g, x0, y, w, "search: ", &v->search, true, STYLE_PLAIN);
    else if (v->sort_col >= 0)
        grid_printf(g, x0, y, w, dim, "%d row%s, sorted by %s %s (o: next column, O: reverse)", n, n == 1 ? "" : "s",
                    result_col_get((result_col)v->sort_col)->header, v->sort_desc ? "descending" : "ascending");
    else
        grid_printf(g, x0, y, w, dim, "%d row%s in run order%s (o: sort by a column, O: reverse)", n, n == 1 ? "" : "s",
                    v->sort_desc ? ", newest first" : "");
    y++;
    int x = x0;
    for (int i = 0; i < L.n; i++) {
        char h[48];
        snprintf(h, sizeof h, "%s%s", result_col_get((result_col)L.cols[i])->header, L.cols[i] == v->sort_col ? up : "");
        draw_cell(u, g, x, y, L.width[i], h, false, acc);
        x += L.width[i] + 2;
    }
    y++;
    /* footer: the selected row's command, whole (wrapped over up to 4 lines), and what is hidden */
    v->cursor = selected_pos(t, v, order, n);
    const result_row *cur = &t->results[order[v->cursor]];
    char cmd[1600], text[1900];
    result_command(cur, t->model_arg[0] ? t->model_arg : t->key, cmd, sizeof cmd);
    if (cur->source[0]) /* run elsewhere: its command as it ran there; nothing of it is on disk here */
        snprintf(text, sizeof text, "row %d of %d, imported from %.255s (its row %d), as run there: %.1300s", v->cursor + 1, n,
                 cur->source, cur->source_row, cmd);
    else
        snprintf(text, sizeof text, "row %d of %d, headless: %s", v->cursor + 1, n, cmd);
    int cmd_lines = (utf8_width(text) + w - 1) / (w > 20 ? w - 12 : 8) + 1; /* room for breaks at spaces */
    if (cmd_lines > 4) cmd_lines = 4;
    int footer = cmd_lines + (L.hidden[0] ? 1 : 0);
    int rows = r.y + r.h - y - footer;
    if (rows < 1) rows = 1;
    v->rows = rows;
    /* the selection in view, and no empty rows below the last while earlier ones are hidden
     * (a resize to a taller terminal leaves no stale offset) */
    if (v->first > n - rows) v->first = n - rows;
    if (v->first > v->cursor) v->first = v->cursor;
    if (v->cursor >= v->first + rows) v->first = v->cursor - rows + 1;
    if (v->first < 0) v->first = 0;
    v->row_y0 = y;
    for (int i = 0; i < rows && v->first + i < n; i++) {
        const result_row *row = &t->results[order[v->first + i]];
        bool sel = v->first + i == v->cursor;
        x = x0;
        for (int k = 0; k < L.n; k++) {
            char cell[512];
            result_cell(row, (result_col)L.cols[k], L.abbreviate, cell, sizeof cell);
            draw_cell(u, g, x, y + i, L.width[k], cell, result_col_get((result_col)L.cols[k])->cut_left, STYLE_PLAIN);
            x += L.width[k] + 2;
        }
        if (sel) grid_add_attr(g, (rect){x0, y + i, x - x0 - 2 > 0 ? x - x0 - 2 : 1, 1}, ATTR_REVERSE);
    }
    int fy = r.y + r.h - footer;
    int used = draw_wrapped(g, x0, fy, w, cmd_lines, text, dim);
    if (L.hidden[0]) grid_printf(g, x0, fy + used, w, dim, "hidden at this width: %s", L.hidden);
}

/* The next row (in the shown order, wrapping) after the selected one whose cells hold the
 * search text (any case); it becomes the selection. */
static void find(ui *u, teacher_state *t, int dir) {
    results_view *v = &u->v.results;
    if (!v->search.len) {
        ui_say(u, "nothing to search for: / types it");
        return;
    }
    if (!t || t->n_results == 0) {
        ui_say(u, "no rows to search");
        return;
    }
    static int order[MAX_ROWS_SHOWN];
    int n = sorted_rows(t, v, order), from = selected_pos(t, v, order, n);
    for (int k = 1; k <= n; k++) {
        int p = ((from + dir * k) % n + n) % n;
        const result_row *row = &t->results[order[p]];
        for (int c = 0; c < RC_COUNT; c++) {
            char cell[512];
            result_cell(row, (result_col)c, false, cell, sizeof cell);
            if (!strcasestr(cell, v->search.text)) continue;
            v->sel_seq = row->seq;
            ui_say(u, "'%s': row %d of %d (%s)", v->search.text, p + 1, n, result_col_get((result_col)c)->header);
            return;
        }
    }
    ui_say(u, "'%s': in no row", v->search.text);
}

static bool key(ui *u, int k) {
    app_state *st = u->st;
    teacher_state *t = app_cur(st);
    results_view *v = &u->v.results;
    if (v->box) return prompt_box_key(u, k);
    if (v->recall) return recall_box_key(u, k);
    if (v->searching) {
        entry_result res = entry_key(&v->search, k);
        if (res == ENTRY_CANCEL) entry_clear(&v->search);
        if (res == ENTRY_CANCEL || res == ENTRY_SUBMIT) v->searching = u->typing = false;
        if (res == ENTRY_SUBMIT) find(u, t, 1);
        return true;
    }
    if (import_prompt_active(u)) return import_prompt_key(u, k);
    static int order[MAX_ROWS_SHOWN];
    int n = t ? sorted_rows(t, v, order) : 0;
    int pos = n ? selected_pos(t, v, order, n) : 0;
    const result_row *sel = n ? &t->results[order[pos]] : NULL;
    switch (k) {
    case 'I': import_prompt_open(u); return true;
    case '/':
        v->searching = u->typing = true;
        entry_clear(&v->search);
        return true;
    case 'n': find(u, t, 1); return true;
    case 'N': find(u, t, -1); return true;
    case 'R': /* the Recall view: the teacher and the selected row's student (the teacher alone without rows) */
        if (sel && sel->source[0]) { /* its student is on the machine that ran it */
            ui_say(u, "R: this row was imported from %s: its student is not on this machine", sel->source);
            return true;
        }
        recall_box_open(u, sel);
        return true;
    case 'g': /* the prompt box on the selected row (the teacher without rows) */
        if (sel && sel->source[0]) { /* its student, if any, is on the machine that ran it */
            ui_say(u, "g: this row was imported from %s: its student is not on this machine (run its command here to "
                      "build one)", sel->source);
            return true;
        }
        prompt_box_open(u, sel);
        return true;
    case 'i': { /* the init "evaluate" builds, among the six */
        student_init cur;
        if (student_init_parse(st->eval_init, &cur) != 0) cur = INIT_TAYLOR_CALIBRATE;
        cur = (student_init)((cur + 1) % INIT_COUNT);
        snprintf(st->eval_init, sizeof st->eval_init, "%s", student_init_name(cur));
        ui_say(u, "Enter builds the student under %s", st->eval_init);
        st->session_dirty = true;
        return true;
    }
    case 'a':
        ui_run_action(u, ACT_ABLATE);
        if (u->status_job) {
            if (st->settings.ablate_stage1)
                ui_say(u, "started the Stage 1 component ablation (all, none, each alone, each left out; %d Stage 2 "
                          "steps; 9 Settings: ablation); c cancels", st->settings.ablate_steps);
            else
                ui_say(u, "started ablate: six inits (%d Stage 2 steps per layer; rows appear as they finish; c cancels)",
                       st->settings.ablate_steps);
            u->status_job = st->job.id;
        }
        return true;
    case 'o': { /* next sort column: run order, then each column shown; the selection stays on its row */
        int c = v->sort_col;
        do c = c + 1 >= RC_COUNT ? -1 : c + 1;
        while (c >= 0 && t && !column_applies(t, (result_col)c));
        v->sort_col = c;
        if (n) v->sel_seq = t->results[order[pos]].seq;
        ui_say(u, "sorted by %s", c < 0 ? "run order" : result_col_get((result_col)c)->header);
        return true;
    }
    case 'O':
        v->sort_desc = !v->sort_desc;
        if (n) v->sel_seq = t->results[order[pos]].seq;
        ui_say(u, "%s", v->sort_desc ? "descending" : "ascending");
        return true;
    case UK_UP: pos--; break;
    case UK_DOWN: pos++; break;
    case UK_PGUP: pos -= v->rows > 1 ? v->rows - 1 : 10; break;
    case UK_PGDN: pos += v->rows > 1 ? v->rows - 1 : 10; break;
    case UK_HOME: pos = 0; break;
    case UK_END:
        v->sel_seq = -1; /* the newest, and the next rows as they come */
        return true;
    default: return false;
    }
    if (n == 0) return true;
    if (pos >= n) pos = n - 1;
    if (pos < 0) pos = 0;
    v->sel_seq = t->results[order[pos]].seq;
    return true;
}

/* A click on a row selects it. */
static bool click(ui *u, int x, int y) {
    (void)x;
    teacher_state *t = app_cur(u->st);
    results_view *v = &u->v.results;
    if (!t || v->box || v->recall || v->row_y0 <= 0 || y < v->row_y0 || y >= v->row_y0 + v->rows) return false;
    static int order[MAX_ROWS_SHOWN];
    int n = sorted_rows(t, v, order), p = v->first + (y - v->row_y0);
    if (p < 0 || p >= n) return false;
    v->sel_seq = t->results[order[p]].seq;
    return true;
}

static const key_hint keys[] = {
    {"\u23ce", "Enter", "evaluate plan"}, {"g", NULL, "prompt box"}, {"R", NULL, "recall view"}, {"i", NULL, "init"},
    {"a", NULL, "ablation table"}, {"\u2191\u2193", "up/down", "row"}, {"o", NULL, "sort"}, {"O", NULL, "reverse"},
    {"/", NULL, "search"}, {"n", NULL, "next hit"}, {"N", NULL, "previous hit"}, {"I", NULL, "import JSON"},
    {"End", NULL, "newest row"},
};

const key_hint *results_mode_keys(ui *u, int *n, const char **title) {
    if (u->v.results.recall) return recall_box_keys(u, n, title);
    return u->v.results.box ? prompt_box_keys(u, n, title) : NULL;
}

const screen screen_results = {"Results", draw, key, click, keys, sizeof keys / sizeof keys[0], ACT_EVALUATE};
