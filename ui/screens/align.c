/* 5 Align: Stage 2 on the converted layers. A line per layer (progress, kept
 * best step, loss, |Wb| and |Wg| changes, half-life drift), then live loss
 * curves (calibration and held-out): a small chart per layer when they fit,
 * else the selected layer's. Enter runs the "align" job; a switches between
 * taylor-calibrate (from Stage 1) and align-only (from the random init). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "keys.h"
#include "screens/screens.h"
#include "widgets/charts.h"

static const align_layer *layer_of(const teacher_state *t, int l) {
    return t->method.align && t->method.align[l].n + !isnan(t->method.align[l].v[AL_STEPS]) > 0 ? &t->method.align[l]
                                                                                                : NULL;
}

static void fmtn(char *b, size_t n, double v) { fmt_num(b, n, v); }

/* "x1.7" (after / before), "-" when unknown. */
static void fmt_ratio(char *b, size_t n, double before, double after) {
    if (isnan(before) || isnan(after) || before == 0) snprintf(b, n, "-");
    else {
        char r[16];
        fmt_num(r, sizeof r, after / before);
        snprintf(b, n, "x%.14s", r);
    }
}

static void draw_row(ui *u, grid *g, int x, int y, int w, int l, const align_layer *a, bool sel) {
    char prog[32], best[48], wb[24], wg[24], hl[80], b0[16], b1[16], m0[16], m1[16], lo0[16], lo1[16];
    const double steps = a->v[AL_STEPS];
    if (isnan(steps)) snprintf(prog, sizeof prog, "%d", a->last_step);
    else snprintf(prog, sizeof prog, "%d/%.0f", a->last_step < 0 ? 0 : a->last_step, steps);
    char loss[40];
    fmtn(lo0, sizeof lo0, a->n ? a->loss[0] : NAN);
    if (!isnan(a->v[AL_BEST_STEP])) {
        fmtn(lo1, sizeof lo1, a->v[AL_BEST_LOSS]);
        snprintf(best, sizeof best, "%.0f", a->v[AL_BEST_STEP]);
    } else {
        fmtn(lo1, sizeof lo1, a->n ? a->loss[a->n - 1] : NAN);
        snprintf(best, sizeof best, "-");
    }
    snprintf(loss, sizeof loss, "%s>%s", lo0, lo1);
    fmt_ratio(wb, sizeof wb, a->v[AL_WB_BEFORE], a->v[AL_WB_AFTER]);
    fmt_ratio(wg, sizeof wg, a->v[AL_WG_BEFORE], a->v[AL_WG_AFTER]);
    fmtn(b0, sizeof b0, a->v[AL_HL_MEAN_BEFORE]);
    fmtn(b1, sizeof b1, a->v[AL_HL_MEAN_AFTER]);
    fmtn(m0, sizeof m0, a->v[AL_HL_MEDIAN_BEFORE]);
    fmtn(m1, sizeof m1, a->v[AL_HL_MEDIAN_AFTER]);
    snprintf(hl, sizeof hl, "%s>%s", b0, b1);
    char med[40];
    snprintf(med, sizeof med, "%s>%s", m0, m1);
    grid_printf(g, x, y, w, sel ? theme_accent(&u->th) : STYLE_PLAIN, "L%-3d %-8s %-5s %-13s %-6s %-6s %-11s %s", l,
                prog, best, loss, wb, wg, hl, med);
}

static void draw_chart(ui *u, grid *g, rect r, int l, const align_layer *a) {
    chart_series s[2] = {{"calib", a->step, a->loss, a->n}, {"held-out", a->step, a->held, a->n}};
    char t[48];
    snprintf(t, sizeof t, "layer %d MSE", l);
    grid_text(g, r.x, r.y, r.w, t, theme_accent(&u->th));
    if (a->n == 0) {
        grid_text(g, r.x, r.y + 1, r.w, "waiting for the first step", theme_dim(&u->th));
        return;
    }
    linechart_draw(g, (rect){r.x, r.y + 1, r.w, r.h - 1}, s, 2, "step", dots_for(&u->th), &u->th);
}

