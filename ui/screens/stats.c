/* 3 Stats: per-head heat maps of one metric, the head under the cursor in
 * numbers, a colour bar and a histogram; side by side for several inits. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "keys.h"
#include "screens/screens.h"
#include "widgets/charts.h"

#define PANEL_W 34

static bool init_has(const app_state *st, int init, int m) { return st->inits[init].m[m] != NULL; }

static int inits_with(const app_state *st, int m, int *ids) {
    int n = 0;
    for (int i = 0; i < st->n_inits; i++)
        if (init_has(st, i, m)) ids[n++] = i;
    return n;
}

static bool any_metric(const app_state *st, int m) {
    int ids[APP_MAX_INITS];
    return inits_with(st, m, ids) > 0;
}

/* Moves u->metric to the next (dir +1) or previous present metric. */
static void step_metric(ui *u, int dir) {
    for (int k = 1; k <= MET_COUNT; k++) {
        int m = ((u->metric + dir * k) % MET_COUNT + MET_COUNT) % MET_COUNT;
        if (any_metric(u->st, m)) {
            u->metric = m;
            return;
        }
    }
}

static void fix_view(ui *u) {
    app_state *st = u->st;
    if (!any_metric(st, u->metric)) step_metric(u, 1);
    int ids[APP_MAX_INITS], n = inits_with(st, u->metric, ids);
    bool ok = false;
    for (int i = 0; i < n; i++) ok |= ids[i] == u->init;
    if (!ok && n) u->init = ids[0];
    if (u->cur_layer >= st->n_layers) u->cur_layer = st->n_layers - 1;
    if (u->cur_head >= st->n_heads) u->cur_head = st->n_heads - 1;
    if (u->cur_layer < 0) u->cur_layer = 0;
    if (u->cur_head < 0) u->cur_head = 0;
}

static value_scale common_scale(const app_state *st, int m, const int *ids, int n, bool log) {
    value_scale s = {0, 0, log};
    bool any = false;
    size_t cells = (size_t)st->n_layers * st->n_heads;
    for (int i = 0; i < n; i++) {
        value_scale one;
        if (!scale_fit(&one, st->inits[ids[i]].m[m], cells, log)) continue;
        if (!any || one.lo < s.lo) s.lo = one.lo;
        if (!any || one.hi > s.hi) s.hi = one.hi;
        any = true;
    }
    if (!any) s.lo = s.hi = log ? 1 : 0;
    return s;
}

static heatmap_spec make_spec(ui *u, int init, value_scale s, int cw, bool gap) {
    app_state *st = u->st;
    return (heatmap_spec){
        .values = st->inits[init].m[u->metric], .rows = st->n_layers, .cols = st->n_heads,
        .scale = s, .row_marked = st->kept, .col_title = "head", .cursor_row = u->cur_layer,
        .cursor_col = u->cur_head, .cell_w = cw, .gap = gap, .first_row = u->heat_first_row};
}

/* Widest cell layout whose n maps (plus extra columns) fit in w. */
static void choose_cells(ui *u, int n, int extra, int w, int *cw, bool *gap) {
    static const int opts[][2] = {{3, 1}, {2, 1}, {1, 1}, {1, 0}};
    for (int i = 0; i < 4; i++) {
        heatmap_spec h = make_spec(u, u->init, (value_scale){0, 1, false}, opts[i][0], opts[i][1]);
        if (n * heatmap_width(&h) + (n - 1) * 2 + extra <= w) {
            *cw = opts[i][0], *gap = opts[i][1];
            return;
        }
    }
    *cw = 1, *gap = false;
}

static void fmt_with_unit(char *buf, size_t n, double v, const char *unit) {
    char num[16];
    fmt_num(num, sizeof num, v);
    snprintf(buf, n, "%s%s%s", num, unit[0] && !isnan(v) ? " " : "", isnan(v) ? "" : unit);
}

/* The head under the cursor in numbers, one metric per line. */
static int draw_values(ui *u, grid *g, rect r) {
    app_state *st = u->st;
    int y = r.y, L = u->cur_layer, H = u->cur_head;
    style acc = theme_accent(&u->th), dim = theme_dim(&u->th);
    grid_printf(g, r.x, y++, r.w, acc, "layer %d head %d", L, H);
    if (st->kept)
        grid_printf(g, r.x, y++, r.w, STYLE_PLAIN, "%s", st->kept[L] ? "kept: attention" : "replaced: GDN");
    /* a table: one column per initialization (abbreviated), "-" where unknown */
    int colw = st->n_inits > 1 ? (r.w - 10) / st->n_inits : r.w - 10;
    if (colw > 12) colw = 12;
    if (st->n_inits > 1) {
        for (int i = 0; i < st->n_inits; i++)
            grid_printf(g, r.x + 10 + i * colw, y, colw - 1, dim, "%s", st->inits[i].name);
        y++;
    }
    for (int m = 0; m < MET_COUNT && y < r.y + r.h; m++) {
        if (!any_metric(st, m)) continue;
        const metric_info *mi = metric_get((head_metric)m);
        style s = m == u->metric ? acc : STYLE_PLAIN;
        grid_text(g, r.x, y, 10, mi->symbol, s);
        for (int i = 0; i < st->n_inits; i++) {
            char val[40];
            double v = init_has(st, i, m) ? st->inits[i].m[m][L * st->n_heads + H] : NAN;
            fmt_with_unit(val, sizeof val, v, st->n_inits == 1 ? mi->unit : "");
            grid_text(g, r.x + 10 + i * colw, y, st->n_inits == 1 ? r.w - 10 : colw - 1, val, s);
        }
        y++;
    }
    return y - r.y;
}

