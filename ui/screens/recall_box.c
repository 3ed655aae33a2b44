#include "screens/recall_box.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "keys.h"
#include "screens/prompt_box.h"
#include "screens/screens.h"

static bool running(const ui *u, const teacher_state *t) {
    return t && t->recall.job_id && u->st->job.active && u->st->job.id == t->recall.job_id;
}

void recall_box_open(ui *u, const result_row *row) {
    teacher_state *t = app_cur(u->st);
    if (!t) {
        ui_say(u, "no teacher: open one on 1 Teacher");
        return;
    }
    char label[96] = "";
    if (row) prompt_box_row_label(row, label, sizeof label);
    recall_view_request_for(&t->recall.req, row ? row->student : "", label, 0); /* the job caps the lengths */
    snprintf(t->recall.req.digest, sizeof t->recall.req.digest, "%s", row ? row->digest : "");
    u->v.results.recall = true;
    ui_say(u, "Enter measures recall of the teacher%s%s (Esc closes)", row ? " and the " : "", label);
}

/* a map: rows lengths, columns depths, each cell its accuracy over the tasks */
static void draw_map(ui *u, grid *g, int x, int y, int w, const char *title, const recall_result *r) {
    style acc = theme_accent(&u->th), dim = theme_dim(&u->th);
    grid_text(g, x, y, w, title, acc);
    if (r->n_cells == 0) {
        grid_text(g, x, y + 1, w, "no measure yet", dim);
        return;
    }
    int lengths[RECALL_MAX_LENGTHS], nl = 0;
    double depths[RECALL_MAX_DEPTHS];
    int nd = 0;
    for (int i = 0; i < r->n_cells; i++) {
        bool seen = false;
        for (int k = 0; k < nl; k++) seen |= lengths[k] == r->cells[i].length;
        if (!seen && nl < RECALL_MAX_LENGTHS) lengths[nl++] = r->cells[i].length;
        seen = false;
        for (int k = 0; k < nd; k++) seen |= depths[k] == r->cells[i].depth;
        if (!seen && nd < RECALL_MAX_DEPTHS) depths[nd++] = r->cells[i].depth;
    }
    int cx = x + 7;
    grid_text(g, x, y + 1, 7, "depth", dim);
    for (int d = 0; d < nd; d++) grid_printf(g, cx + d * 5, y + 1, 5, dim, "%4.0f", depths[d]);
    for (int l = 0; l < nl; l++) {
        grid_printf(g, x, y + 2 + l, 7, dim, "%6d", lengths[l]);
        for (int d = 0; d < nd; d++) {
            const double a = recall_view_accuracy(r, -1, lengths[l], depths[d]);
            style s = STYLE_PLAIN;
            if (isfinite(a)) {
                s.bg = theme_scale_color(&u->th, a);
                s.fg = a > 0.5 ? 16 : 231; /* black on the light end, white on the dark */
            }
            char cell[8];
            if (isfinite(a)) snprintf(cell, sizeof cell, " %3.0f", 100 * a);
            else snprintf(cell, sizeof cell, "   -");
            grid_text(g, cx + d * 5, y + 2 + l, 4, cell, s);
        }
    }
}

void recall_box_draw(ui *u, grid *g, rect r) {
    teacher_state *t = app_cur(u->st);
    if (!t) {
        u->v.results.recall = false;
        return;
    }
    const recall_view *v = &t->recall;
    style acc = theme_accent(&u->th), dim = theme_dim(&u->th);
    const int x0 = r.x + 1, w = r.w - 2;
    int y = r.y;
    grid_printf(g, x0, y++, w, acc, "Recall: the teacher and %s", v->req.student[0] ? v->req.label : "no student (R on a row)");
    grid_text(g, x0, y++, w,
              running(u, t) ? "measuring: c stops it" : "accuracy in percent over niah-number, multikey and vt, 2 samples a cell; Enter measures",
              dim);
    y++;
    const int half = w / 2;
    draw_map(u, g, x0, y, half - 1, "teacher", &v->teacher);
    char title[220];
    snprintf(title, sizeof title, "%s", v->student.n_cells ? v->ran.label : "student");
    draw_map(u, g, x0 + half, y, w - half, title, &v->student);
    y += 3 + (v->teacher.n_cells ? v->ran.rq.n_lengths : 1) + 1;
    if (!v->have) return;
    /* a table per task: accuracy by length, teacher / student */
    grid_printf(g, x0, y, w, acc, "%-12s", "task");
    const recall_request *rq = &v->ran.rq;
    for (int l = 0; l < rq->n_lengths; l++) grid_printf(g, x0 + 13 + l * 14, y, 14, acc, "%6d", rq->lengths[l]);
    y++;
    for (int k = 0; k < rq->n_tasks && y < r.y + r.h; k++, y++) {
        grid_printf(g, x0, y, 12, STYLE_PLAIN, "%s", recall_task_name(rq->tasks[k]));
        for (int l = 0; l < rq->n_lengths; l++) {
            const double a = recall_view_accuracy(&v->teacher, (int)rq->tasks[k], rq->lengths[l], -1);
            const double b = recall_view_accuracy(&v->student, (int)rq->tasks[k], rq->lengths[l], -1);
            char cell[32];
            if (v->student.n_cells) snprintf(cell, sizeof cell, "%3.0f / %3.0f", 100 * a, 100 * b);
            else snprintf(cell, sizeof cell, "%3.0f", 100 * a);
            grid_text(g, x0 + 13 + l * 14, y, 13, cell, STYLE_PLAIN);
        }
    }
}

bool recall_box_key(ui *u, int k) {
    teacher_state *t = app_cur(u->st);
    switch (k) {
    case UK_ESC:
    case 'R':
        u->v.results.recall = false;
        if (running(u, t)) ui_say(u, "the view is closed; recall goes on (c stops it, R shows it)");
        return true;
    case UK_ENTER:
        if (running(u, t)) {
            ui_say(u, "measuring: c stops it");
            return true;
        }
        if (!u->st->run || u->st->run(u->st, u->jr, ACT_RECALL) != 0) {
            ui_say(u, "recall: %s", u->st->run ? gf_last_error() : "nothing to run in this mode");
            return true;
        }
        ui_say(u, "measuring recall of the teacher%s%s: c stops it", t && t->recall.req.student[0] ? " and the " : "",
               t ? t->recall.req.label : "");
        return true;
    default: return false;
    }
}

static const key_hint keys[] = {{"\u23ce", "Enter", "measure"}, {"Esc", NULL, "close"}, {"c", NULL, "stop"}};

const key_hint *recall_box_keys(ui *u, int *n, const char **title) {
    (void)u;
    *n = (int)(sizeof keys / sizeof keys[0]);
    *title = "Recall view";
    return keys;
}
