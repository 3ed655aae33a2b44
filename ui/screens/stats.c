/* 3 Stats: per-head heat maps of one metric of the current teacher, the head
 * under the cursor in numbers, a colour bar and a histogram; several inits
 * side by side (stacked when the width is short). Every key says on the
 * status line what it did, or why it could not. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "keys.h"
#include "screens/halflife_panel.h"
#include "screens/screens.h"
#include "workbench/halflife_jobs.h"
#include "widgets/charts.h"

#define PANEL_W 34

static bool init_has(const teacher_state *t, int init, int m) { return teacher_has_metric(t, init, (head_metric)m); }

static int inits_with(const teacher_state *t, int m, int *ids) {
    int n = 0;
    for (int i = 0; i < t->n_inits; i++)
        if (init_has(t, i, m)) ids[n++] = i;
    return n;
}

static bool any_metric(const teacher_state *t, int m) {
    int ids[APP_MAX_INITS];
    return inits_with(t, m, ids) > 0;
}

static int metrics_present(const teacher_state *t) {
    int n = 0;
    for (int m = 0; m < MET_COUNT; m++) n += any_metric(t, m);
    return n;
}

/* Moves the metric to the next (dir +1) or previous present one; false when there is no other. */
static bool step_metric(stats_view *v, const teacher_state *t, int dir) {
    for (int k = 1; k < MET_COUNT; k++) {
        int m = ((v->metric + dir * k) % MET_COUNT + MET_COUNT) % MET_COUNT;
        if (any_metric(t, m)) {
            v->metric = m;
            return true;
        }
    }
    return false;
}

static void fix_view(stats_view *v, const teacher_state *t) {
    if (!any_metric(t, v->metric)) step_metric(v, t, 1);
    int ids[APP_MAX_INITS], n = inits_with(t, v->metric, ids);
    bool ok = false;
    for (int i = 0; i < n; i++) ok |= ids[i] == v->init;
    if (!ok && n) v->init = ids[0];
    if (v->cur_layer >= t->n_layers) v->cur_layer = t->n_layers - 1;
    if (v->cur_head >= t->n_heads) v->cur_head = t->n_heads - 1;
    if (v->cur_layer < 0) v->cur_layer = 0;
    if (v->cur_head < 0) v->cur_head = 0;
}

static value_scale common_scale(const teacher_state *t, int m, const int *ids, int n, bool log) {
    value_scale s = {0, 0, log};
    bool any = false;
    size_t cells = (size_t)t->n_layers * t->n_heads;
    for (int i = 0; i < n; i++) {
        value_scale one;
        if (!scale_fit(&one, t->inits[ids[i]].m[m], cells, log)) continue;
        if (!any || one.lo < s.lo) s.lo = one.lo;
        if (!any || one.hi > s.hi) s.hi = one.hi;
        any = true;
    }
    if (!any) s.lo = s.hi = log ? 1 : 0;
    return s;
}

static heatmap_spec make_spec(const stats_view *v, const teacher_state *t, int init, value_scale s, int cw, bool gap) {
    return (heatmap_spec){
        .values = t->inits[init].m[v->metric], .rows = t->n_layers, .cols = t->n_heads,
        .scale = s, .row_marked = t->kept, .col_title = "head", .cursor_row = v->cur_layer,
        .cursor_col = v->cur_head, .cell_w = cw, .gap = gap, .first_row = v->heat_first_row};
}

/* Widest cell layout whose n maps side by side (plus extra columns) fit in w; false when none does. */
static bool choose_cells(const stats_view *v, const teacher_state *t, int n, int extra, int w, int *cw, bool *gap) {
    static const int opts[][2] = {{3, 1}, {2, 1}, {1, 1}, {1, 0}};
    for (int i = 0; i < 4; i++) {
        heatmap_spec h = make_spec(v, t, v->init, (value_scale){0, 1, false}, opts[i][0], opts[i][1]);
        if (n * heatmap_width(&h) + (n - 1) * 2 + extra <= w) {
            *cw = opts[i][0], *gap = opts[i][1];
            return true;
        }
    }
    *cw = 1, *gap = false;
    return false;
}

