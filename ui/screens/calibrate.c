/* 4 Calibrate: Stage 1 of Taylor-Calibrate stepped layer by layer. The layer
 * list (attention / pending / done), then every number Stage 1 computed for
 * each head of one layer, and the layer's alpha*. Space calibrates the next
 * converted layer, Enter all remaining ones (the "calibrate" job). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "keys.h"
#include "screens/screens.h"

static const struct {
    calib_field f;
    const char *name;
} rows[] = {
    {CAL_DIST, "d_h"},         {CAL_ENTROPY, "H_h"},      {CAL_CONC, "c_h"},
    {CAL_BETA, "beta*"},       {CAL_LOGIT, "logit b*"},   {CAL_WB_LOGIT, "Wb logit"},
    {CAL_SIGMA_RAW, "sigma raw"}, {CAL_SIGMA, "sigma*"},  {CAL_TARGET_G, "target g"},
    {CAL_DT_BIAS, "dt_bias"},  {CAL_HALFLIFE, "t1/2 idle"},
};
#define N_ROWS (int)(sizeof rows / sizeof rows[0])

static bool layer_done(const teacher_state *t, int l) { return t->method.calib && t->method.calib[l].done; }

/* The layer shown: the chosen one when calibrated, else the highest calibrated one; -1 none. */
static int shown_layer(const ui *u) {
    const teacher_state *t = app_cur(u->st);
    if (u->v.calibrate.layer >= 0 && u->v.calibrate.layer < t->n_layers && layer_done(t, u->v.calibrate.layer)) return u->v.calibrate.layer;
    for (int l = t->n_layers - 1; l >= 0; l--)
        if (layer_done(t, l)) return l;
    return -1;
}

static void fmt4(char *buf, size_t n, double v) {
    if (isnan(v)) snprintf(buf, n, "-");
    else snprintf(buf, n, "%.4g", v);
}

/* "layers  0 attn  1 attn  2 done  3 attn  4 pending", wrapped; returns rows used. */
static int draw_layer_list(ui *u, grid *g, rect r, const bool *conv, int shown) {
    const teacher_state *t = app_cur(u->st);
    int x = r.x, y = r.y;
    x += grid_text(g, x, y, r.w, "layers ", theme_dim(&u->th));
    for (int l = 0; l < t->n_layers; l++) {
        char cell[24];
        const char *mark = !conv[l] ? "attn" : layer_done(t, l) ? "done" : "pending";
        int w = snprintf(cell, sizeof cell, " %d %s%s", l, mark, l == shown ? "<" : " ");
        if (x + w > r.x + r.w) {
            if (++y >= r.y + r.h) return y - r.y;
            x = r.x + 7;
        }
        style s = !conv[l] ? theme_dim(&u->th) : layer_done(t, l) ? theme_accent(&u->th) : STYLE_PLAIN;
        grid_text(g, x, y, w, cell, s);
        x += w;
    }
    return y - r.y + 1;
}

