#include "workbench/recover_jobs.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/race_run.h"
#include "core/clock.h"
#include "core/error.h"
#include "hub/cache.h"
#include "persist/persist.h"
#include "screens/screens.h"

static const char *const race_inits[2] = {"random", "taylor-calibrate"};


typedef struct {
    model *m;
    char *corpus, *ckpt_dir;
    double keep;
    long tokens;
    long seed;  /* graft tui --seed (graft race's default 1) */
} race_arg;

/* what on_done gets */
typedef struct {
    char labels[2][32];
    double target, ttt[2], ppl[2], ratio, keep;
    int window;
    long tokens;
    char converted[256];
} race_result;

typedef struct {
    job_ctx *ctx;
    race_arg *a;
    train_cli *tc;
    char *conv_buf;
    size_t conv_size;
    int run;                  /* the run training now */
    const char *label, *ckpt;
    double t0;                /* when this run's training began */
    volatile sig_atomic_t stop;
} race_live;

static int make_student(void *ud, int i, cli_student *s, train_student **handle, const char **label) {
    race_live *lv = ud;
    *label = race_inits[i];
    if (job_cancelled(lv->ctx)) return gf_fail("cancelled");
    job_log(lv->ctx, "building the %s student (keep %.2f, uniform)", race_inits[i], lv->a->keep);
    job_progress(lv->ctx, (double)i * lv->a->tokens, 2.0 * lv->a->tokens, i ? "building taylor-calibrate" : "building random");
    return train_student_build(s, handle, lv->a->m, race_inits[i], lv->a->keep, lv->a->corpus, (long)lv->tc->to.seed,
                               lv->tc->to.ctx, lv->conv_buf, lv->conv_size);
}

static void run_started(void *ud, int i, const char *label, const char *ckpt) {
    race_live *lv = ud;
    lv->run = i, lv->label = label, lv->ckpt = ckpt;
    lv->t0 = clock_now_s();
    job_log(lv->ctx, "training %s: layers %s converted, %ld tokens", label, lv->conv_buf, lv->a->tokens);
}

static void on_step(void *ud, long step, long total, long tokens, double loss, double lr, double gnorm) {
    (void)lr, (void)gnorm;
    race_live *lv = ud;
    char series[48], label[64];
    snprintf(series, sizeof series, "race/%s", lv->label);
    job_loss(lv->ctx, series, tokens, loss);
    double dt = clock_now_s() - lv->t0, rate = dt > 0 ? tokens / dt : 0;
    snprintf(label, sizeof label, "%s step %ld/%ld, %.0f tokens/s", lv->label, step, total, rate);
    job_progress(lv->ctx, (double)lv->run * lv->a->tokens + tokens, 2.0 * lv->a->tokens, label);
    if (lv->ckpt && (step % RECOVER_CKPT_EVERY == 0 || step == total))
        job_log(lv->ctx, "checkpoint %s step %ld: %s", lv->label, step, lv->ckpt);
    if (job_cancelled(lv->ctx)) lv->stop = 1; /* train_run checkpoints and stops after this step */
}

