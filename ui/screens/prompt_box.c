/* The prompt box of 7 Results (see prompt_box.h). What it asks for lives in
 * the teacher's gen.req, what came back in the rest of its gen_state
 * (src/workbench/generation.h); this file only draws them and edits the
 * request. */
#include "screens/prompt_box.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "keys.h"
#include "screens/screens.h"
#include "widgets/wrap.h"

enum { CTRL_R = 0x12, CTRL_T = 0x14 };

/* The box's generation is the running job. */
static bool generating(const ui *u, const teacher_state *t) {
    return t && t->gen.job_id && u->st->job.active && u->st->job.id == t->gen.job_id;
}

void prompt_box_row_label(const result_row *row, char *buf, size_t n) {
    char keep[16], init[32];
    result_cell(row, RC_KEEP, false, keep, sizeof keep);
    result_cell(row, RC_INIT, true, init, sizeof init);
    const char *what = row->kind == RUN_EVALUATE ? "student" : row->kind == RUN_ABLATE ? "ablation row" : "race row";
    snprintf(buf, n, "%s %s %s %s", what, row->strategy, keep, init);
}

/* The model of the request: the row's student folder, or the teacher. */
static void set_model(teacher_state *t, const results_view *v, bool student) {
    gen_request *r = &t->gen.req;
    if (student && v->row_student[0]) {
        snprintf(r->student, sizeof r->student, "%s", v->row_student);
        snprintf(r->digest, sizeof r->digest, "%s", v->row_digest);
        snprintf(r->label, sizeof r->label, "%s", v->row_label);
    } else {
        r->student[0] = r->digest[0] = 0;
        snprintf(r->label, sizeof r->label, "teacher %s", t->name);
    }
}

static void close_box(ui *u) {
    u->v.results.box = false;
    u->typing = false;
}

void prompt_box_open(ui *u, const result_row *row) {
    results_view *v = &u->v.results;
    teacher_state *t = app_cur(u->st);
    if (!t) {
        ui_say(u, "no teacher: open one on 1 Teacher");
        return;
    }
    snprintf(v->box_teacher, sizeof v->box_teacher, "%s", t->key);
    v->row_student[0] = v->row_label[0] = v->row_digest[0] = 0;
    if (row) {
        prompt_box_row_label(row, v->row_label, sizeof v->row_label);
        snprintf(v->row_student, sizeof v->row_student, "%s", row->student);
        snprintf(v->row_digest, sizeof v->row_digest, "%s", row->digest);
    }
    set_model(t, v, true);
    v->box = true;
    u->typing = !generating(u, t);
}

/* A path in at most w columns, cut at its start; returns the columns it took. */
static int draw_tail_w(ui *u, grid *g, int x, int y, int w, const char *path) {
    int pw = utf8_width(path);
    draw_tail(g, x, y, w, path, STYLE_PLAIN, &u->th);
    return pw < w ? pw : w;
}

/* One wrapped line of the text: the prompt's bytes in one style, the continuation's in another. */
static void draw_span(grid *g, int x, int y, int w, const gen_state *gs, text_span sp, style prompt, style cont) {
    char buf[2048];
    size_t split = gs->prompt_len > sp.start ? gs->prompt_len - sp.start : 0;
    if (split > sp.len) split = sp.len;
    int used = 0;
    if (split > 0) {
        wrap_clean(gs->text + sp.start, split, buf, sizeof buf);
        used = grid_text(g, x, y, w, buf, prompt);
    }
    if (split < sp.len) {
        wrap_clean(gs->text + sp.start + split, sp.len - split, buf, sizeof buf);
        grid_text(g, x + used, y, w - used, buf, cont);
    }
}

/* The text of the last generation in rows [top, bottom], its end in view. */
static void draw_text(ui *u, grid *g, int x, int w, int top, int bottom, const gen_state *gs) {
    const int rows = bottom - top + 1;
    if (rows < 1 || !gs->text) return;
    const int total = wrap_lines(gs->text, gs->len, w, NULL, 0);
    text_span *sp = gf_malloc((size_t)total * sizeof *sp);
    wrap_lines(gs->text, gs->len, w, sp, total);
    const int first = total > rows ? total - rows : 0;
    for (int i = first; i < total; i++)
        draw_span(g, x, top + i - first, w, gs, sp[i], theme_accent(&u->th), STYLE_PLAIN);
    free(sp);
}