static void fmt_with_unit(char *buf, size_t n, double v, const char *unit) {
    char num[16];
    fmt_num(num, sizeof num, v);
    snprintf(buf, n, "%s%s%s", num, unit[0] && !isnan(v) ? " " : "", isnan(v) ? "" : unit);
}

/* The half-life panels replace the metric's histogram when the metric is a half-life one of the
 * init that was measured. */
static bool shows_hl(const stats_view *v, const teacher_state *t) {
    return (v->metric == MET_HALFLIFE_DATA || v->metric == MET_HL_LOG2_RATIO) && t->hl.have &&
           !strcmp(t->inits[v->init].name, t->hl.ran.init);
}

static void draw_hl(ui *u, grid *g, rect r, const teacher_state *t) {
    int used = halflife_hist_draw(u, g, r, &t->hl, u->v.stats.cur_layer, u->v.stats.cur_head);
    if (r.h - used - 1 >= 2) halflife_flagged_draw(u, g, (rect){r.x, r.y + used + 1, r.w, r.h - used - 1}, &t->hl);
}

/* Which layer each half block shows (only when two layers share a row). */
static void draw_legend(ui *u, grid *g, int x, int y, int w, const heatmap_layout *l) {
    if (l->rows_per_line != 2) return;
    char line[200];
    snprintf(line, sizeof line, "%s top: layer on the left, bottom: the next", theme_glyph(&u->th, G_UPPER_HALF));
    grid_text(g, x, y, w, line, theme_dim(&u->th));
}

/* The head under the cursor in numbers, one metric per line. */
static int draw_values(ui *u, grid *g, rect r, const teacher_state *t, int rows_per_line) {
    const stats_view *v = &u->v.stats;
    int y = r.y, L = v->cur_layer, H = v->cur_head;
    style acc = theme_accent(&u->th), dim = theme_dim(&u->th);
    if (rows_per_line == 2)
        grid_printf(g, r.x, y++, r.w, acc, "layer %d head %d (%s half of row %d)", L, H, L % 2 ? "lower" : "upper",
                    L - L % 2);
    else
        grid_printf(g, r.x, y++, r.w, acc, "layer %d head %d", L, H);
    if (t->kept) grid_printf(g, r.x, y++, r.w, STYLE_PLAIN, "%s", t->kept[L] ? "kept: attention" : "replaced: GDN");
    /* a table: one column per initialization (abbreviated), "-" where unknown */
    int colw = t->n_inits > 1 ? (r.w - 10) / t->n_inits : r.w - 10;
    if (colw > 12) colw = 12;
    if (t->n_inits > 1) {
        for (int i = 0; i < t->n_inits; i++) grid_printf(g, r.x + 10 + i * colw, y, colw - 1, dim, "%s", t->inits[i].name);
        y++;
    }
    for (int m = 0; m < MET_COUNT && y < r.y + r.h; m++) {
        if (!any_metric(t, m)) continue;
        const metric_info *mi = metric_get((head_metric)m);
        style s = m == v->metric ? acc : STYLE_PLAIN;
        grid_text(g, r.x, y, 10, mi->symbol, s);
        for (int i = 0; i < t->n_inits; i++) {
            char val[40];
            double x = init_has(t, i, m) ? t->inits[i].m[m][L * t->n_heads + H] : NAN;
            fmt_with_unit(val, sizeof val, x, t->n_inits == 1 ? mi->unit : "");
            grid_text(g, r.x + 10 + i * colw, y, t->n_inits == 1 ? r.w - 10 : colw - 1, val, s);
        }
        y++;
    }
    return y - r.y;
}

