#include "workbench/workbench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/common.h"
#include "core/error.h"
#include "data/text_tokens.h"
#include "default_teacher.h"
#include "hub/resolve.h"
#include "model/forward.h"
#include "stats/collect.h"
#include "workbench/plan_jobs.h"
#include "workbench/recover_jobs.h"
#include "workbench/teacher_jobs.h"

enum {
    SCREEN_TEACHER = 0,
    SCREEN_PLAN = 1,
    SCREEN_STATS = 2,
    SCREEN_CALIBRATE = 3,
    SCREEN_ALIGN = 4,
    SCREEN_RECOVER = 5,
    SCREEN_RESULTS = 6
};

/* ---- jobs (worker thread): they read their argument, never app_state ---- */

typedef struct {
    const model *m;
    char *corpus;
    int ctx, seqs;
} stats_arg;

static int stats_job(job_ctx *ctx, void *argp) {
    stats_arg *a = argp;
    const model *m = a->m;
    int_vec ids = {0}, cut = {0};
    int n_seqs = 0, rc = -1;
    attn_stats st;
    attn_stats_init(&st, m->cfg.n_layers, m->cfg.n_heads);
    if (!m->tok) {
        gf_fail("the teacher has no tokenizer");
        goto done;
    }
    if (text_file_tokens(m->tok, a->corpus, false, &ids) != 0) goto done;
    if (cut_sequences(ids.data, ids.len, 0, tokenizer_bos(m->tok), a->ctx, a->seqs, &cut, &n_seqs) != 0) goto done;
    job_log(ctx, "statistics over %d x %d tokens of %s", n_seqs, a->ctx, a->corpus);
    /* one sequence at a time so cancellation and progress stay live */
    for (int s = 0; s < n_seqs; s++) {
        if (job_cancelled(ctx)) {
            gf_fail("cancelled");
            goto done;
        }
        if (collect_attn_stats(m, cut.data + (size_t)s * a->ctx, 1, a->ctx, &st, NULL) != 0) goto done;
        job_progress(ctx, s + 1, n_seqs, "stats");
    }
    for (int l = 0; l < m->cfg.n_layers; l++)
        for (int h = 0; h < m->cfg.n_heads; h++) {
            job_stat(ctx, "mean_dist", l, h, attn_stats_mean_distance(&st, l, h));
            job_stat(ctx, "entropy", l, h, attn_stats_entropy(&st, l, h));
            job_stat(ctx, "concentration", l, h, attn_stats_concentration(&st, l, h));
            job_stat(ctx, "out_rms", l, h, attn_stats_output_rms(&st, l, h));
        }
    rc = 0;
done:
    attn_stats_free(&st);
    int_vec_free(&ids);
    int_vec_free(&cut);
    free(a->corpus);
    free(a);
    return rc;
}

/* ---- front end (UI thread) ---- */

static int start_stats(workbench *wb, app_state *st, job_runner *jr) {
    if (!wb->m) return gf_fail("no teacher loaded yet");
    if (!wb->corpus) return gf_fail("no corpus: start graft with --text FILE or set GRAFT_TEXT");
    stats_arg *a = gf_calloc(1, sizeof *a);
    a->m = wb->m;
    a->corpus = gf_strdup(wb->corpus);
    a->ctx = wb->stats_ctx;
    a->seqs = wb->stats_seqs;
    if (job_start(jr, "stats", stats_job, a) != 0) {
        free(a->corpus);
        free(a);
        return -1;
    }
    snprintf(st->corpus, sizeof st->corpus, "%s", wb->corpus);
    return 0;
}

static int run_screen(app_state *st, job_runner *jr, int screen) {
    workbench *wb = st->user;
    switch (screen) {
    case SCREEN_TEACHER: return teacher_start_load(wb, st, jr, wb->model_arg);
    case SCREEN_STATS: return start_stats(wb, st, jr);
    case SCREEN_PLAN: return plan_start_select(wb, st, jr);
    case SCREEN_RESULTS: return results_start_evaluate(wb, st, jr);
    case SCREEN_RESULTS | APP_RUN_ALT: return results_start_ablate(wb, st, jr);
    case SCREEN_CALIBRATE: return calib_start(&wb->calib, wb->m, wb->corpus, st, jr);
    case SCREEN_ALIGN: return align_start(&wb->calib, wb->m, wb->corpus, st, jr);
    case SCREEN_RECOVER: return recover_start_race(wb, st, jr);
    default: return gf_fail("this screen has no job in this build yet");
    }
}

static job_runner *the_runner; /* on_done has no runner argument; one workbench per process */

static void on_done(app_state *st, const char *job_name, void *result) {
    workbench *wb = st->user;
    if (!strcmp(job_name, "load")) {
        calib_cache_free(wb->calib); /* it captured the previous teacher */
        wb->calib = NULL;
        teacher_loaded(wb, st, result);
        if (wb->m) plan_show_model(st, wb->m);
        /* statistics follow at once when a corpus is known */
        if (wb->corpus && the_runner && start_stats(wb, st, the_runner) != 0)
            app_state_log(st, "stats: %s", gf_last_error());
        return;
    }
    if (!strcmp(job_name, "race")) {
        recover_race_done(st, result);
        return;
    }
    free(result);
}

int workbench_attach(workbench *wb, app_state *st, job_runner *jr, const char *model_arg, const char *corpus,
                     const workbench_opts *opts) {
    memset(wb, 0, sizeof *wb);
    wb->stats_ctx = 256;
    wb->stats_seqs = 4;
    wb->seed = opts ? opts->seed : 1;
    if (opts && opts->tokenizer && model_arg) {
        wb->tokenizer = gf_strdup(opts->tokenizer);
        wb->tokenizer_for = gf_strdup(model_arg);
    }
    const char *env = getenv("GRAFT_TEACHER");
    if (model_arg) {
        wb->model_arg = gf_strdup(model_arg);
    } else if (!(env && *env) && st->n_recent > 0) { /* the session's last teacher */
        wb->model_arg = gf_strdup(st->recent[0].arg);
    } else {
        wb->model_arg = default_teacher_path();
        if (!wb->model_arg) return -1;
    }
    wb->corpus = corpus ? gf_strdup(corpus) : default_text_path();
    st->run = run_screen;
    st->on_done = on_done;
    st->open_teacher = teacher_open;
    st->user = wb;
    the_runner = jr;
    snprintf(st->teacher, sizeof st->teacher, "%s (loading)", wb->model_arg);
    return teacher_start_load(wb, st, jr, wb->model_arg);
}

void workbench_free(workbench *wb) {
    calib_cache_free(wb->calib);
    if (wb->m) {
        model_free(wb->m);
        free(wb->m);
    }
    free(wb->model_arg);
    free(wb->tokenizer);
    free(wb->tokenizer_for);
    free(wb->corpus);
    memset(wb, 0, sizeof *wb);
}
