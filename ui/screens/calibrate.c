/* 4 Calibrate: Stage 1 of Taylor-Calibrate stepped layer by layer, with its
 * four components switched on and off. The layer list (attention / pending /
 * done), the teacher's Stage 1 options (which components run, the distance
 * behind the decay, a half-life override: the teacher's stage1_choice, which
 * every job that builds a student with Stage 1 uses), then every number
 * Stage 1 computed for each head of one layer, grouped by component, and the
 * layer's alpha*. Space calibrates the next converted layer, Enter all
 * remaining ones (the "calibrate" job); after a change of options both start
 * over with every converted layer. d b s g switch decay, beta, sigma, gate;
 * n the no-sink distance; h types a half-life override. x / X fix one head of
 * the student measured on 3 Stats (the head under the cursor: this screen's when
 * a layer is shown, else Stats') to its no-sink distance / a typed half-life,
 * then Stage 2 of its layer, with the before / after histograms and perplexity. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "keys.h"
#include "screens/halflife_panel.h"
#include "screens/screens.h"
#include "workbench/best_variant.h"
#include "student/student.h"

/* The table: a group (the teacher statistics, or the component whose numbers
 * follow) and its rows; rows of lower priority go first when the height is short. */
typedef struct {
    unsigned group; /* 0: the teacher statistics; else a STAGE1_* bit */
    calib_field f;
    const char *name;
    int priority;
} calib_row;

static const calib_row rows[] = {
    {0, CAL_DIST, "d_h", 9},
    {0, CAL_DIST_NOSINK, "d no-sink", 3},
    {0, CAL_SINK, "sink", 4},
    {0, CAL_ENTROPY, "H_h", 2},
    {0, CAL_CONC, "c_h", 8},
    {STAGE1_DECAY, CAL_DECAY_DIST, "d used", 5},
    {STAGE1_DECAY, CAL_TARGET_G, "target g", 6},
    {STAGE1_DECAY, CAL_DT_BIAS, "dt_bias", 7},
    {STAGE1_DECAY, CAL_HALFLIFE, "t1/2 idle", 9},
    {STAGE1_BETA, CAL_BETA, "beta*", 9},
    {STAGE1_BETA, CAL_LOGIT, "logit b*", 6},
    {STAGE1_BETA, CAL_WB_LOGIT, "Wb logit", 7},
    {STAGE1_SIGMA, CAL_SIGMA_RAW, "sigma raw", 5},
    {STAGE1_SIGMA, CAL_SIGMA, "sigma*", 9},
};
#define N_ROWS (int)(sizeof rows / sizeof rows[0])

static const char *group_name(unsigned g) {
    switch (g) {
    case STAGE1_DECAY: return "decay";
    case STAGE1_BETA: return "beta";
    case STAGE1_SIGMA: return "sigma";
    case STAGE1_GATE: return "gate";
    default: return "stats";
    }
}

static bool layer_done(const teacher_state *t, int l) { return t->method.calib && t->method.calib[l].done; }

/* The layer shown: the chosen one when calibrated, else the highest calibrated one; -1 none. */
static int shown_layer(const ui *u) {
    const teacher_state *t = app_cur(u->st);
    if (u->v.calibrate.layer >= 0 && u->v.calibrate.layer < t->n_layers && layer_done(t, u->v.calibrate.layer)) return u->v.calibrate.layer;
    for (int l = t->n_layers - 1; l >= 0; l--)
        if (layer_done(t, l)) return l;
    return -1;
}

/* The head a half-life fix (x / X) works on: Calibrate's cursor when a layer is shown, else Stats'. */
static void fix_head(const ui *u, int *layer, int *head) {
    const int shown = shown_layer(u);
    if (shown >= 0) *layer = shown, *head = u->v.calibrate.head;
    else *layer = u->v.stats.cur_layer, *head = u->v.stats.cur_head;
}

/* The fix panel at the bottom of r when a student was measured; returns the rows it took. */
static int draw_fix(ui *u, grid *g, rect r, const teacher_state *t, int rows) {
    if (!t->hl.have || r.h < rows) return 0;
    int layer, head;
    fix_head(u, &layer, &head);
    halflife_fix_draw(u, g, (rect){r.x + 1, r.y + r.h - rows, r.w - 2, rows}, &t->hl, layer, head);
    return rows;
}

/* v in at most w characters: 4 significant digits, fewer when that is too wide ("-0.00504") */
static void fmt_fit(char *buf, size_t n, double v, int w) {
    if (isnan(v)) {
        snprintf(buf, n, "-");
        return;
    }
    for (int digits = 4; digits >= 1; digits--)
        if (snprintf(buf, n, "%.*g", digits, v) <= w) return;
}

static void fmt4(char *buf, size_t n, double v) { fmt_fit(buf, n, v, 12); }

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

