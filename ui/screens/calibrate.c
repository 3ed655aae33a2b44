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

static bool layer_done(const app_state *st, int l) { return st->method.calib && st->method.calib[l].done; }

/* The layer shown: the chosen one when calibrated, else the highest calibrated one; -1 none. */
static int shown_layer(const ui *u) {
    const app_state *st = u->st;
    if (u->cal_layer >= 0 && u->cal_layer < st->n_layers && layer_done(st, u->cal_layer)) return u->cal_layer;
    for (int l = st->n_layers - 1; l >= 0; l--)
        if (layer_done(st, l)) return l;
    return -1;
}

static void fmt4(char *buf, size_t n, double v) {
    if (isnan(v)) snprintf(buf, n, "-");
    else snprintf(buf, n, "%.4g", v);
}

/* "layers  0 attn  1 attn  2 done  3 attn  4 pending", wrapped; returns rows used. */
static int draw_layer_list(ui *u, grid *g, rect r, const bool *conv, int shown) {
    const app_state *st = u->st;
    int x = r.x, y = r.y;
    x += grid_text(g, x, y, r.w, "layers ", theme_dim(&u->th));
    for (int l = 0; l < st->n_layers; l++) {
        char cell[24];
        const char *mark = !conv[l] ? "attn" : layer_done(st, l) ? "done" : "pending";
        int w = snprintf(cell, sizeof cell, " %d %s%s", l, mark, l == shown ? "<" : " ");
        if (x + w > r.x + r.w) {
            if (++y >= r.y + r.h) return y - r.y;
            x = r.x + 7;
        }
        style s = !conv[l] ? theme_dim(&u->th) : layer_done(st, l) ? theme_accent(&u->th) : STYLE_PLAIN;
        grid_text(g, x, y, w, cell, s);
        x += w;
    }
    return y - r.y + 1;
}

static void draw(ui *u, grid *g, rect r) {
    app_state *st = u->st;
    if (!st->n_layers || !st->n_heads) {
        draw_unavailable(u, g, r, "Taylor-Calibrate results (Stage 1)",
                         "needs a teacher; space calibrates the next layer, Enter all of them");
        return;
    }
    const int L = st->n_layers, H = st->n_heads;
    bool conv[1024];
    if (L > 1024) return;
    app_state_converted(st, conv);
    int n_conv = 0, n_done = 0;
    for (int l = 0; l < L; l++) {
        n_conv += conv[l];
        n_done += conv[l] && layer_done(st, l);
    }
    const int shown = shown_layer(u);
    char title[200];
    const char *oc = st->method.calib_outcome;
    snprintf(title, sizeof title, "Stage 1 (taylor-only): %d of %d converted layers calibrated%s%s%s", n_done, n_conv,
             oc[0] ? "   last run: " : "", oc, st->kept ? "" : "   plan: uniform 50%");
    grid_text(g, r.x + 1, r.y, r.w - 2, title, STYLE_PLAIN);
    int y = r.y + 1;
    y += draw_layer_list(u, g, (rect){r.x + 1, y, r.w - 2, 3}, conv, shown);
    if (shown < 0) {
        rect rest = {r.x, y, r.w, r.y + r.h - y};
        draw_unavailable(u, g, rest, "Taylor-Calibrate results (Stage 1)",
                         "space calibrates the next converted layer, Enter all remaining");
        return;
    }
    const calib_layer *c = &st->method.calib[shown];
    if (u->cal_head >= H) u->cal_head = H - 1;
    if (u->cal_head < 0) u->cal_head = 0;
    /* columns: a label column, then as many heads as fit, scrolled to the cursor */
    const int lab = 11, cw = 9;
    int fit = (r.w - 2 - lab) / cw;
    if (fit < 1) fit = 1;
    if (fit > H) fit = H;
    int first = u->cal_head - fit + 1 > 0 ? u->cal_head - fit + 1 : 0;
    y++;
    char buf[64];
    grid_printf(g, r.x + 1, y, lab, theme_accent(&u->th), "layer %d", shown);
    for (int k = 0; k < fit; k++) {
        int h = first + k;
        grid_printf(g, r.x + 1 + lab + k * cw, y, cw - 1, h == u->cal_head ? theme_accent(&u->th) : theme_dim(&u->th),
                    "%8s", (snprintf(buf, sizeof buf, "head %d", h), buf));
    }
    y++;
    for (int i = 0; i < N_ROWS && y < r.y + r.h - 2; i++, y++) {
        grid_text(g, r.x + 1, y, lab, rows[i].name, STYLE_PLAIN);
        for (int k = 0; k < fit; k++) {
            int h = first + k;
            char v[32];
            fmt4(v, sizeof v, c->v[rows[i].f][h]);
            grid_printf(g, r.x + 1 + lab + k * cw, y, cw - 1, h == u->cal_head ? theme_accent(&u->th) : STYLE_PLAIN,
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

/* Space: calibrate just the next converted layer (Enter runs all remaining). */
static void run_one(ui *u) {
    app_state *st = u->st;
    if (!st->run || !u->jr) {
        snprintf(u->status, sizeof u->status, "nothing to run here yet: no engine job is wired to Calibrate");
        return;
    }
    st->method.run_arg = CALIB_RUN_ONE;
    if (st->run(st, u->jr, SCR_CALIBRATE) != 0) {
        snprintf(u->status, sizeof u->status, "%s", gf_last_error());
        app_state_log(st, "%s", gf_last_error());
    } else {
        snprintf(u->status, sizeof u->status, "started %s (next layer)", job_current_name(u->jr));
        u->last_event = u->now;
    }
    st->method.run_arg = CALIB_RUN_ALL;
    u->cal_layer = -1; /* follow the newest layer */
}

static void step_layer(ui *u, int dir) {
    const app_state *st = u->st;
    int l = shown_layer(u);
    if (l < 0) return;
    for (int k = l + dir; k >= 0 && k < st->n_layers; k += dir)
        if (layer_done(st, k)) {
            u->cal_layer = k;
            return;
        }
}

static bool key(ui *u, int k) {
    if (!u->st->n_layers) return false;
    switch (k) {
    case ' ': run_one(u); return true;
    case UK_UP: step_layer(u, -1); return true;
    case UK_DOWN: step_layer(u, 1); return true;
    case UK_LEFT: u->cal_head--; break;
    case UK_RIGHT: u->cal_head++; break;
    default: return false;
    }
    if (u->cal_head < 0) u->cal_head = 0;
    if (u->cal_head >= u->st->n_heads) u->cal_head = u->st->n_heads - 1;
    return true;
}

static const key_hint keys[] = {
    {"space", NULL, "next layer"}, {"\u23ce", "Enter", "all remaining layers"},
    {"\u2191\u2193", "up/down", "layer shown"}, {"\u2190\u2192", "left/right", "head"},
};

const screen screen_calibrate = {"Calibrate", draw, key, NULL, keys, sizeof keys / sizeof keys[0]};