static void draw_title(ui *u, grid *g, rect r) {
    const metric_info *mi = metric_get((head_metric)u->metric);
    char line[256];
    snprintf(line, sizeof line, "metric: %s%s%s%s   scale: %s   init: %s", mi->name, mi->unit[0] ? " (" : "",
             mi->unit, mi->unit[0] ? ")" : "", u->log_scale[u->metric] ? "log" : "linear",
             u->side_by_side ? "side by side" : u->st->inits[u->init].name);
    grid_text(g, r.x + 1, r.y, r.w - 1, line, STYLE_PLAIN);
}

static void draw_single(ui *u, grid *g, rect r) {
    app_state *st = u->st;
    bool log = u->log_scale[u->metric];
    int id = u->init;
    value_scale s = common_scale(st, u->metric, &id, 1, log);
    int cw;
    bool gap;
    choose_cells(u, 1, PANEL_W + 2, r.w - 1, &cw, &gap);
    heatmap_spec h = make_spec(u, u->init, s, cw, gap);
    int hw = heatmap_width(&h);
    bool panel_right = hw + PANEL_W + 3 <= r.w;
    int avail = r.h - 1 - 1 - (panel_right ? 0 : 2); /* title, colour bar, compact values */
    h.tall = avail >= 1 + st->n_layers + (panel_right ? 0 : 7); /* room for a line per layer */
    int rows_per_line = heatmap_rows_per_line(&h, &u->th);
    int need = 1 + (st->n_layers + rows_per_line - 1) / rows_per_line;
    int hist_h = 6;
    bool hist_under = !panel_right && avail - need >= hist_h;
    int heat_h = need < avail ? need : avail;
    rect hr = {r.x + 1, r.y + 1, hw, heat_h};
    heatmap_draw(g, hr, &h, &u->th, &u->heat[0]);
    u->n_heat = 1;
    u->heat_first_row = u->heat[0].first_row;
    colorbar_draw(g, (rect){r.x + 1, hr.y + heat_h, hw > 30 ? hw : 30, 1}, &s, &u->th);
    size_t cells = (size_t)st->n_layers * st->n_heads;
    const double *vals = st->inits[u->init].m[u->metric];
    char title[96];
    snprintf(title, sizeof title, "histogram%s", log ? " (log bins)" : "");
    if (panel_right) {
        rect pr = {r.x + hw + 4, r.y + 1, r.w - hw - 5, r.h - 1};
        int used = draw_values(u, g, pr);
        int left = pr.h - used - 2;
        if (left >= 5) { /* the histogram under the values, as large as the room allows */
            int hh = left < 12 ? left : 12, hy = pr.y + used + 1;
            grid_text(g, pr.x, hy, pr.w, title, theme_dim(&u->th));
            histogram_draw(g, (rect){pr.x, hy + 1, pr.w < 60 ? pr.w : 60, hh}, vals, cells, log, &u->th);
        }
    } else {
        /* narrow: one line of values under the colour bar */
        int y = hr.y + heat_h + 1;
        char line[256];
        int n = snprintf(line, sizeof line, "L%d H%d:", u->cur_layer, u->cur_head);
        for (int m = 0; m < MET_COUNT && n < (int)sizeof line - 40; m++) {
            if (!init_has(st, u->init, m)) continue;
            char v[16];
            fmt_num(v, sizeof v, st->inits[u->init].m[m][u->cur_layer * st->n_heads + u->cur_head]);
            n += snprintf(line + n, sizeof line - n, " %s=%s", metric_get((head_metric)m)->symbol, v);
        }
        grid_text(g, r.x + 1, y, r.w - 2, line, STYLE_PLAIN);
        if (hist_under) {
            grid_text(g, r.x + 1, y + 1, r.w - 2, title, theme_dim(&u->th));
            histogram_draw(g, (rect){r.x + 1, y + 2, hw < 40 ? 40 : hw, hist_h - 1}, vals, cells, log, &u->th);
        }
    }
}