/* The teacher's Stage 1 options in two lines: the components with their keys,
 * then what the decay reads. Returns the lines used. */
static int draw_options(ui *u, grid *g, int x, int y, int w, const teacher_state *t) {
    const stage1_choice *c = &t->stage1;
    style acc = theme_accent(&u->th), dim = theme_dim(&u->th);
    static const char keys[4] = {'d', 'b', 's', 'g'};
    int at = x + grid_text(g, x, y, w, "Stage 1 components:", STYLE_PLAIN);
    for (int i = 0; i < 4 && at < x + w; i++) {
        const bool on = c->parts & (1u << i);
        char cell[32];
        snprintf(cell, sizeof cell, "  %c [%s] %s", keys[i], on ? "x" : " ", stage1_part_names[i]);
        at += grid_text(g, at, y, x + w - at, cell, on ? acc : dim);
    }
    if (at < x + w) { /* the value scale's fit, which counts only with sigma on */
        char cell[48];
        snprintf(cell, sizeof cell, "   f: sigma fit %s", sigma_fit_name(c->sigma_fit));
        grid_text(g, at, y, x + w - at, cell, c->parts & STAGE1_SIGMA ? STYLE_PLAIN : dim);
    }
    char line[256];
    if (!(c->parts & STAGE1_DECAY))
        snprintf(line, sizeof line, "decay off: A_log and dt_bias stay random");
    else if (c->half_life > 0)
        snprintf(line, sizeof line, "decay: every head's idle half-life %g tokens   h: change (0 clears)", c->half_life);
    else if (c->no_sink)
        snprintf(line, sizeof line, "decay from d no-sink (without the first key)   n: all keys   h: half-life");
    else
        snprintf(line, sizeof line, "decay from d_h (all keys)   n: without the first key   h: half-life");
    grid_text(g, x, y + 1, w, line, STYLE_PLAIN);
    return 2;
}

