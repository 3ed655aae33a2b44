/* 6 Recover: the race between initializations (graft race) of the current
 * teacher. One chart of the KL-per-token curves against training tokens, one
 * series per init, the target loss as a flat line once known; above it the
 * budget and learning rates (9 Settings), the running step with tokens/s, the
 * last checkpoint and the "target reached" line (src/workbench/recover_jobs.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "screens/screens.h"
#include "widgets/charts.h"

static void fmt_eta(char *b, size_t n, double s) {
    if (s < 0) snprintf(b, n, "-");
    else if (s < 60) snprintf(b, n, "%.0fs", s);
    else if (s < 3600) snprintf(b, n, "%dm%02ds", (int)s / 60, (int)s % 60);
    else snprintf(b, n, "%dh%02dm", (int)s / 3600, (int)s / 60 % 60);
}

static void draw(ui *u, grid *g, rect r) {
    const app_state *st = u->st;
    const teacher_state *t = app_cur(st);
    const style dim = theme_dim(&u->th), acc = theme_accent(&u->th);
    if (!t || (!t->n_layers && !t->race.source[0])) { /* an imported race shows without the teacher's shape */
        draw_unavailable(u, g, r, "a teacher (the race trains students of it)",
                         "open one on 1 Teacher (the default teacher loads by itself)");
        return;
    }
    const double keep = t->keep_ratio > 0 && t->keep_ratio < 1 ? t->keep_ratio : 0.5;
    int x = r.x + 1 + grid_text(g, r.x + 1, r.y, r.w - 2, "recovery race", acc);
    if (x + 2 < r.x + r.w - 1)
        grid_printf(g, x + 2, r.y, r.x + r.w - 3 - x, STYLE_PLAIN,
                    "budget %ld tokens/init (+/-)  lr %g/%g  keep %.2f uniform", st->settings.race_tokens,
                    st->settings.race_lr_mixer, st->settings.race_lr_rest, keep);
    /* the running step, or what Enter does */
    const bool running = st->job.active && !strcmp(st->job.name, "race");
    const job_record *last = NULL;
    if (t->race.source[0] && !running) { /* the curves below came from a race JSON, run elsewhere */
        const char *f = strrchr(t->race.source, '/');
        grid_printf(g, r.x + 1, r.y + 1, r.w - 2, acc, "imported from %s: %ld tokens per init (Enter races here)",
                    f ? f + 1 : t->race.source, t->race.tokens);
    } else if (running) {
        char eta[32];
        fmt_eta(eta, sizeof eta, st->job.eta);
        /* training: "<init> step 12/16, 812 tokens/s"; building: the phase ("build taylor-calibrate") */
        const char *what = !strncmp(st->job.phase, "train", 5) ? st->job.label : st->job.phase;
        grid_printf(g, r.x + 1, r.y + 1, r.w - 2, STYLE_PLAIN, "%s   race %.0f%%   eta %s   (c cancels)", what,
                    100 * st->job.fraction, eta);
    } else if ((last = app_last_job(st, t, "race")) && last->outcome == JOB_INTERRUPTED) {
        char at[200];
        app_job_progress_text(last, at, sizeof at);
        grid_printf(g, r.x + 1, r.y + 1, r.w - 2, acc, "%s; race interrupted %s",
                    last->checkpoint[0] ? "R resumes, Enter starts afresh" : "no checkpoint: Enter starts afresh", at);
    } else {
        grid_printf(g, r.x + 1, r.y + 1, r.w - 2, dim, "Enter: race random vs taylor-calibrate (ctx 128, batch 4, "
                                                        "lr %g/%g; learning rates in 9 Settings)",
                    st->settings.race_lr_mixer, st->settings.race_lr_rest);
    }
    const char *ck = t->race.checkpoint[0] ? t->race.checkpoint : last && last->checkpoint[0] ? last->checkpoint : NULL;
    char ckb[512] = "none yet";
    if (ck) { /* "<init> step N: PATH", the path cut to its graft/race/ tail when it does not fit */
        snprintf(ckb, sizeof ckb, "%s", ck);
        char *tail = strstr(ckb, "graft/race/"), *colon = strstr(ckb, ": ");
        if (tail && colon && colon < tail && (int)strlen(ckb) + 18 > r.w) {
            char t[256];
            snprintf(t, sizeof t, "%s", tail);
            snprintf(colon + 2, sizeof ckb - (size_t)(colon + 2 - ckb), "%s/%s", theme_glyph(&u->th, G_ELLIPSIS), t);
        }
    }
    grid_printf(g, r.x + 1, r.y + 2, r.w - 2, ck ? STYLE_PLAIN : dim, "last checkpoint: %s", ckb);
    const double target = t->race.target;
    const bool has_target = t->race.has_target;
    if (t->race.reached[0]) grid_printf(g, r.x + 1, r.y + 3, r.w - 2, acc, "%s", t->race.reached);
    else grid_printf(g, r.x + 1, r.y + 3, r.w - 2, dim, "target reached: (after both runs)");

    chart_series s[APP_MAX_SERIES + 1];
    int n = 0;
    double x0 = 0, x1 = 0;
    for (int i = 0; i < t->n_series && n < APP_MAX_SERIES; i++) {
        const loss_series *ls = &t->series[i];
        if (strncmp(ls->name, "race/", 5) || ls->n == 0) continue;
        s[n++] = (chart_series){ls->name + 5, ls->x, ls->y, ls->n};
        if (ls->x[0] < x0 || n == 1) x0 = ls->x[0];
        if (ls->x[ls->n - 1] > x1) x1 = ls->x[ls->n - 1];
    }
    /* the race's held-out perplexities beside the teacher's on the same sequences, and which ones */
    int top = 4;
    if (t->race.eval_seqs > 0) {
        const char *dot = theme_glyph(&u->th, G_MIDDOT);
        char line[300], which[80];
        snprintf(which, sizeof which, "held-out ppl, the same %d sequences of %d tokens", t->race.eval_seqs,
                 t->race.eval_ctx);
        for (int pass = 0; pass < 2; pass++) { /* a shorter name for the sequences when the line is short */
            snprintf(line, sizeof line, "%s: teacher %.4g %s %s %.4g %s %s %.4g", which, t->race.teacher_ppl, dot,
                     t->race.labels[0], t->race.ppl[0], dot, t->race.labels[1], t->race.ppl[1]);
            if (utf8_width(line) <= r.w - 2) break;
            snprintf(which, sizeof which, "held-out %dx%d ppl", t->race.eval_seqs, t->race.eval_ctx);
        }
        grid_text(g, r.x + 1, r.y + 4, r.w - 2, line, STYLE_PLAIN);
        top = 5;
    }
    rect c = {r.x + 1, r.y + top + 1, r.w - 2, r.h - top - 1};
    if (n == 0) {
        draw_unavailable(u, g, (rect){r.x, r.y + top, r.w, r.h - top}, "recovery curves of the race",
                         "Enter starts it on the open teacher and corpus");
        return;
    }
    double tx[2] = {x0, x1}, ty[2] = {target, target};
    char tname[48];
    if (has_target) {
        snprintf(tname, sizeof tname, "target %.4f", target);
        s[n++] = (chart_series){tname, tx, ty, 2};
    }
    /* recall through the race (9 Settings: race recall): its own chart under the loss */
    chart_series rs[APP_MAX_SERIES];
    int nr = 0;
    for (int i = 0; i < t->n_series && nr < APP_MAX_SERIES; i++) {
        const loss_series *ls = &t->series[i];
        if (!strncmp(ls->name, "recall/", 7) && ls->n > 0) rs[nr++] = (chart_series){ls->name + 7, ls->x, ls->y, ls->n};
    }
    const int rh = nr > 0 && c.h >= 16 ? c.h / 3 : 0;
    c.h -= rh;
    grid_printf(g, r.x + 1, r.y + top, r.w - 2, dim, "y: KL per token (teacher || student)   x: training tokens");
    linechart_draw(g, c, s, n, "tokens", dots_for(&u->th), &u->th);
    if (rh > 0) {
        grid_printf(g, r.x + 1, c.y + c.h, r.w - 2, dim, "y: recall accuracy (graft recall, niah-number + multikey)   x: training tokens");
        linechart_draw(g, (rect){c.x, c.y + c.h + 1, c.w, rh - 1}, rs, nr, "tokens", dots_for(&u->th), &u->th);
    }
}

static bool key(ui *u, int k) {
    wb_settings *s = &u->st->settings;
    if (k == 'R') { /* an interrupted race goes on from its checkpoints (same budget and seed) */
        const job_record *last = app_last_job(u->st, app_cur(u->st), "race");
        if (!last || last->outcome != JOB_INTERRUPTED || !last->checkpoint[0]) {
            ui_say(u, "no interrupted race with a checkpoint to resume: Enter starts one");
            return true;
        }
        u->st->race_resume = true;
        ui_run_action(u, ACT_RACE);
        u->st->race_resume = false;
        return true;
    }
    if (k != '+' && k != '=' && k != '-') return false;
    if (settings_step(s, SET_RACE_TOKENS, k == '-' ? -1 : 1) != 0) ui_say(u, "%s", gf_last_error());
    else ui_say(u, "race budget: %ld tokens per init (saved with the session)", s->race_tokens);
    return true;
}

static const key_hint keys[] = {
    {"+", NULL, "double budget"}, {"-", NULL, "halve budget"}, {"R", NULL, "resume interrupted race"},
};

const screen screen_recover = {"Recover", draw, key, NULL, keys, sizeof keys / sizeof keys[0], ACT_RACE};
