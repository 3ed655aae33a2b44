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

static int count_kept(const app_state *st) {
    int k = 0;
    for (int l = 0; st->kept && l < st->n_layers; l++) k += st->kept[l];
    return k;
}

/* "3 of 5 layers keep attention · KV cache at 32k tokens: 40 KB -> 24 KB (GDN state 4.0 KB)" */
static void cost_line(const app_state *st, const theme *th, char *buf, int n, int w) {
    int kept = count_kept(st);
    int len = snprintf(buf, (size_t)n, "%d of %d layers keep attention", kept, st->n_layers);
    if (st->kv_heads <= 0 || st->head_dim <= 0 || len >= n) return;
    kv_cost c = kv_cost_compute(st->n_layers, kept, st->n_heads, st->kv_heads, st->head_dim,
                                st->kv_bytes ? st->kv_bytes : 4, KV_COST_TOKENS);
    char a[24], b[24], g[24];
    kv_format_bytes(a, sizeof a, c.teacher_bytes);
    kv_format_bytes(b, sizeof b, c.student_bytes);
    kv_format_bytes(g, sizeof g, c.gdn_state_per_layer * (st->n_layers - kept));
    snprintf(buf + len, (size_t)(n - len), " %s KV cache at 32k tokens: %s %s %s (GDN state %s)",
             theme_glyph(th, G_MIDDOT), a, theme_glyph(th, G_RARROW), b, g);
    if (utf8_width(buf) > w) /* the same numbers, shorter words */
        snprintf(buf, (size_t)n, "%d/%d layers attention %s KV @32k tokens: %s %s %s (+GDN %s)", kept, st->n_layers,
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
    const app_state *st = u->st;
    if (u->plan_cursor >= st->n_layers) u->plan_cursor = st->n_layers - 1;
    if (u->plan_cursor < 0) u->plan_cursor = 0;
    if (u->plan_cursor < u->plan_first) u->plan_first = u->plan_cursor;
    if (rows > 0 && u->plan_cursor >= u->plan_first + rows) u->plan_first = u->plan_cursor - rows + 1;
    if (u->plan_first < 0) u->plan_first = 0;
}

static void draw(ui *u, grid *g, rect r) {
    app_state *st = u->st;
    if (!st->n_layers) {
        draw_unavailable(u, g, r, "a teacher (the plan needs its layer count)",
                         "open one: graft tui MODEL (the default teacher loads by itself)");
        return;
    }
    if (!st->kept) app_state_plan_recompute(st); /* a plan as soon as the shape is known */
    const int L = st->n_layers, sidx = app_state_strategy_index(st->strategy);
    const int x0 = r.x + 1, w = r.w - 2;
    style acc = theme_accent(&u->th), dim = theme_dim(&u->th);
    int y = r.y;
    /* strategy choice and ratio */
    int x = x0 + grid_text(g, x0, y, w, "strategy ", dim);
    for (int i = 0; i < APP_N_STRATEGIES; i++) {
        char item[24];
        snprintf(item, sizeof item, i == sidx ? "[%s]" : " %s ", app_state_strategy_name(i));
        x += grid_text(g, x, y, x0 + w - x, item, i == sidx ? acc : STYLE_PLAIN) + 1;
    }
    char ratio[64];
    if (u->plan_edit) snprintf(ratio, sizeof ratio, "keep: %s_ %%  (Enter sets, Esc cancels)", u->plan_buf);
    else if (sidx == STRATEGY_MANUAL) snprintf(ratio, sizeof ratio, "keep %d of %d (chosen by hand)", count_kept(st), L);
    else snprintf(ratio, sizeof ratio, "keep %.4g%% (%d of %d)", st->keep_ratio * 100, app_state_keep_count(st), L);
    grid_text(g, x + 2, y, x0 + w - x - 2, ratio, u->plan_edit ? acc : STYLE_PLAIN);
    y++;
    char cost[256];
    cost_line(st, &u->th, cost, sizeof cost, w);
    grid_text(g, x0, y++, w, cost, STYLE_PLAIN);
    /* what the plan rests on */
    char note[160] = "";
    if ((sidx == STRATEGY_AR || sidx == STRATEGY_GA_S2) && !st->plan_score[sidx])
        snprintf(note, sizeof note, "%s scores not computed yet: Enter runs the selection job (plan below is the last one)",
                 st->strategy);
    else if (sidx == STRATEGY_MANUAL) snprintf(note, sizeof note, "manual: space toggles the layer under the cursor");
    else if (sidx == STRATEGY_UNIFORM) snprintf(note, sizeof note, "uniform: evenly spaced layers keep attention");
    else snprintf(note, sizeof note, "%s: kept layers ranked by the scores below", st->strategy);
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
    for (int i = 0; i < rows && u->plan_first + i < L; i++) {
        int l = u->plan_first + i, yy = y + i;
        bool cur = l == u->plan_cursor;
        style s = cur ? (style){COLOR_DEFAULT, COLOR_DEFAULT, ATTR_REVERSE} : STYLE_PLAIN;
        grid_printf(g, x0, yy, lead, s, "%s %5d %s %-9s", cur ? ">" : " ", l,
                    theme_glyph(&u->th, st->kept[l] ? G_KEPT : G_REPLACED), st->kept[l] ? "attention" : "GDN");
        for (int k = STRATEGY_AR; k <= STRATEGY_GA_S2; k++)
            draw_score(u, g, x0 + lead + (k - 1) * (sw + 1), yy, sw, st->plan_score[k], l, L, k == sidx);
    }
    if (more) {
        int shown_end = u->plan_first + rows;
        grid_printf(g, x0, y + rows, w, dim, "layers %d-%d of %d (%s more)", u->plan_first, shown_end - 1, L,
                    theme_glyph(&u->th, G_ARROW_UD));
    }
}

static void set_ratio(ui *u, double r) {
    app_state *st = u->st;
    if (!(r > 0 && r < 1)) {
        snprintf(u->status, sizeof u->status, "retention ratio must be in (0, 100) %%, got %.4g %%", r * 100);
        return;
    }
    st->keep_ratio = r;
    if (app_state_strategy_index(st->strategy) == STRATEGY_MANUAL) snprintf(st->strategy, sizeof st->strategy, "uniform");
    app_state_plan_recompute(st);
    snprintf(u->status, sizeof u->status, "keep %.4g %%: %d of %d layers", r * 100, app_state_keep_count(st), st->n_layers);
}

static bool edit_key(ui *u, int k) {
    size_t n = strlen(u->plan_buf);
    if (k == UK_ESC) u->plan_edit = false;
    else if (k == UK_BACKSPACE || k == 127 || k == 8) {
        if (n) u->plan_buf[n - 1] = 0;
    } else if (k == UK_ENTER) {
        u->plan_edit = false;
        char *end;
        double v = strtod(u->plan_buf, &end);
        if (!u->plan_buf[0] || *end) snprintf(u->status, sizeof u->status, "not a number: '%s'", u->plan_buf);
        else set_ratio(u, v / 100);
    } else if (((k >= '0' && k <= '9') || k == '.') && n + 1 < sizeof u->plan_buf) {
        u->plan_buf[n] = (char)k;
        u->plan_buf[n + 1] = 0;
    }
    return true; /* typing swallows every key */
}

static bool key(ui *u, int k) {
    app_state *st = u->st;
    if (!st->n_layers) return false;
    if (u->plan_edit) return edit_key(u, k);
    if (!st->kept) app_state_plan_recompute(st);
    int sidx = app_state_strategy_index(st->strategy);
    switch (k) {
    case UK_UP: u->plan_cursor--; break;
    case UK_DOWN: u->plan_cursor++; break;
    case UK_PGUP: u->plan_cursor -= 8; break;
    case UK_PGDN: u->plan_cursor += 8; break;
    case UK_HOME: u->plan_cursor = 0; break;
    case UK_END: u->plan_cursor = st->n_layers - 1; break;
    case 's':
    case 'S': {
        int n = (sidx + (k == 's' ? 1 : APP_N_STRATEGIES - 1)) % APP_N_STRATEGIES;
        snprintf(st->strategy, sizeof st->strategy, "%s", app_state_strategy_name(n));
        app_state_plan_recompute(st);
        snprintf(u->status, sizeof u->status, "strategy %s", st->strategy);
        break;
    }
    case 'r': { /* presets 25 / 50 / 75 % */
        double next = st->keep_ratio < 0.25 - 1e-9 ? 0.25 : st->keep_ratio < 0.5 - 1e-9 ? 0.5
                    : st->keep_ratio < 0.75 - 1e-9 ? 0.75 : 0.25;
        set_ratio(u, next);
        break;
    }
    case '=':
    case '%':
        u->plan_edit = true;
        u->plan_buf[0] = 0;
        break;
    case ' ': {
        int l = u->plan_cursor < st->n_layers ? u->plan_cursor : 0;
        st->kept[l] = !st->kept[l];
        snprintf(st->strategy, sizeof st->strategy, "manual");
        snprintf(u->status, sizeof u->status, "layer %d %s (manual plan)", l, st->kept[l] ? "keeps attention" : "becomes GDN");
        break;
    }
    case UK_ENTER:
        if (sidx == STRATEGY_UNIFORM || sidx == STRATEGY_MANUAL) { /* nothing to compute */
            app_state_plan_recompute(st);
            snprintf(u->status, sizeof u->status, "%s plan: %d of %d layers keep attention", st->strategy,
                     count_kept(st), st->n_layers);
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

const screen screen_plan = {"Plan", draw, key, NULL, keys, sizeof keys / sizeof keys[0]};