static void draw(ui *u, grid *g, rect r) {
    teacher_state *t = app_cur(u->st);
    if (!t || !t->n_layers || !t->n_heads) {
        draw_unavailable(u, g, r, "Taylor-Calibrate results (Stage 1)",
                         "needs a teacher; space calibrates the next layer, Enter all of them");
        return;
    }
    const int L = t->n_layers, H = t->n_heads;
    bool conv[1024];
    if (L > 1024) return;
    teacher_converted(t, conv);
    int n_conv = 0, n_done = 0;
    for (int l = 0; l < L; l++) {
        n_conv += conv[l];
        n_done += conv[l] && layer_done(t, l);
    }
    const int shown = shown_layer(u);
    char title[200], plan[64];
    const char *oc = t->method.calib_outcome;
    /* the Plan's choice (uniform 50 % until one is made) */
    if (t->kept && !strcmp(t->strategy, "manual")) snprintf(plan, sizeof plan, "   plan: manual");
    else if (t->kept && t->strategy[0]) snprintf(plan, sizeof plan, "   plan: %s %.4g%%", t->strategy, t->keep_ratio * 100);
    else snprintf(plan, sizeof plan, "   plan: uniform 50%%");
    snprintf(title, sizeof title, "Stage 1 (taylor-only): %d of %d converted layers calibrated%s%s%s", n_done, n_conv,
             oc[0] ? "   last run: " : "", oc, plan);
    grid_text(g, r.x + 1, r.y, r.w - 2, title, STYLE_PLAIN);
    int y = r.y + 1;
    y += draw_layer_list(u, g, (rect){r.x + 1, y, r.w - 2, 3}, conv, shown);
    /* the row where Stage 1's options (component toggles) go; today graft convert's defaults */
    grid_text(g, r.x + 1, y++, r.w - 2, "Stage 1 options: graft convert's defaults", theme_dim(&u->th));
    if (shown < 0) {
        rect rest = {r.x, y, r.w, r.y + r.h - y};
        draw_unavailable(u, g, rest, "Taylor-Calibrate results (Stage 1)",
                         "space calibrates the next converted layer, Enter all remaining");
        return;
    }
    const calib_layer *c = &t->method.calib[shown];
    if (u->v.calibrate.head >= H) u->v.calibrate.head = H - 1;
    if (u->v.calibrate.head < 0) u->v.calibrate.head = 0;
    /* columns: a label column, then as many heads as fit, scrolled to the cursor */
    const int lab = 11, cw = 9;
    int fit = (r.w - 2 - lab) / cw;
    if (fit < 1) fit = 1;
    if (fit > H) fit = H;
    int first = u->v.calibrate.head - fit + 1 > 0 ? u->v.calibrate.head - fit + 1 : 0;
    y++;
    char buf[64];
    grid_printf(g, r.x + 1, y, lab, theme_accent(&u->th), "layer %d", shown);
    for (int k = 0; k < fit; k++) {
        int h = first + k;
        grid_printf(g, r.x + 1 + lab + k * cw, y, cw - 1, h == u->v.calibrate.head ? theme_accent(&u->th) : theme_dim(&u->th),
                    "%8s", (snprintf(buf, sizeof buf, "head %d", h), buf));
    }
    y++;
    for (int i = 0; i < N_ROWS && y < r.y + r.h - 2; i++, y++) {
        grid_text(g, r.x + 1, y, lab, rows[i].name, STYLE_PLAIN);
        for (int k = 0; k < fit; k++) {
            int h = first + k;
            char v[32];
            fmt4(v, sizeof v, c->v[rows[i].f][h]);
            grid_printf(g, r.x + 1 + lab + k * cw, y, cw - 1, h == u->v.calibrate.head ? theme_accent(&u->th) : STYLE_PLAIN,
                        "%8s", v);
        }
    }
    char a[32];
    fmt4(a, sizeof a, c->alpha_star);
    grid_printf(g, r.x + 1, y++, r.w - 2, theme_accent(&u->th), "alpha* %s   (output gate: Wg = alpha* Wv)", a);
    if (fit < H && y < r.y + r.h)
        grid_printf(g, r.x + 1, y, r.w - 2, theme_dim(&u->th), "heads %d-%d of %d (left/right scroll)", first,
                    first + fit - 1, H);
}

static void step_layer(ui *u, int dir) {
    const teacher_state *t = app_cur(u->st);
    int l = shown_layer(u);
    if (l < 0) return;
    for (int k = l + dir; k >= 0 && k < t->n_layers; k += dir)
        if (layer_done(t, k)) {
            u->v.calibrate.layer = k;
            return;
        }
}

static bool key(ui *u, int k) {
    const teacher_state *t = app_cur(u->st);
    if (k == ' ') { /* calibrate just the next converted layer (Enter: all remaining) */
        ui_run_action(u, ACT_CALIBRATE_ONE);
        u->v.calibrate.layer = -1; /* follow the newest layer */
        return true;
    }
    if (!t || !t->n_layers) return false;
    switch (k) {
    case UK_UP: step_layer(u, -1); return true;
    case UK_DOWN: step_layer(u, 1); return true;
    case UK_LEFT: u->v.calibrate.head--; break;
    case UK_RIGHT: u->v.calibrate.head++; break;
    default: return false;
    }
    if (u->v.calibrate.head < 0) u->v.calibrate.head = 0;
    if (u->v.calibrate.head >= t->n_heads) u->v.calibrate.head = t->n_heads - 1;
    return true;
}

static const key_hint keys[] = {
    {"space", NULL, "next layer"}, {"\u23ce", "Enter", "all remaining layers"},
    {"\u2191\u2193", "up/down", "layer shown"}, {"\u2190\u2192", "left/right", "head"},
};

const screen screen_calibrate = {"Calibrate", draw, key, NULL, keys, sizeof keys / sizeof keys[0], ACT_CALIBRATE};
