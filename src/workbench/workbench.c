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

enum { SCREEN_TEACHER = 0, SCREEN_PLAN = 1, SCREEN_STATS = 2, SCREEN_RESULTS = 6 };

/* ---- jobs (worker thread): they read their argument, never app_state ---- */

typedef struct {
    char *path;
    job_ctx *ctx;
    volatile int cancel;
} load_arg;

/* Hub events (on the hub's worker threads, one at a time) -> job progress. */
static void download_event(const hub_event *ev, void *user) {
    load_arg *a = user;
    if (job_cancelled(a->ctx)) a->cancel = 1;
    if (ev->state == HUB_EV_PROGRESS && ev->total_total > 0)
        job_progress(a->ctx, (double)ev->total_done, (double)ev->total_total, "download");
    else if (ev->state == HUB_EV_DONE && ev->file)
        job_log(a->ctx, "downloaded %s", ev->file);
    else if (ev->state == HUB_EV_ERROR && ev->message)
        job_log(a->ctx, "download: %s%s%s", ev->file ? ev->file : "", ev->file ? ": " : "", ev->message);
}

static int load_job(job_ctx *ctx, void *argp) {
    load_arg *a = argp;
    a->ctx = ctx;
    job_progress(ctx, 0, 1, "resolving");
    hub_callbacks cb = {.on_event = download_event, .user = a, .cancel = &a->cancel};
    char *local = NULL;
    int rc = hub_resolve_model(a->path, &local, &cb);
    free(a->path);
    free(a);
    if (rc != 0) return -1;
    job_progress(ctx, 0, 1, "loading");
    model *m = gf_calloc(1, sizeof *m);
    rc = model_load(m, local, NULL);
    free(local);
    if (rc != 0) {
        free(m);
        return -1;
    }
    job_progress(ctx, 1, 1, "loaded");
    job_set_result(ctx, m);
    return 0;
}

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

static void show_teacher(app_state *st, const model *m) {
    const model_config *c = &m->cfg;
    snprintf(st->teacher, sizeof st->teacher, "%s", m->name);
    snprintf(st->shape, sizeof st->shape, "%d layers · %d heads (%d KV) · d %d", c->n_layers, c->n_heads,
             c->n_kv_heads, c->dim);
    char buf[10][160];
    snprintf(buf[0], sizeof buf[0], "path        %s", m->path);
    snprintf(buf[1], sizeof buf[1], "format      %s (%s weights)", model_source_name(c->source), m->weights_dtype);
    snprintf(buf[2], sizeof buf[2], "arch        %s", model_arch_name(c->arch));
    snprintf(buf[3], sizeof buf[3], "layers      %d", c->n_layers);
    snprintf(buf[4], sizeof buf[4], "hidden      %d (MLP %d)", c->dim, c->hidden_dim);
    snprintf(buf[5], sizeof buf[5], "heads       %d query, %d key/value, head_dim %d", c->n_heads, c->n_kv_heads,
             c->head_dim);
    snprintf(buf[6], sizeof buf[6], "vocab       %d   context %d", c->vocab_size, c->max_seq);
    snprintf(buf[7], sizeof buf[7], "rope        theta %g, %s pairs", c->rope_theta,
             c->rope_pairing == ROPE_ADJACENT ? "adjacent" : "half-split");
    snprintf(buf[8], sizeof buf[8], "parameters  %zu", model_param_count(c));
    snprintf(buf[9], sizeof buf[9], "tokenizer   %s", m->tok ? tokenizer_kind(m->tok) : "none found");
    const char *lines[10];
    for (int i = 0; i < 10; i++) lines[i] = buf[i];
    app_state_set_teacher_lines(st, lines, 10);
    app_state_set_shape(st, c->n_layers, c->n_heads);
}

static int start_load(workbench *wb, job_runner *jr) {
    load_arg *a = gf_calloc(1, sizeof *a);
    a->path = gf_strdup(wb->model_arg);
    if (job_start(jr, "load", load_job, a) != 0) {
        free(a->path);
        free(a);
        return -1;
    }
    return 0;
}

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
    case SCREEN_TEACHER: return start_load(wb, jr);
    case SCREEN_STATS: return start_stats(wb, st, jr);
    case SCREEN_PLAN: return plan_start_select(wb, st, jr);
    case SCREEN_RESULTS: return results_start_evaluate(wb, st, jr);
    case SCREEN_RESULTS | APP_RUN_ALT: return results_start_ablate(wb, st, jr);
    default: return gf_fail("this screen has no job in this build yet");
    }
}

static job_runner *the_runner; /* on_done has no runner argument; one workbench per process */

static void on_done(app_state *st, const char *job_name, void *result) {
    workbench *wb = st->user;
    if (!strcmp(job_name, "load")) {
        if (wb->m) {
            model_free(wb->m);
            free(wb->m);
        }
        wb->m = result;
        show_teacher(st, wb->m);
        plan_show_model(st, wb->m);
        app_state_log(st, "loaded %s", wb->m->path);
        /* statistics follow at once when a corpus is known */
        if (wb->corpus && the_runner && start_stats(wb, st, the_runner) != 0)
            app_state_log(st, "stats: %s", gf_last_error());
        return;
    }
    free(result);
}

int workbench_attach(workbench *wb, app_state *st, job_runner *jr, const char *model_arg, const char *corpus) {
    memset(wb, 0, sizeof *wb);
    wb->stats_ctx = 256;
    wb->stats_seqs = 4;
    if (model_arg) {
        wb->model_arg = gf_strdup(model_arg);
    } else {
        wb->model_arg = default_teacher_path();
        if (!wb->model_arg) return -1;
    }
    wb->corpus = corpus ? gf_strdup(corpus) : default_text_path();
    st->run = run_screen;
    st->on_done = on_done;
    st->user = wb;
    the_runner = jr;
    snprintf(st->teacher, sizeof st->teacher, "%s (loading)", wb->model_arg);
    return start_load(wb, jr);
}

void workbench_free(workbench *wb) {
    if (wb->m) {
        model_free(wb->m);
        free(wb->m);
    }
    free(wb->model_arg);
    free(wb->corpus);
    memset(wb, 0, sizeof *wb);
}
