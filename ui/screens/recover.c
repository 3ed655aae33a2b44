/* 6 Recover: the race between initializations (graft race). One chart of the
 * KL-per-token curves against training tokens, one series per init (events
 * "race/<init>"), the target loss as a flat line once known; above it the
 * budget, the running step with tokens/s and ETA, the last checkpoint and the
 * "target reached" line. Live numbers come from the race job's progress and
 * log lines (src/workbench/recover_jobs.c), so the screen also draws a
 * session replayed from events. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "screens/screens.h"
#include "widgets/charts.h"

long recover_budget(const app_state *st) {
    if (st->race_tokens > 0) return st->race_tokens;
    const char *e = getenv("GRAFT_RACE_TOKENS");
    long n = e && *e ? strtol(e, NULL, 10) : 0;
    return n > 0 ? n : 51200;
}

/* The newest log line of the current race starting with "race: <prefix>",
 * or NULL; lines before the race's start line belong to an older race. */
static const char *race_line(const app_state *st, const char *prefix) {
    char want[64];
    snprintf(want, sizeof want, "race: %s", prefix);
    for (int i = st->n_log - 1; i >= 0; i--) {
        const char *l = app_state_log_line(st, i);
        if (!l) continue;
        if (!strncmp(l, want, strlen(want))) return l + 6;
        if (!strncmp(l, "race: race on ", 14)) return NULL;
    }
    return NULL;
}

static void fmt_eta(char *b, size_t n, double s) {
    if (s < 0) snprintf(b, n, "-");
    else if (s < 60) snprintf(b, n, "%.0fs", s);
    else if (s < 3600) snprintf(b, n, "%dm%02ds", (int)s / 60, (int)s % 60);
    else snprintf(b, n, "%dh%02dm", (int)s / 3600, (int)s / 60 % 60);
}

static void draw(ui *u, grid *g, rect r) {
    const app_state *st = u->st;
    const style dim = theme_dim(&u->th), acc = theme_accent(&u->th);
    const double keep = st->keep_ratio >= 0 && st->keep_ratio < 1 ? st->keep_ratio : 0.5;
    int x = r.x + 1 + grid_text(g, r.x + 1, r.y, r.w - 2, "recovery race", acc);
    if (x + 2 < r.x + r.w - 1)
        grid_printf(g, x + 2, r.y, r.x + r.w - 3 - x, STYLE_PLAIN, "budget %ld tokens/init (+/-)  keep %.2f uniform",
                    recover_budget(st), keep);
    /* the running step, or what Enter does */
    const bool running = st->job.active && !strcmp(st->job.name, "race");
    if (running) {
        char eta[32];
        fmt_eta(eta, sizeof eta, st->job.eta_s);
        grid_printf(g, r.x + 1, r.y + 1, r.w - 2, STYLE_PLAIN, "%s   %.0f%%   ETA %s   (c cancels)", st->job.label,
                    100 * st->job.fraction, eta);
    } else {
        grid_printf(g, r.x + 1, r.y + 1, r.w - 2, dim, "Enter: race random vs taylor-calibrate (ctx 128, batch 4, "
                                                        "lr 1e-3/1e-4)");
    }
    const char *ck = race_line(st, "checkpoint ");
    char ckb[512] = "none yet";
    if (ck) { /* "<init> step N: PATH", the path cut to its graft/race/ tail when it does not fit */
        snprintf(ckb, sizeof ckb, "%s", ck + strlen("checkpoint "));
        char *tail = strstr(ckb, "graft/race/"), *colon = strstr(ckb, ": ");
        if (tail && colon && colon < tail && (int)strlen(ckb) + 18 > r.w) {
            char t[256];
            snprintf(t, sizeof t, "%s", tail);
            snprintf(colon + 2, sizeof ckb - (size_t)(colon + 2 - ckb), "%s/%s", theme_glyph(&u->th, G_ELLIPSIS), t);
        }
    }
    grid_printf(g, r.x + 1, r.y + 2, r.w - 2, ck ? STYLE_PLAIN : dim, "last checkpoint: %s", ckb);
    const char *tl = race_line(st, "target loss "), *reached = race_line(st, "target reached: ");
    double target = 0;
    const bool has_target = tl && sscanf(tl + strlen("target loss "), "%lf", &target) == 1;
    if (reached) grid_printf(g, r.x + 1, r.y + 3, r.w - 2, acc, "%s", reached);
    else grid_printf(g, r.x + 1, r.y + 3, r.w - 2, dim, "target reached: (after both runs)");

    chart_series s[APP_MAX_SERIES + 1];
    int n = 0;
    double x0 = 0, x1 = 0;
    for (int i = 0; i < st->n_series && n < APP_MAX_SERIES; i++) {
        const loss_series *ls = &st->series[i];
        if (strncmp(ls->name, "race/", 5) || ls->n == 0) continue;
        s[n++] = (chart_series){ls->name + 5, ls->x, ls->y, ls->n};
        if (ls->x[0] < x0 || n == 1) x0 = ls->x[0];
        if (ls->x[ls->n - 1] > x1) x1 = ls->x[ls->n - 1];
    }
    rect c = {r.x + 1, r.y + 5, r.w - 2, r.h - 5};
    if (n == 0) {
        draw_unavailable(u, g, (rect){r.x, r.y + 4, r.w, r.h - 4}, "recovery curves of the race",
                         "Enter starts it on the open teacher and corpus");
        return;
    }
    double tx[2] = {x0, x1}, ty[2] = {target, target};
    char tname[48];
    if (has_target) {
        snprintf(tname, sizeof tname, "target %.4f", target);
        s[n++] = (chart_series){tname, tx, ty, 2};
    }
    grid_printf(g, r.x + 1, r.y + 4, r.w - 2, dim, "y: KL per token (teacher || student)   x: training tokens");
    linechart_draw(g, c, s, n, "tokens", dots_for(&u->th), &u->th);
}

static bool key(ui *u, int k) {
    app_state *st = u->st;
    long b = recover_budget(st);
    switch (k) {
    case '+': case '=': b *= 2; break;
    case '-': b /= 2; break;
    default: return false;
    }
    if (b < 512) b = 512; /* one step of ctx 128 x batch 4 */
    if (b > 1L << 30) b = 1L << 30;
    st->race_tokens = b;
    return true;
}

static const key_hint keys[] = {
    {"+", NULL, "double budget"}, {"-", NULL, "halve budget"},
};

const screen screen_recover = {"Recover", draw, key, NULL, keys, sizeof keys / sizeof keys[0]};