static int race_job(job_ctx *ctx, void *argp) {
    race_arg *a = argp;
    int rc = -1;
    train_cli tc;
    train_cli_default(&tc);
    tc.teacher = "workbench";
    tc.data = a->corpus;
    tc.to.tokens = a->tokens;
    tc.to.ctx = RECOVER_CTX;
    tc.to.batch = RECOVER_BATCH;
    tc.to.lr_mixer = RECOVER_LR_MIXER;
    tc.to.lr_rest = RECOVER_LR_REST;
    tc.to.ckpt_every = RECOVER_CKPT_EVERY;
    tc.to.seed = (uint64_t)a->seed;
    train_model tt = {0};
    train_data data = {0};
    race_outcome ro = {0};
    char conv[256] = "uniform";
    race_live lv = {.ctx = ctx, .a = a, .tc = &tc, .conv_buf = conv, .conv_size = sizeof conv};
    if (train_cli_finish(&tc, "race") != 0) goto done;
    if (a->ckpt_dir && hub_mkdirs(a->ckpt_dir) != 0) goto done;
    job_log(ctx, "race on %s: %ld tokens per init, ctx %d, batch %d, lr %g / %g, checkpoints in %s", a->corpus,
            a->tokens, RECOVER_CTX, RECOVER_BATCH, RECOVER_LR_MIXER, RECOVER_LR_REST, a->ckpt_dir ? a->ckpt_dir : "-");
    if (train_model_init(&tt, &a->m->cfg, &a->m->w, false, false, NULL, tc.to.ctx) != 0) goto done;
    if (cli_train_data(&data, a->m, &tc) != 0) goto done;
    tc.to.on_step = on_step;
    tc.to.ud = &lv;
    race_spec spec = {.n = 2, .make = make_student, .make_ud = &lv, .base = tc.to, .ckpt_dir = a->ckpt_dir,
                      .on_run = run_started, .run_ud = &lv, .stop = &lv.stop};
    if (race_run(&spec, &tt, &data, &ro) != 0) goto done;
    if (ro.stopped) {
        job_log(ctx, "checkpoint %s step %ld (stopped): %s", lv.label, ro.res[ro.n_done - 1].st.step,
                lv.ckpt ? lv.ckpt : "none");
        gf_fail("cancelled (%s checkpointed to %s)", lv.label, lv.ckpt ? lv.ckpt : "-");
        goto done;
    }
    race_result *r = gf_calloc(1, sizeof *r);
    for (int i = 0; i < 2; i++) {
        snprintf(r->labels[i], sizeof r->labels[i], "%s", ro.labels[i]);
        r->ttt[i] = ro.ttt[i];
        r->ppl[i] = ro.res[i].final_eval_ppl;
    }
    r->target = ro.target, r->window = ro.window, r->ratio = race_ratio(&ro), r->keep = a->keep;
    r->tokens = ro.res[0].st.tokens;
    snprintf(r->converted, sizeof r->converted, "%s", conv);
    job_set_result(ctx, r);
    rc = 0;
done:
    race_outcome_free(&ro);
    train_data_free(&data);
    train_model_free(&tt);
    free(a->corpus);
    free(a->ckpt_dir);
    free(a);
    return rc;
}

int recover_start_race(workbench *wb, app_state *st, job_runner *jr) {
    if (!wb->m) return gf_fail("no teacher loaded yet");
    if (!wb->corpus) return gf_fail("no corpus: start graft with --text FILE or set GRAFT_TEXT");
    race_arg *a = gf_calloc(1, sizeof *a);
    a->m = wb->m;
    a->corpus = gf_strdup(wb->corpus);
    a->seed = wb->seed;
    a->keep = st->keep_ratio >= 0 && st->keep_ratio < 1 ? st->keep_ratio : 0.5;
    a->tokens = st->race_tokens > 0 ? st->race_tokens : recover_budget(st);
    char *dir = persist_path("XDG_STATE_HOME", ".local/state", "race");
    a->ckpt_dir = dir; /* NULL: no checkpoints (no HOME) */
    /* a fresh race: drop the last race's curves */
    for (int i = 0; i < st->n_series; i++)
        if (!strncmp(st->series[i].name, "race/", 5)) st->series[i].n = 0;
    st->race_tokens = a->tokens;
    if (job_start(jr, "race", race_job, a) != 0) {
        free(a->corpus);
        free(a->ckpt_dir);
        free(a);
        return -1;
    }
    return 0;
}

static void fmt_ttt(char *b, size_t n, double t) {
    if (t >= 0) snprintf(b, n, "%.0f", t);
    else snprintf(b, n, "never");
}

void recover_race_done(app_state *st, void *result) {
    race_result *r = result;
    char t0[32], t1[32], ratio[32], keep[16], ppl[32];
    fmt_ttt(t0, sizeof t0, r->ttt[0]);
    fmt_ttt(t1, sizeof t1, r->ttt[1]);
    if (r->ratio > 0) snprintf(ratio, sizeof ratio, "%.2f", r->ratio);
    else snprintf(ratio, sizeof ratio, "undefined");
    app_state_log(st, "race: target loss %.4f (%s at the end of %ld tokens, trailing mean of %d steps)", r->target,
                  r->labels[0], r->tokens, r->window);
    app_state_log(st, "race: held-out ppl %s %.3f, %s %.3f", r->labels[0], r->ppl[0], r->labels[1], r->ppl[1]);
    app_state_log(st, "race: target reached: %s %s, %s %s -> ratio %s", r->labels[0], t0, r->labels[1], t1, ratio);
    if (st->n_result_cols == 0) {
        const char *cols[] = {"run", "strategy", "keep", "init", "ppl", "tokens-to-target", "ratio"};
        app_state_set_result_header(st, cols, 7);
    }
    snprintf(keep, sizeof keep, "%.2f", r->keep);
    for (int i = 0; i < 2; i++) {
        snprintf(ppl, sizeof ppl, "%.3f", r->ppl[i]);
        const char *cells[] = {"race", "uniform", keep, r->labels[i], ppl, i ? t1 : t0, i ? ratio : ""};
        app_state_add_result(st, cells, 7);
    }
    free(r);
}
