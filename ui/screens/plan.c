/* 2 Plan: which layers keep softmax attention. A strategy (uniform, ar, ga-s2,
 * manual), a retention ratio, one line per layer with its role and the ar and
 * ga-s2 scores as bars, and what the plan saves in KV cache. Uniform and
 * manual plans change at once; ar and ga-s2 need their scores (Enter runs the
 * selection job; once known, ratio changes re-rank at once). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keys.h"
#include "screens/screens.h"
#include "select/kv_cost.h"
#include "select/select.h"
#include "widgets/scale.h"

static const char *const score_meaning[APP_N_STRATEGIES] = {
    NULL, "ar: ppl, attention zeroed (keep high)", "ga-s2: ppl, only it kept (keep low)", NULL};
static const char *const score_short[APP_N_STRATEGIES] = {NULL, "ar: ppl, attn zeroed", "ga-s2: ppl, only kept", NULL};

static int count_kept(const teacher_state *t) { return teacher_kept_count(t); }

/* "3 of 5 layers keep attention · KV cache at 32k tokens: 40 KB -> 24 KB (GDN state 4.0 KB)" */
static void cost_line(const teacher_state *t, const theme *th, char *buf, int n, int w) {
    int kept = count_kept(t);
    int len = snprintf(buf, (size_t)n, "%d of %d layers keep attention", kept, t->n_layers);
    if (t->kv_heads <= 0 || t->head_dim <= 0 || len >= n) return;
    kv_cost c = kv_cost_compute(t->n_layers, kept, t->n_heads, t->kv_heads, t->head_dim,
                                t->kv_bytes ? t->kv_bytes : 4, KV_COST_TOKENS);
    char a[24], b[24], g[24];
    kv_format_bytes(a, sizeof a, c.teacher_bytes);
    kv_format_bytes(b, sizeof b, c.student_bytes);
    kv_format_bytes(g, sizeof g, c.gdn_state_per_layer * (t->n_layers - kept));
    snprintf(buf + len, (size_t)(n - len), " %s KV cache at 32k tokens: %s %s %s (GDN state %s)",
             theme_glyph(th, G_MIDDOT), a, theme_glyph(th, G_RARROW), b, g);
    if (utf8_width(buf) > w) /* the same numbers, shorter words */
        snprintf(buf, (size_t)n, "%d/%d layers attention %s KV @32k tokens: %s %s %s (+GDN %s)", kept, t->n_layers,
                 theme_glyph(th, G_MIDDOT), a, theme_glyph(th, G_RARROW), b, g);
}

static void score_range(const double *v, int n, double *lo, double *hi) {
    *lo = INFINITY, *hi = -INFINITY;
    for (int i = 0; i < n; i++)
        if (isfinite(v[i])) {
            if (v[i] < *lo) *lo = v[i];
            if (v[i] > *hi) *hi = v[i];
        }
}

/* One score as "12.34 ████▌": value first, then a bar from the column's minimum. */
static void draw_score(ui *u, grid *g, int x, int y, int w, const double *v, int l, int L, bool own) {
    if (!v || !isfinite(v[l]) || w < 8) return;
    double lo, hi;
    score_range(v, L, &lo, &hi);
    char num[16];
    fmt_num(num, sizeof num, v[l]);
    style s = own ? theme_accent(&u->th) : STYLE_PLAIN;
    int nw = grid_printf(g, x, y, 9, s, "%8s", num);
    int bw = w - nw - 1;
    if (bw < 1) return;
    /* bars from a little below the minimum so the smallest score still shows */
    double span = hi - lo, f = span > 0 ? 0.1 + 0.9 * (v[l] - lo) / span : 1;
    int eighths = (int)lround(f * bw * 8);
    int full = eighths / 8, part = eighths % 8;
    for (int i = 0; i < full && i < bw; i++) grid_put(g, x + nw + 1 + i, y, theme_glyph(&u->th, G_FULL), s);
    if (part && full < bw) grid_put(g, x + nw + 1 + full, y, theme_hbar_eighth(&u->th, part), s);
}

static void fix_view(ui *u, int rows) {
    const teacher_state *t = app_cur(u->st);
    if (u->v.plan.cursor >= t->n_layers) u->v.plan.cursor = t->n_layers - 1;
    if (u->v.plan.cursor < 0) u->v.plan.cursor = 0;
    if (u->v.plan.cursor < u->v.plan.first) u->v.plan.first = u->v.plan.cursor;
    if (rows > 0 && u->v.plan.cursor >= u->v.plan.first + rows) u->v.plan.first = u->v.plan.cursor - rows + 1;
    if (rows > 0 && u->v.plan.first > t->n_layers - rows) u->v.plan.first = t->n_layers - rows; /* taller after a resize */
    if (u->v.plan.first < 0) u->v.plan.first = 0;
}