static void draw_title(ui *u, grid *g, rect r, const teacher_state *t, bool side) {
    const stats_view *v = &u->v.stats;
    const metric_info *mi = metric_get((head_metric)v->metric);
    char line[512];
    const char *src = strrchr(t->stats_source, '/'); /* the teacher's statistics came from a stats JSON */
    snprintf(line, sizeof line, "metric: %s%s%s%s   scale: %s   init: %s%s%.200s", mi->name, mi->unit[0] ? " (" : "",
             mi->unit, mi->unit[0] ? ")" : "", v->log_scale[v->metric] ? "log" : "linear",
             side ? "side by side" : t->inits[v->init].name, t->stats_source[0] ? "   teacher: imported from " : "",
             t->stats_source[0] ? (src ? src + 1 : t->stats_source) : "");
    grid_text(g, r.x + 1, r.y, r.w - 1, line, STYLE_PLAIN);
}

static void draw_single(ui *u, grid *g, rect r, teacher_state *t) {
    stats_view *v = &u->v.stats;
    bool log = v->log_scale[v->metric];
    int id = v->init;
    value_scale s = common_scale(t, v->metric, &id, 1, log);
    int cw;
    bool gap;
    choose_cells(v, t, 1, PANEL_W + 2, r.w - 1, &cw, &gap);
    heatmap_spec h = make_spec(v, t, v->init, s, cw, gap);
    int hw = heatmap_width(&h);
    bool panel_right = hw + PANEL_W + 3 <= r.w;
    int avail = r.h - 1 - 2 - (panel_right ? 0 : 2); /* title, colour bar, legend, compact values */
    h.tall = avail >= 1 + t->n_layers + (panel_right ? 0 : 7); /* room for a line per layer */
    int rows_per_line = heatmap_rows_per_line(&h, &u->th);
    int need = 1 + (t->n_layers + rows_per_line - 1) / rows_per_line;
    int hist_h = 6;
    bool hist_under = !panel_right && avail - need >= hist_h;
    int heat_h = need < avail ? need : avail;
    rect hr = {r.x + 1, r.y + 1, hw, heat_h};
    heatmap_draw(g, hr, &h, &u->th, &v->heat[0]);
    v->n_heat = 1;
    v->heat_first_row = v->heat[0].first_row;
    colorbar_draw(g, (rect){r.x + 1, hr.y + heat_h, hw > 30 ? hw : 30, 1}, &s, &u->th);
    draw_legend(u, g, r.x + 1, hr.y + heat_h + 1, panel_right ? hw + 2 : r.w - 2, &v->heat[0]);
    size_t cells = (size_t)t->n_layers * t->n_heads;
    const double *vals = t->inits[v->init].m[v->metric];
    char title[96];
    snprintf(title, sizeof title, "histogram%s", log ? " (log bins)" : "");
    if (panel_right) {
        rect pr = {r.x + hw + 4, r.y + 1, r.w - hw - 5, r.h - 1};
        int used = draw_values(u, g, pr, t, rows_per_line);
        int left = pr.h - used - 2;
        if (shows_hl(v, t) && left >= 3) draw_hl(u, g, (rect){pr.x, pr.y + used + 1, pr.w, left + 1}, t);
        else if (left >= 5) { /* the histogram under the values, as large as the room allows */
            int hh = left < 12 ? left : 12, hy = pr.y + used + 1;
            grid_text(g, pr.x, hy, pr.w, title, theme_dim(&u->th));
            histogram_draw(g, (rect){pr.x, hy + 1, pr.w < 60 ? pr.w : 60, hh}, vals, cells, log, &u->th);
        }
    } else {
        /* narrow: one line of values under the colour bar and legend */
        int y = hr.y + heat_h + 1 + (rows_per_line == 2);
        char line[256];
        int n = snprintf(line, sizeof line, "L%d H%d:", v->cur_layer, v->cur_head);
        for (int m = 0; m < MET_COUNT && n < (int)sizeof line - 40; m++) {
            if (!init_has(t, v->init, m)) continue;
            char x[16];
            fmt_num(x, sizeof x, t->inits[v->init].m[m][v->cur_layer * t->n_heads + v->cur_head]);
            n += snprintf(line + n, sizeof line - n, " %s=%s", metric_get((head_metric)m)->symbol, x);
        }
        grid_text(g, r.x + 1, y, r.w - 2, line, STYLE_PLAIN);
        if (shows_hl(v, t) && r.y + r.h - y - 1 >= 3) draw_hl(u, g, (rect){r.x + 1, y + 1, r.w - 2, r.y + r.h - y - 1}, t);
        else if (hist_under) {
            grid_text(g, r.x + 1, y + 1, r.w - 2, title, theme_dim(&u->th));
            histogram_draw(g, (rect){r.x + 1, y + 2, hw < 40 ? 40 : hw, hist_h - 1}, vals, cells, log, &u->th);
        }
    }
}