/* The line under the text: how the last run went. */
static void run_line(const ui *u, const teacher_state *t, int w, char *buf, size_t n, bool *bad) {
    const gen_state *gs = &t->gen;
    const job_record *rec = app_job_find(u->st, gs->job_id);
    char rate[200];
    gen_rate_line(gs, w - 12, rate, sizeof rate); /* room for "generating: " */
    *bad = false;
    if (generating(u, t)) snprintf(buf, n, "generating%s%s", rate[0] ? ": " : " ...", rate);
    else if (rec && rec->outcome == JOB_CANCELLED) snprintf(buf, n, "cancelled%s%s", rate[0] ? ": " : "", rate);
    else if (rec && rec->outcome == JOB_INTERRUPTED) snprintf(buf, n, "interrupted (the workbench ended)");
    else if (rec && rec->outcome == JOB_FAILED) *bad = true, snprintf(buf, n, "failed: %s", rec->text);
    else if (rate[0]) gen_rate_line(gs, w, buf, n);
    else snprintf(buf, n, "no tokens (the model ended the text at once)");
}

void prompt_box_draw(ui *u, grid *g, rect r) {
    teacher_state *t = app_cur(u->st);
    results_view *v = &u->v.results;
    if (!t || strcmp(t->key, v->box_teacher)) { /* another teacher: its own box, opened with g */
        close_box(u);
        return;
    }
    const gen_state *gs = &t->gen;
    const bool running = generating(u, t);
    u->typing = !running; /* the keyboard is the box's, except c and the frame's keys while its job runs */
    style acc = theme_accent(&u->th), dim = theme_dim(&u->th);
    const char *dot = theme_glyph(&u->th, G_MIDDOT);
    grid_fill(g, r, " ", STYLE_PLAIN);
    draw_box(g, r, &u->th, acc);
    char line[2400];
    snprintf(line, sizeof line, " prompt box: %s ", gs->req.label);
    grid_text(g, r.x + 2, r.y, r.w - 4, line, acc);
    const int x = r.x + 2, w = r.w - 4, bottom = r.y + r.h - 1;
    if (w < 8 || r.h < 11) return;
    int y = r.y + 1;
    if (gs->req.student[0]) {
        int k = grid_text(g, x, y, w, "folder ", dim);
        draw_tail(g, x + k, y, w - k, gs->req.student, STYLE_PLAIN, &u->th);
    } else if (v->row_label[0] && !v->row_student[0]) {
        snprintf(line, sizeof line,
                 "the %s has no folder (ablation and race students live only while their job runs; Enter on "
                 "Results saves one): the teacher it is",
                 v->row_label);
        grid_text(g, x, y, w, line, acc);
    } else {
        const char *hint = v->row_student[0] ? "  (^T: the row's student)" : "";
        int k = grid_text(g, x, y, w, "teacher ", dim), hw = utf8_width(hint);
        if (w - k - hw < 12) hint = "", hw = 0;
        k += draw_tail_w(u, g, x + k, y, w - k - hw, t->model_arg[0] ? t->model_arg : t->key);
        grid_text(g, x + k, y, w - k, hint, dim);
    }
    y++;
    /* the length against its limit, at the right: visible before the limit cuts anything */
    char room[48];
    snprintf(room, sizeof room, v->prompt.full ? " %d/%d bytes: full" : " %d/%d", v->prompt.len, ENTRY_MAX - 1);
    const int rw = v->prompt.len > (ENTRY_MAX - 1) * 3 / 4 || v->prompt.full ? utf8_width(room) : 0;
    entry_draw(g, x, y, w - rw, "prompt: ", &v->prompt, !running, STYLE_PLAIN);
    if (rw) grid_text(g, x + w - rw, y, rw, room, v->prompt.full ? acc : dim);
    if (v->prompt.len == 0) grid_text(g, x + 10, y, w - 10, "(empty: from BOS alone)", dim);
    y++;
    gen_settings_line(&gs->req, dot, line, sizeof line);
    grid_text(g, x, y, w, line, STYLE_PLAIN);
    y += 2;
    if (!gs->job_id) {
        grid_text(g, x, y, w, "Enter generates; the continuation streams in here", dim);
        return;
    }
    char set[200];
    gen_settings_line(&gs->ran, dot, set, sizeof set);
    snprintf(line, sizeof line, "last run: %s %s %s", gs->ran.label, dot, set);
    grid_text(g, x, y, w, line, dim);
    draw_text(u, g, x, w, y + 1, bottom - 5, gs);
    bool bad;
    run_line(u, t, w, line, sizeof line, &bad);
    if (bad && !gs->have_memory) { /* failed before it began: the whole error, over the lines below too */
        draw_wrapped(g, x, bottom - 4, w, 4, line, acc);
        return;
    }
    grid_text(g, x, bottom - 4, w, line, bad ? acc : dim);
    gen_kv_line(gs, w, line, sizeof line);
    grid_text(g, x, bottom - 3, w, line, STYLE_PLAIN);
    gen_total_line(gs, w, line, sizeof line);
    grid_text(g, x, bottom - 2, w, line, STYLE_PLAIN);
    gen_measured_line(gs, w, line, sizeof line);
    grid_text(g, x, bottom - 1, w, line, STYLE_PLAIN);
}