static void draw(ui *u, grid *g, rect r) {
    teacher_state *t = app_cur(u->st);
    if (!t || !t->n_layers) {
        draw_unavailable(u, g, r, "alignment losses (Stage 2)", "needs a teacher; Enter runs Stage 2 on the converted layers");
        return;
    }
    const method_state *ms = &t->method;
    const int L = t->n_layers;
    int ids[1024], n = 0;
    for (int l = 0; l < L && l < 1024; l++)
        if (layer_of(t, l)) ids[n++] = l;
    /* taylor-calibrate with other Stage 1 options than all four says which (4 Calibrate sets them) */
    char ran[96], next[96], label[48];
    stage1_choice_label(&ms->align_s1, label, sizeof label);
    snprintf(ran, sizeof ran, "%s", ms->align_ran);
    if (!strcmp(ms->align_ran, "taylor-calibrate") && !stage1_choice_is_default(&ms->align_s1))
        snprintf(ran, sizeof ran, "%s[%s]", ms->align_ran, label);
    stage1_choice_label(&t->stage1, label, sizeof label);
    snprintf(next, sizeof next, "%s", ms->align_init);
    if (!strcmp(ms->align_init, "taylor-calibrate") && !stage1_choice_is_default(&t->stage1))
        snprintf(next, sizeof next, "%s[%s]", ms->align_init, label);
    char title[300];
    snprintf(title, sizeof title, "Stage 2%s%s%s%s   Enter runs %s, %d steps (a switches)", ran[0] ? " " : "", ran,
             ms->align_outcome[0] ? "   last run: " : "", ms->align_outcome, next, u->st->settings.stage2_steps);
    grid_text(g, r.x + 1, r.y, r.w - 2, title, STYLE_PLAIN);
    if (n == 0) {
        draw_unavailable(u, g, (rect){r.x, r.y + 1, r.w, r.h - 1}, "alignment losses (Stage 2)",
                         ms->align_init[0] == 'a' ? "Enter aligns the converted layers from the random init"
                                                  : "Enter aligns the converted layers from Stage 1");
        return;
    }
    int sel = -1;
    for (int i = 0; i < n; i++)
        if (ids[i] == u->v.align.layer) sel = i;
    grid_text(g, r.x + 1, r.y + 1, r.w - 2, "layer step     best  loss start>best |Wb|   |Wg|   t1/2 mean   median",
              theme_dim(&u->th));
    int y = r.y + 2, max_rows = r.h / 3;
    int first = sel > max_rows - 1 ? sel - max_rows + 1 : 0;
    for (int i = first; i < n && y < r.y + 2 + max_rows; i++)
        draw_row(u, g, r.x + 1, y++, r.w - 2, ids[i], &ms->align[ids[i]], i == sel);
    rect cr = {r.x + 1, y, r.w - 2, r.y + r.h - y};
    /* small multiples when each chart keeps 7 rows and 30 columns, else the selected layer */
    int cols = cr.w / 38 > 0 ? cr.w / 38 : 1;
    if (cols > n) cols = n;
    int rows_n = (n + cols - 1) / cols;
    if (sel < 0 && cr.h / rows_n >= 7) {
        int cw = cr.w / cols, ch = cr.h / rows_n;
        for (int i = 0; i < n; i++)
            draw_chart(u, g, (rect){cr.x + (i % cols) * cw, cr.y + (i / cols) * ch, cw - 1, ch}, ids[i],
                       &ms->align[ids[i]]);
    } else {
        int i = sel >= 0 ? sel : n - 1;
        draw_chart(u, g, cr, ids[i], &ms->align[ids[i]]);
    }
}

static void select_layer(ui *u, int dir) {
    const teacher_state *t = app_cur(u->st);
    int ids[1024], n = 0, cur = -1;
    for (int l = 0; t && l < t->n_layers && l < 1024; l++)
        if (layer_of(t, l)) {
            if (l == u->v.align.layer) cur = n;
            ids[n++] = l;
        }
    if (!n) return;
    cur = cur < 0 ? (dir > 0 ? 0 : n - 1) : cur + dir;
    u->v.align.layer = cur < 0 || cur >= n ? -1 : ids[cur]; /* past either end: all layers again */
}

static bool key(ui *u, int k) {
    teacher_state *t = app_cur(u->st);
    if (!t || !t->n_layers) return false;
    switch (k) {
    case 'a': {
        bool tc = !strcmp(t->method.align_init, "taylor-calibrate");
        snprintf(t->method.align_init, sizeof t->method.align_init, "%s", tc ? "align-only" : "taylor-calibrate");
        ui_say(u, "Enter now runs %s (%d Stage 2 steps, 9 Settings)", t->method.align_init,
               u->st->settings.stage2_steps);
        return true;
    }
    case UK_UP: select_layer(u, -1); return true;
    case UK_DOWN: select_layer(u, 1); return true;
    default: return false;
    }
}

static const key_hint keys[] = {
    {"\u23ce", "Enter", "run Stage 2"}, {"a", NULL, "taylor-calibrate / align-only"},
    {"\u2191\u2193", "up/down", "one layer's chart / all"},
};

const screen screen_align = {"Align", draw, key, NULL, keys, sizeof keys / sizeof keys[0], ACT_ALIGN};