/* The maps of several inits on one colour scale: side by side when they fit
 * the width, else stacked (each with as many rows as the height allows). */
static void draw_compare(ui *u, grid *g, rect r, teacher_state *t, const int *ids, int n) {
    stats_view *v = &u->v.stats;
    bool log = v->log_scale[v->metric];
    value_scale s = common_scale(t, v->metric, ids, n, log);
    int cw;
    bool gap;
    bool side = choose_cells(v, t, n, 0, r.w - 1, &cw, &gap);
    heatmap_spec h0 = make_spec(v, t, ids[0], s, cw, gap);
    const int hw = heatmap_width(&h0);
    const int cols = side ? n : 1, rows = side ? 1 : n;
    const int pitch = side ? (r.w - 1) / n : r.w - 1;
    int avail = r.h - 1 - 2; /* title; the colour bar and the legend under the maps */
    int block = avail / rows; /* each map: its name line, cells, histogram */
    h0.tall = side && block - 1 >= 1 + t->n_layers + 8;
    int rows_per_line = heatmap_rows_per_line(&h0, &u->th);
    int need = 1 + (t->n_layers + rows_per_line - 1) / rows_per_line;
    int hist_h = 0;
    if (side) {
        hist_h = block - 1 - need > 10 ? 10 : block - 1 - need;
        if (hist_h < 3) hist_h = block - 1 >= 8 ? 3 : 0;
    }
    int heat_h = need < block - 1 - hist_h ? need : block - 1 - hist_h;
    if (heat_h < 2) heat_h = 2;
    size_t cells = (size_t)t->n_layers * t->n_heads;
    v->n_heat = n;
    for (int k = 0; k < n; k++) {
        int x = r.x + 1 + (k % cols) * pitch, y = r.y + 1 + (k / cols) * block;
        int i = ids[k];
        char head[96], val[16];
        fmt_num(val, sizeof val, t->inits[i].m[v->metric][v->cur_layer * t->n_heads + v->cur_head]);
        snprintf(head, sizeof head, "%s: %s", t->inits[i].name, val);
        grid_text(g, x, y, (side ? pitch : r.w) - 1, head, i == v->init ? theme_accent(&u->th) : STYLE_PLAIN);
        heatmap_spec h = make_spec(v, t, i, s, cw, gap);
        h.tall = rows_per_line == 1;
        heatmap_draw(g, (rect){x, y + 1, hw, heat_h}, &h, &u->th, &v->heat[k]);
        if (!side) { /* stacked: the histogram beside its map when there is room */
            int hx = x + hw + 3, hwid = r.x + r.w - 1 - hx;
            if (hwid >= 20) histogram_draw(g, (rect){hx, y + 1, hwid < 40 ? hwid : 40, heat_h}, t->inits[i].m[v->metric],
                                           cells, log, &u->th);
        } else if (hist_h) {
            histogram_draw(g, (rect){x, y + 1 + heat_h, pitch - 1 < 40 ? pitch - 1 : 40, hist_h},
                           t->inits[i].m[v->metric], cells, log, &u->th);
        }
    }
    v->heat_first_row = v->heat[0].first_row;
    int by = r.y + 1 + (rows - 1) * block + 1 + heat_h + hist_h;
    if (by > r.y + r.h - 1) by = r.y + r.h - 1;
    int cbw = r.w - 2 < 60 ? r.w - 2 : 60;
    colorbar_draw(g, (rect){r.x + 1, by, cbw, 1}, &s, &u->th);
    if (by + 1 < r.y + r.h) draw_legend(u, g, r.x + 1, by + 1, r.w - 2, &v->heat[0]);
}