static void draw(ui *u, grid *g, rect r) {
    teacher_state *t = app_cur(u->st);
    if (!t || !t->n_layers) {
        draw_unavailable(u, g, r, "a teacher (the plan needs its layer count)",
                         "open one: graft tui MODEL (the default teacher loads by itself)");
        return;
    }
    if (!t->kept) teacher_plan_recompute(t); /* a plan as soon as the shape is known */
    const int L = t->n_layers, sidx = strategy_index(t->strategy);
    const int x0 = r.x + 1, w = r.w - 2;
    style acc = theme_accent(&u->th), dim = theme_dim(&u->th);
    int y = r.y;
    /* strategy choice and ratio */
    int x = x0 + grid_text(g, x0, y, w, "strategy ", dim);
    for (int i = 0; i < APP_N_STRATEGIES; i++) {
        char item[24];
        snprintf(item, sizeof item, i == sidx ? "[%s]" : " %s ", strategy_label(i));
        x += grid_text(g, x, y, x0 + w - x, item, i == sidx ? acc : STYLE_PLAIN) + 1;
    }
    char ratio[64];
    if (u->v.plan.edit) snprintf(ratio, sizeof ratio, "keep: %s_ %%  (Enter sets, Esc cancels)", u->v.plan.buf);
    else if (sidx == STRATEGY_MANUAL) snprintf(ratio, sizeof ratio, "keep %d of %d (chosen by hand)", count_kept(t), L);
    else snprintf(ratio, sizeof ratio, "keep %.4g%% (%d of %d)", t->keep_ratio * 100, teacher_keep_count(t), L);
    grid_text(g, x + 2, y, x0 + w - x - 2, ratio, u->v.plan.edit ? acc : STYLE_PLAIN);
    y++;
    char cost[256];
    cost_line(t, &u->th, cost, sizeof cost, w);
    grid_text(g, x0, y++, w, cost, STYLE_PLAIN);
    /* what the plan rests on */
    char note[160] = "";
    if ((sidx == STRATEGY_AR || sidx == STRATEGY_GA_S2) && !t->plan_score[sidx])
        snprintf(note, sizeof note, "%s scores not computed yet: Enter runs the selection job (plan below is the last one)",
                 t->strategy);
    else if (sidx == STRATEGY_MANUAL) snprintf(note, sizeof note, "manual: space toggles the layer under the cursor");
    else if (sidx == STRATEGY_UNIFORM) snprintf(note, sizeof note, "uniform: evenly spaced layers keep attention");
    else snprintf(note, sizeof note, "%s: kept layers ranked by the scores below", t->strategy);
    grid_text(g, x0, y++, w, note, dim);
    /* columns: cursor, layer, role, then the two score columns sharing the rest */
    const int role_w = 12, lead = 2 + 5 + 1 + role_w;
    int sw = (w - lead) / 2;
    if (sw > 60) sw = 60;
    grid_text(g, x0, y, w, "  layer role", acc);
    for (int s = STRATEGY_AR; s <= STRATEGY_GA_S2 && sw >= 8; s++)
        grid_text(g, x0 + lead + (s - 1) * (sw + 1), y, sw,
                  utf8_width(score_meaning[s]) <= sw ? score_meaning[s] : score_short[s], s == sidx ? acc : dim);
    y++;
    int rows = r.y + r.h - y;
    if (rows < 1) return;
    bool more = L > rows;
    if (more) rows--; /* a line saying what is cut */
    fix_view(u, rows);
    u->v.plan.row_y0 = y, u->v.plan.rows = rows;
    for (int i = 0; i < rows && u->v.plan.first + i < L; i++) {
        int l = u->v.plan.first + i, yy = y + i;
        bool cur = l == u->v.plan.cursor;
        style s = cur ? (style){COLOR_DEFAULT, COLOR_DEFAULT, ATTR_REVERSE} : STYLE_PLAIN;
        grid_printf(g, x0, yy, lead, s, "%s %5d %s %-9s", cur ? ">" : " ", l,
                    theme_glyph(&u->th, t->kept[l] ? G_KEPT : G_REPLACED), t->kept[l] ? "attention" : "GDN");
        for (int k = STRATEGY_AR; k <= STRATEGY_GA_S2; k++)
            draw_score(u, g, x0 + lead + (k - 1) * (sw + 1), yy, sw, t->plan_score[k], l, L, k == sidx);
    }
    if (more) {
        int shown_end = u->v.plan.first + rows;
        grid_printf(g, x0, y + rows, w, dim, "layers %d-%d of %d (%s more)", u->v.plan.first, shown_end - 1, L,
                    theme_glyph(&u->th, G_ARROW_UD));
    }
}

static void set_ratio(ui *u, double r) {
    teacher_state *t = app_cur(u->st);
    if (!(r > 0 && r < 1)) {
        ui_say(u, "retention ratio must be in (0, 100) %%, got %.4g %%", r * 100);
        return;
    }
    /* a hybrid keeps 1 to L-1 attention layers: none kept or all kept is no conversion */
    const double old = t->keep_ratio;
    t->keep_ratio = r;
    const int k = teacher_keep_count(t), L = t->n_layers;
    if (k < 1 || k > L - 1) {
        t->keep_ratio = old;
        ui_say(u, "%.4g %% keeps %d of %d layers: a hybrid keeps 1 to %d (from %.3g %%, below %.3g %%)", r * 100, k,
               L, L - 1, 100.0 * 0.5 / L, 100.0 * (L - 0.5) / L);
        return;
    }
    if (strategy_index(t->strategy) == STRATEGY_MANUAL) snprintf(t->strategy, sizeof t->strategy, "uniform");
    teacher_plan_recompute(t);
    ui_say(u, "keep %.4g %%: %d of %d layers", r * 100, teacher_keep_count(t), t->n_layers);
}