static void draw(ui *u, grid *g, rect r) {
    teacher_state *t = app_cur(u->st);
    calibrate_view *v = &u->v.calibrate;
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
    if (v->editing && u->typing) { /* typing the half-life override, or a fix's half-life */
        entry_draw(g, r.x + 1, y, r.w - 2,
                   v->fix_typing ? "fix: the head's half-life, tokens (Enter runs the fix): "
                                 : "half-life override, tokens (empty or 0: from the distance): ",
                   &v->entry, true, STYLE_PLAIN);
        y += 2;
    } else {
        y += draw_options(u, g, r.x + 1, y, r.w - 2, t);
    }
    char best[600]; /* what the Results rows say about the Stage 1 variants (the default stays the paper's) */
    best_variant_line(t, best, sizeof best);
    if (best[0] && y + 6 <= r.y + r.h) y += draw_wrapped(g, r.x + 1, y, r.w - 2, 2, best, theme_dim(&u->th));
    /* numbers computed with other options than the teacher's now */
    const bool stale = n_done > 0 && !stage1_choice_same(&t->stage1, &t->method.calib_s1);
    if (stale) {
        char was[48], now[48];
        stage1_choice_label(&t->method.calib_s1, was, sizeof was);
        stage1_choice_label(&t->stage1, now, sizeof now);
        grid_printf(g, r.x + 1, y++, r.w - 2, theme_accent(&u->th),
                    "numbers below: Stage 1 %s; space / Enter re-run with %s", was, now);
    }
    /* the half-life fix panel takes the bottom rows when a student was measured on Stats */
    r.h -= draw_fix(u, g, (rect){r.x, y, r.w, r.y + r.h - y}, t, shown < 0 ? r.y + r.h - y : (r.y + r.h - y >= 30 ? 13 : 0));
    if (shown < 0) {
        if (t->hl.have) return;
        rect rest = {r.x, y, r.w, r.y + r.h - y};
        draw_unavailable(u, g, rest, "Taylor-Calibrate results (Stage 1)",
                         "space calibrates the next converted layer, Enter all remaining");
        return;
    }
    const calib_layer *c = &t->method.calib[shown];
    if (v->head >= H) v->head = H - 1;
    if (v->head < 0) v->head = 0;
    /* which rows fit: the head line, the rows, alpha*, the scroll note; a blank line when there is room */
    bool on[N_ROWS];
    int n_on = N_ROWS;
    for (int i = 0; i < N_ROWS; i++) on[i] = true;
    const int room = r.y + r.h - y;
    for (int p = 1; p < 10 && n_on + 3 > room; p++)
        for (int i = 0; i < N_ROWS && n_on + 3 > room; i++)
            if (on[i] && rows[i].priority == p) on[i] = false, n_on--;
    if (n_on + 4 <= room) y++;
    /* columns: the group, the row name, then as many heads as fit, scrolled to the cursor */
    const int grp = 6, lab = 16, cw = 9;
    int fit = (r.w - 2 - lab) / cw;
    if (fit < 1) fit = 1;
    if (fit > H) fit = H;
    int first = v->head - fit + 1 > 0 ? v->head - fit + 1 : 0;
    char buf[64];
    style acc = theme_accent(&u->th), dim = theme_dim(&u->th);
    grid_printf(g, r.x + 1, y, lab, acc, "layer %d", shown);
    for (int k = 0; k < fit; k++) {
        int h = first + k;
        grid_printf(g, r.x + 1 + lab + k * cw, y, cw - 1, h == v->head ? acc : dim, "%8s",
                    (snprintf(buf, sizeof buf, "head %d", h), buf));
    }
    y++;
    unsigned last_group = ~0u;
    int group_row = 0;
    for (int i = 0; i < N_ROWS && y < r.y + r.h - 2; i++) {
        if (!on[i]) continue;
        const unsigned gr = rows[i].group;
        const bool applied = !gr || (c->parts & gr);
        if (gr != last_group) group_row = 0;
        /* the group's name on its first row; "off" under it when the component did not run */
        if (group_row == 0) grid_text(g, r.x + 1, y, grp, group_name(gr), applied ? acc : dim);
        else if (group_row == 1 && !applied) grid_text(g, r.x + 1, y, grp, "off", dim);
        last_group = gr, group_row++;
        grid_text(g, r.x + 1 + grp, y, lab - grp, rows[i].name, applied ? STYLE_PLAIN : dim);
        for (int k = 0; k < fit; k++) {
            int h = first + k;
            char val[32];
            fmt_fit(val, sizeof val, c->v[rows[i].f][h], cw - 1);
            grid_printf(g, r.x + 1 + lab + k * cw, y, cw - 1, h == v->head ? acc : applied ? STYLE_PLAIN : dim, "%8s", val);
        }
        y++;
    }
    char a[32];
    fmt4(a, sizeof a, c->alpha_star);
    const bool gate = c->parts & STAGE1_GATE;
    grid_text(g, r.x + 1, y, grp, "gate", gate ? acc : dim);
    grid_printf(g, r.x + 1 + grp, y++, r.w - 2 - grp, gate ? STYLE_PLAIN : dim, "%-10s%s   %s", "alpha*", a,
                gate ? "(one per layer: Wg = alpha* Wv)" : "(off: Wg stays at the random init)");
    if (fit < H && y < r.y + r.h)
        grid_printf(g, r.x + 1, y, r.w - 2, dim, "heads %d-%d of %d (left/right scroll)", first, first + fit - 1, H);
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

/* After a change of options: what the jobs build with now, and what runs it. */
static void say_options(ui *u, const teacher_state *t, const char *what) {
    char label[48];
    stage1_choice_label(&t->stage1, label, sizeof label);
    const bool stale = !stage1_choice_same(&t->stage1, &t->method.calib_s1) && t->method.calib;
    ui_say(u, "%s; Stage 1 is now %s%s", what, label, stale ? " (space / Enter calibrate with it)" : "");
}

/* x / X: the head under the cursor to half_life tokens (0: its no-sink distance), then Stage 2 of its layer. */
static void start_fix(ui *u, teacher_state *t, double half_life) {
    int layer, head;
    fix_head(u, &layer, &head);
    if (!halflife_view_head(&t->hl, layer, head)) {
        ui_say(u, "fix: layer %d head %d is not a GDN head of %s", layer, head, t->hl.ran.init);
        return;
    }
    t->hl.fix_req = (halflife_change){layer, head, half_life, 0};
    if (!u->st->run || u->st->run(u->st, u->jr, ACT_HALFLIFE_FIX) != 0) {
        ui_say(u, "fix: %s", u->st->run ? gf_last_error() : "nothing to run in this mode");
        return;
    }
    ui_say(u, "fixing layer %d head %d of %s (%s), then Stage 2 of layer %d: c stops it", layer, head, t->hl.ran.init,
           half_life > 0 ? "typed half-life" : "its no-sink distance", layer);
}

static bool edit_key(ui *u, teacher_state *t, int k) {
    calibrate_view *v = &u->v.calibrate;
    entry_result res = entry_key(&v->entry, k);
    if (res == ENTRY_CANCEL) v->editing = u->typing = v->fix_typing = false;
    if (res != ENTRY_SUBMIT) return true;
    v->editing = u->typing = false;
    if (!t) return true;
    if (v->fix_typing) {
        v->fix_typing = false;
        char *end = NULL;
        const double n = strtod(v->entry.text, &end);
        if (!(n > 0) || !isfinite(n) || end == v->entry.text || *end) {
            ui_say(u, "X: a half-life is a number of tokens > 0 (got '%s')", v->entry.text);
            return true;
        }
        start_fix(u, t, n);
        return true;
    }
    stage1_choice c = t->stage1;
    if (stage1_choice_set_half_life(&c, v->entry.text) != 0) {
        ui_say(u, "%s", gf_last_error());
        return true;
    }
    t->stage1 = c;
    char what[64];
    if (c.half_life > 0) snprintf(what, sizeof what, "decay: every head's half-life %g tokens", c.half_life);
    else snprintf(what, sizeof what, "decay from the distance");
    say_options(u, t, what);
    return true;
}

static bool key(ui *u, int k) {
    teacher_state *t = app_cur(u->st);
    calibrate_view *v = &u->v.calibrate;
    if (v->editing && !u->typing) v->editing = false; /* the entry lost focus (a click on a tab) */
    if (v->editing) return edit_key(u, t, k);
    if (k == ' ') { /* calibrate just the next converted layer (Enter: all remaining) */
        ui_run_action(u, ACT_CALIBRATE_ONE);
        v->layer = -1; /* follow the newest layer */
        return true;
    }
    if (!t || !t->n_layers) {
        if (k > 0 && k < 128 && strchr("dbsgfnhxX", k)) {
            ui_say(u, "no teacher yet: its Stage 1 options come with it");
            return true;
        }
        return false;
    }
    switch (k) {
    case 'x':
    case 'X':
        if (!t->hl.have) {
            ui_say(u, "%c: no measured student: h on 3 Stats measures one first", k);
            return true;
        }
        if (k == 'x') {
            start_fix(u, t, 0);
            return true;
        }
        entry_set(&v->entry, "");
        v->editing = u->typing = v->fix_typing = true;
        return true;
    case 'd':
    case 'b':
    case 's':
    case 'g': {
        const int i = k == 'd' ? 0 : k == 'b' ? 1 : k == 's' ? 2 : 3;
        const bool dropped = stage1_choice_toggle(&t->stage1, 1u << i);
        char what[96];
        snprintf(what, sizeof what, "%s %s%s", stage1_part_names[i], t->stage1.parts & (1u << i) ? "on" : "off",
                 dropped ? " (the half-life override went with it)" : "");
        say_options(u, t, what);
        return true;
    }
    case 'f': {
        stage1_choice_next_fit(&t->stage1);
        char what[96];
        snprintf(what, sizeof what, "sigma fit %s%s", sigma_fit_name(t->stage1.sigma_fit),
                 t->stage1.parts & STAGE1_SIGMA ? "" : " (used once sigma is on: s)");
        say_options(u, t, what);
        return true;
    }
    case 'n':
        t->stage1.no_sink = !t->stage1.no_sink;
        say_options(u, t, t->stage1.no_sink ? "the decay reads the distance without the first key (no-sink)"
                                            : "the decay reads the distance over all keys");
        if (!stage1_choice_uses_distance(&t->stage1))
            ui_say(u, "distance: %s, used once the decay reads a distance (decay on, no half-life override)",
                   t->stage1.no_sink ? "no-sink" : "all keys");
        return true;
    case 'h': {
        if (!(t->stage1.parts & STAGE1_DECAY)) {
            ui_say(u, "h: the half-life override sets the decay: switch decay on first (d)");
            return true;
        }
        char cur[32] = "";
        if (t->stage1.half_life > 0) snprintf(cur, sizeof cur, "%g", t->stage1.half_life);
        entry_set(&v->entry, cur);
        v->editing = u->typing = true;
        v->fix_typing = false;
        return true;
    }
    case UK_UP: step_layer(u, -1); return true;
    case UK_DOWN: step_layer(u, 1); return true;
    case UK_LEFT: v->head--; break;
    case UK_RIGHT: v->head++; break;
    default: return false;
    }
    if (v->head < 0) v->head = 0;
    if (v->head >= t->n_heads) v->head = t->n_heads - 1;
    return true;
}

static const key_hint keys[] = {
    {"space", NULL, "next layer"},
    {"\u23ce", "Enter", "all layers"},
    {"d b s g", NULL, "components"}, /* decay, beta, sigma, gate on / off (the options line names each) */
    {"n", NULL, "no-sink"},
    {"h", NULL, "half-life"},
    {"\u2191\u2193", "up/down", "layer"},
    {"\u2190\u2192", "left/right", "head"},
    {"x", NULL, "fix head: no-sink"},
    {"X", NULL, "fix head: half-life"},
    {"f", NULL, "sigma fit"}, /* last: dropped first on a narrow screen, where the options line names it */
};

const screen screen_calibrate = {"Calibrate", draw, key, NULL, keys, sizeof keys / sizeof keys[0], ACT_CALIBRATE};