static void draw_side_by_side(ui *u, grid *g, rect r, const int *ids, int n) {
    app_state *st = u->st;
    bool log = u->log_scale[u->metric];
    value_scale s = common_scale(st, u->metric, ids, n, log);
    int cw;
    bool gap;
    choose_cells(u, n, 0, r.w - 1, &cw, &gap);
    heatmap_spec h0 = make_spec(u, ids[0], s, cw, gap);
    int hw = heatmap_width(&h0), pitch = (r.w - 1) / n;
    if (pitch < hw) pitch = hw;
    int avail = r.h - 1 - 1 - 1; /* title, init names, colour bar */
    h0.tall = avail >= 1 + st->n_layers + 8; /* a line per layer when there is room */
    int rows_per_line = heatmap_rows_per_line(&h0, &u->th);
    int need = 1 + (st->n_layers + rows_per_line - 1) / rows_per_line;
    int hist_h = avail - need > 10 ? 10 : avail - need; /* what is left, up to 10 rows */
    if (hist_h < 3) hist_h = avail >= 8 ? 3 : 0;
    int heat_h = need < avail - hist_h ? need : avail - hist_h;
    size_t cells = (size_t)st->n_layers * st->n_heads;
    u->n_heat = n;
    for (int k = 0; k < n; k++) {
        int x = r.x + 1 + k * pitch;
        int i = ids[k];
        char head[96], v[16];
        fmt_num(v, sizeof v, st->inits[i].m[u->metric][u->cur_layer * st->n_heads + u->cur_head]);
        snprintf(head, sizeof head, "%s: %s", st->inits[i].name, v);
        grid_text(g, x, r.y + 1, pitch - 1, head, i == u->init ? theme_accent(&u->th) : STYLE_PLAIN);
        heatmap_spec h = make_spec(u, i, s, cw, gap);
        h.tall = rows_per_line == 1;
        heatmap_draw(g, (rect){x, r.y + 2, hw, heat_h}, &h, &u->th, &u->heat[k]);
        if (hist_h)
            histogram_draw(g, (rect){x, r.y + 2 + heat_h, pitch - 1 < 40 ? pitch - 1 : 40, hist_h},
                           st->inits[i].m[u->metric], cells, log, &u->th);
    }
    u->heat_first_row = u->heat[0].first_row;
    colorbar_draw(g, (rect){r.x + 1, r.y + 2 + heat_h + hist_h, r.w - 2 < 60 ? r.w - 2 : 60, 1}, &s, &u->th);
}

static void draw(ui *u, grid *g, rect r) {
    app_state *st = u->st;
    bool any = false;
    for (int m = 0; m < MET_COUNT; m++) any |= any_metric(st, m);
    u->n_heat = 0;
    if (!st->n_layers || !st->n_heads || !any) {
        draw_unavailable(u, g, r, "per-head statistics of the teacher",
                         "Enter runs them (the same as graft stats MODEL --text FILE)");
        return;
    }
    fix_view(u);
    draw_title(u, g, r);
    int ids[APP_MAX_INITS], n = inits_with(st, u->metric, ids);
    if (u->side_by_side && n > 1) draw_side_by_side(u, g, r, ids, n);
    else draw_single(u, g, r);
}

static bool key(ui *u, int k) {
    app_state *st = u->st;
    if (!st->n_layers) return false;
    switch (k) {
    case UK_UP: u->cur_layer--; break;
    case UK_DOWN: u->cur_layer++; break;
    case UK_LEFT: u->cur_head--; break;
    case UK_RIGHT: u->cur_head++; break;
    case UK_PGUP: u->cur_layer -= 8; break;
    case UK_PGDN: u->cur_layer += 8; break;
    case UK_HOME: u->cur_layer = 0, u->cur_head = 0; break;
    case UK_END: u->cur_layer = st->n_layers - 1; break;
    case 'm': step_metric(u, 1); break;
    case 'M': step_metric(u, -1); break;
    case 'l': u->log_scale[u->metric] = !u->log_scale[u->metric]; break;
    case 's': u->side_by_side = !u->side_by_side; break;
    case 'i': {
        int ids[APP_MAX_INITS], n = inits_with(st, u->metric, ids);
        for (int j = 0; j < n; j++)
            if (ids[j] == u->init) {
                u->init = ids[(j + 1) % n];
                break;
            }
        break;
    }
    default: return false;
    }
    fix_view(u);
    return true;
}

static bool click(ui *u, int x, int y) {
    for (int k = 0; k < u->n_heat; k++) {
        int row = u->cur_layer, col = u->cur_head;
        if (heatmap_hit(&u->heat[k], x, y, &row, &col)) {
            u->cur_layer = row, u->cur_head = col;
            int ids[APP_MAX_INITS];
            if (u->side_by_side && k < inits_with(u->st, u->metric, ids)) u->init = ids[k];
            return true;
        }
    }
    return false;
}

static const key_hint keys[] = {
    {"\u2191\u2193\u2190\u2192", "arrows", "cursor"}, {"m", NULL, "metric"}, {"l", NULL, "log"},
    {"s", NULL, "compare inits"}, {"i", NULL, "init"}, {"M", NULL, "previous metric"},
};

const screen screen_stats = {"Stats", draw, key, click, keys, sizeof keys / sizeof keys[0]};