static void draw(ui *u, grid *g, rect r) {
    teacher_state *t = app_cur(u->st);
    stats_view *v = &u->v.stats;
    v->n_heat = 0;
    if (!t || !t->n_layers || !t->n_heads || metrics_present(t) == 0) {
        draw_unavailable(u, g, r, "per-head statistics of the teacher",
                         "Enter runs them (the same as graft stats MODEL --text FILE)");
        return;
    }
    if (v->follow_hl && t->hl.have) { /* the measurement h started has landed */
        v->follow_hl = false;
        for (int i = 0; i < t->n_inits; i++)
            if (!strcmp(t->inits[i].name, t->hl.ran.init) && init_has(t, i, MET_HALFLIFE_DATA)) v->metric = MET_HALFLIFE_DATA, v->init = i;
        v->side_by_side = false;
    }
    fix_view(v, t);
    int ids[APP_MAX_INITS], n = inits_with(t, v->metric, ids);
    bool side = v->side_by_side && n > 1;
    draw_title(u, g, r, t, side);
    if (side) draw_compare(u, g, r, t, ids, n);
    else draw_single(u, g, r, t);
}

/* What i and s need: the inits that have numbers for this metric, or the metric that has most. */
static int best_compare_metric(const teacher_state *t) {
    int best = -1, most = 1;
    for (int m = 0; m < MET_COUNT; m++) {
        int ids[APP_MAX_INITS], n = inits_with(t, m, ids);
        if (n > most) best = m, most = n;
    }
    return best;
}

/* h: measures the half-lives on the corpus of the selected Results row's student (else the newest). */
static void start_halflife(ui *u, teacher_state *t) {
    if (!t) {
        ui_say(u, "h: no teacher is loaded (1 Teacher opens one)");
        return;
    }
    if (!halflife_pick_student(t, u->v.results.sel_seq, &t->hl.req)) {
        ui_say(u, "h: no student to measure yet: Enter on 7 Results builds one (the selected row's is measured)");
        return;
    }
    if (!u->st->run || u->st->run(u->st, u->jr, ACT_HALFLIFE) != 0) {
        ui_say(u, "h: %s", u->st->run ? gf_last_error() : "nothing to run in this mode");
        return;
    }
    u->v.stats.follow_hl = true;
    ui_say(u, "measuring the half-lives of %s (%s) on the corpus: c stops it", t->hl.req.init, t->hl.req.student);
}

/* f: the cursor to the next flagged head, worst first (wraps). */
static void jump_flagged(ui *u, teacher_state *t) {
    halflife_view *h = &t->hl;
    if (!h->have) {
        ui_say(u, "f: no half-lives measured yet: h measures them");
        return;
    }
    if (h->n_flagged == 0) {
        ui_say(u, "f: no head of %s is flagged", h->ran.init);
        return;
    }
    h->jump = (h->jump + 1) % h->n_flagged;
    const halflife_head *hd = &h->r.heads[h->flagged[h->jump]];
    u->v.stats.cur_layer = hd->layer, u->v.stats.cur_head = hd->head;
    ui_say(u, "flagged %d of %d: layer %d head %d: %s", h->jump + 1, h->n_flagged, hd->layer, hd->head, hd->reason);
}