static bool edit_key(ui *u, int k) {
    size_t n = strlen(u->v.plan.buf);
    if (k == UK_ESC) u->v.plan.edit = false;
    else if (k == UK_BACKSPACE || k == 127 || k == 8) {
        if (n) u->v.plan.buf[n - 1] = 0;
    } else if (k == UK_ENTER) {
        u->v.plan.edit = false;
        char *end;
        double v = strtod(u->v.plan.buf, &end);
        if (!u->v.plan.buf[0] || *end) ui_say(u, "not a number: '%s'", u->v.plan.buf);
        else set_ratio(u, v / 100);
    } else if (((k >= '0' && k <= '9') || k == '.') && n + 1 < sizeof u->v.plan.buf) {
        u->v.plan.buf[n] = (char)k;
        u->v.plan.buf[n + 1] = 0;
    }
    return true; /* typing swallows every key */
}

static bool key(ui *u, int k) {
    teacher_state *t = app_cur(u->st);
    if (!t || !t->n_layers) return false;
    if (u->v.plan.edit) return edit_key(u, k);
    if (!t->kept) teacher_plan_recompute(t);
    int sidx = strategy_index(t->strategy);
    switch (k) {
    case UK_UP: u->v.plan.cursor--; break;
    case UK_DOWN: u->v.plan.cursor++; break;
    case UK_PGUP: u->v.plan.cursor -= 8; break;
    case UK_PGDN: u->v.plan.cursor += 8; break;
    case UK_HOME: u->v.plan.cursor = 0; break;
    case UK_END: u->v.plan.cursor = t->n_layers - 1; break;
    case 's':
    case 'S': {
        int n = (sidx + (k == 's' ? 1 : APP_N_STRATEGIES - 1)) % APP_N_STRATEGIES;
        snprintf(t->strategy, sizeof t->strategy, "%s", strategy_label(n));
        teacher_plan_recompute(t);
        ui_say(u, "strategy %s", t->strategy);
        break;
    }
    case 'r': { /* presets 25 / 50 / 75 % */
        double next = t->keep_ratio < 0.25 - 1e-9 ? 0.25 : t->keep_ratio < 0.5 - 1e-9 ? 0.5
                    : t->keep_ratio < 0.75 - 1e-9 ? 0.75 : 0.25;
        set_ratio(u, next);
        break;
    }
    case '=':
    case '%':
        u->v.plan.edit = true;
        u->v.plan.buf[0] = 0;
        break;
    case ' ': {
        int l = u->v.plan.cursor < t->n_layers ? u->v.plan.cursor : 0;
        const int now = count_kept(t) + (t->kept[l] ? -1 : 1);
        if (now < 1 || now > t->n_layers - 1) {
            ui_say(u, "a hybrid keeps 1 to %d of %d layers: layer %d stays %s", t->n_layers - 1, t->n_layers, l,
                   t->kept[l] ? "attention" : "GDN");
            return true;
        }
        t->kept[l] = !t->kept[l];
        snprintf(t->strategy, sizeof t->strategy, "manual");
        ui_say(u, "layer %d %s (manual plan)", l, t->kept[l] ? "keeps attention" : "becomes GDN");
        break;
    }
    case UK_ENTER:
        if (sidx == STRATEGY_UNIFORM || sidx == STRATEGY_MANUAL) { /* nothing to compute */
            teacher_plan_recompute(t);
            ui_say(u, "%s plan: %d of %d layers keep attention", t->strategy,
                     count_kept(t), t->n_layers);
            return true;
        }
        return false; /* ar / ga-s2: the selection job (st->run) */
    default: return false;
    }
    fix_view(u, 0);
    return true;
}

static const key_hint keys[] = {
    {"s", NULL, "strategy"}, {"r", NULL, "25/50/75%"}, {"=", NULL, "type %"}, {"space", NULL, "toggle"},
    {"\u2191\u2193", "up/down", "layer"}, {"S", NULL, "previous strategy"},
};

/* A click on a layer row puts the cursor there. */
static bool click(ui *u, int x, int y) {
    (void)x;
    const teacher_state *t = app_cur(u->st);
    plan_view *v = &u->v.plan;
    if (!t || v->row_y0 <= 0 || y < v->row_y0 || y >= v->row_y0 + v->rows || v->first + y - v->row_y0 >= t->n_layers)
        return false;
    v->cursor = v->first + (y - v->row_y0);
    return true;
}

const screen screen_plan = {"Plan", draw, key, click, keys, sizeof keys / sizeof keys[0], ACT_SELECT};