static void run(ui *u, teacher_state *t) {
    app_state *st = u->st;
    gen_request *r = &t->gen.req;
    snprintf(r->prompt, sizeof r->prompt, "%s", u->v.results.prompt.text);
    if (!st->run || !u->jr) {
        ui_say(u, "nothing to run here: no engine is attached (graft tui MODEL)");
        return;
    }
    if (st->run(st, u->jr, ACT_GENERATE) != 0) {
        ui_say(u, "%s", gf_last_error());
        app_log(st, LOG_WARN, "generate: %s", gf_last_error());
        return;
    }
    u->typing = false; /* c cancels; the box takes the keys back when the job ends */
    ui_say(u, "generating %d tokens from %s (c stops it)", r->max_new, r->label);
    u->status_job = st->job.id;
    u->last_event = u->now;
}

bool prompt_box_key(ui *u, int k) {
    teacher_state *t = app_cur(u->st);
    results_view *v = &u->v.results;
    if (!t) {
        close_box(u);
        return false;
    }
    gen_request *r = &t->gen.req;
    char temp[16];
    if (generating(u, t)) { /* the frame's keys pass (c cancels); the Results keys wait */
        switch (k) {
        case UK_ESC: close_box(u); ui_say(u, "the box is closed; the generation goes on (c stops it, g shows it)"); return true;
        case UK_ENTER: ui_say(u, "generating: c stops it"); return true;
        case 'c': case 'q': case 'Q': case 'p': case '?': case UK_F1: case UK_LEFT: case UK_RIGHT: return false;
        default: return !(k >= '1' && k <= '9');
        }
    }
    switch (k) {
    case UK_ENTER: run(u, t); return true;
    case UK_ESC: close_box(u); return true;
    case UK_F1: u->help = true, u->help_scroll = 0; return true;
    case UK_TAB:
        r->sampled = !r->sampled;
        gen_temp_text(r->temp_tenths, temp, sizeof temp);
        if (r->sampled) ui_say(u, "sampled at temperature %s (PgUp/PgDn change it, ^R the seed)", temp);
        else ui_say(u, "greedy: the most likely token each time");
        return true;
    case UK_UP:
    case UK_DOWN:
        r->max_new = k == UK_UP ? r->max_new * 2 : r->max_new / 2;
        if (r->max_new > GEN_MAX_NEW) r->max_new = GEN_MAX_NEW;
        if (r->max_new < 1) r->max_new = 1;
        ui_say(u, "%d tokens (the model's context may end it sooner)", r->max_new);
        return true;
    case UK_PGUP:
    case UK_PGDN:
        r->temp_tenths += k == UK_PGUP ? 1 : -1;
        if (r->temp_tenths > GEN_MAX_TEMP) r->temp_tenths = GEN_MAX_TEMP;
        if (r->temp_tenths < 1) r->temp_tenths = 1;
        r->sampled = true;
        gen_temp_text(r->temp_tenths, temp, sizeof temp);
        ui_say(u, "sampled at temperature %s", temp);
        return true;
    case CTRL_T:
        if (!v->row_student[0]) {
            ui_say(u, "%s", v->row_label[0] ? "this row's student has no folder: only the teacher"
                                            : "no Results row was selected: only the teacher");
            return true;
        }
        set_model(t, v, r->student[0] == 0);
        ui_say(u, "the box's model: %s (Enter generates)", r->label);
        return true;
    case CTRL_R:
        r->seed++;
        ui_say(u, "seed %ld", r->seed);
        return true;
    }
    entry_key(&v->prompt, k);
    return true;
}

/* most useful first: the key bar shows as many as fit */
static const key_hint typing_keys[] = {
    {"\u23ce", "Enter", "generate"},       {"Esc", NULL, "close"},        {"Tab", NULL, "greedy/sampled"},
    {"\u2191\u2193", "up/down", "tokens"}, {"^T", NULL, "teacher/row"}, {"F1", NULL, "help"},
    {"PgUp/Dn", NULL, "temp"},             {"^R", NULL, "next seed"},     {"^U", NULL, "clear to start"},
    {"^W", NULL, "delete word"},           {"^A ^E", NULL, "start / end"}, {"^K", NULL, "clear to end"},
    {"\u2190\u2192", "left/right", "move"},
};
static const key_hint running_keys[] = {
    {"c", NULL, "stop"}, {"Esc", NULL, "close (it goes on)"}, {"?", NULL, "help"}, {"q", NULL, "quit"},
};

const key_hint *prompt_box_keys(ui *u, int *n, const char **title) {
    if (generating(u, app_cur(u->st))) {
        *n = (int)(sizeof running_keys / sizeof running_keys[0]);
        *title = "prompt box, while it generates";
        return running_keys;
    }
    *n = (int)(sizeof typing_keys / sizeof typing_keys[0]);
    *title = "prompt box (every other key is text)";
    return typing_keys;
}