static bool key(ui *u, int k) {
    teacher_state *t = app_cur(u->st);
    stats_view *v = &u->v.stats;
    if (k == 'h') {
        start_halflife(u, t);
        return true;
    }
    const bool have = t && t->n_layers && t->n_heads && metrics_present(t) > 0;
    if (!have) {
        switch (k) { /* the keys still answer */
        case 'm': case 'M': case 'l': case 's': case 'i': case 'f':
            ui_say(u, "no statistics for %s yet: Enter computes them", t ? t->name : "the teacher (none is loaded)");
            return true;
        default: return false;
        }
    }
    int ids[APP_MAX_INITS], n;
    switch (k) {
    case UK_UP: v->cur_layer--; break;
    case UK_DOWN: v->cur_layer++; break;
    case UK_LEFT: v->cur_head--; break;
    case UK_RIGHT: v->cur_head++; break;
    case UK_PGUP: v->cur_layer -= 8; break;
    case UK_PGDN: v->cur_layer += 8; break;
    case UK_HOME: v->cur_layer = 0, v->cur_head = 0; break;
    case UK_END: v->cur_layer = t->n_layers - 1; break;
    case 'm':
    case 'M':
        if (!step_metric(v, t, k == 'm' ? 1 : -1))
            ui_say(u, "m: %s is the only metric so far; Stage 1 (4 Calibrate) adds half-lives, beta* and sigma*",
                   metric_get((head_metric)v->metric)->name);
        else ui_say(u, "metric: %s", metric_get((head_metric)v->metric)->name);
        break;
    case 'f': jump_flagged(u, t); break;
    case 'l':
        v->log_scale[v->metric] = !v->log_scale[v->metric];
        ui_say(u, "%s on a %s scale", metric_get((head_metric)v->metric)->name, v->log_scale[v->metric] ? "log" : "linear");
        break;
    case 's': {
        n = inits_with(t, v->metric, ids);
        if (v->side_by_side) {
            v->side_by_side = false;
            ui_say(u, "s: one init at a time (i picks it)");
            break;
        }
        if (n < 2) {
            int m = best_compare_metric(t);
            if (m < 0) {
                ui_say(u, "s: nothing to compare yet: run Stage 1 first (4 Calibrate, Enter) for the random and "
                          "taylor-only half-lives");
                break;
            }
            ui_say(u, "s: only %s has %s; comparing %s instead", t->inits[v->init].name,
                   metric_get((head_metric)v->metric)->name, metric_get((head_metric)m)->name);
            v->metric = m;
        } else {
            ui_say(u, "s: %d inits side by side on one scale", n);
        }
        v->side_by_side = true;
        break;
    }
    case 'i': {
        n = inits_with(t, v->metric, ids);
        if (n < 2) {
            ui_say(u, "i: only %s has %s; %s", n ? t->inits[ids[0]].name : "no init",
                   metric_get((head_metric)v->metric)->name,
                   best_compare_metric(t) >= 0 ? "m picks a metric several inits have"
                                               : "run Stage 1 first (4 Calibrate) for other inits");
            break;
        }
        for (int j = 0; j < n; j++)
            if (ids[j] == v->init) {
                v->init = ids[(j + 1) % n];
                break;
            }
        ui_say(u, "init: %s", t->inits[v->init].name);
        break;
    }
    default: return false;
    }
    fix_view(v, t);
    return true;
}

static bool click(ui *u, int x, int y) {
    stats_view *v = &u->v.stats;
    teacher_state *t = app_cur(u->st);
    for (int k = 0; t && k < v->n_heat; k++) {
        int row = v->cur_layer, col = v->cur_head;
        if (heatmap_hit(&v->heat[k], x, y, &row, &col)) {
            v->cur_layer = row, v->cur_head = col;
            int ids[APP_MAX_INITS];
            if (v->side_by_side && k < inits_with(t, v->metric, ids)) v->init = ids[k];
            return true;
        }
    }
    return false;
}

static const key_hint keys[] = {
    {"\u2191\u2193\u2190\u2192", "arrows", "cursor"}, {"m", NULL, "metric"}, {"l", NULL, "log"},
    {"s", NULL, "compare inits"}, {"i", NULL, "init"}, {"M", NULL, "previous metric"},
    {"h", NULL, "half-lives on text"}, {"f", NULL, "next flagged head"},
};

const screen screen_stats = {"Stats", draw, key, click, keys, sizeof keys / sizeof keys[0], ACT_STATS};
