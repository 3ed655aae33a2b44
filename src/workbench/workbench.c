#include "workbench/workbench.h"

#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "data/text_tokens.h"
#include "hub/default_teacher.h"
#include "model/model.h"
#include "stats/collect.h"
#include "workbench/calib_jobs.h"
#include "workbench/generate_jobs.h"
#include "workbench/halflife_jobs.h"
#include "workbench/import_runs.h"
#include "workbench/recall_jobs.h"
#include "workbench/job_cost.h"
#include "workbench/meter.h"
#include "workbench/plan_jobs.h"
#include "workbench/recover_jobs.h"
#include "workbench/teacher_jobs.h"
#include "workbench/wb_event.h"

/* ---- every job: the settings' thread count, applied on the worker, on the teacher's backend ---- */

typedef struct {
    job_fn fn;
    void *arg;
    int threads;
    gf_backend *be; /* the loaded teacher's (NULL for a load: it opens its own) */
} wb_job;

static int wb_job_main(job_ctx *ctx, void *p) {
    wb_job j = *(wb_job *)p;
    free(p);
    /* OpenMP's thread count is per thread: set it on the worker that runs the engine */
    int n = j.threads > 0 ? j.threads : omp_get_num_procs();
    omp_set_num_threads(n);
    openblas_set_num_threads(n);
    if (j.be) {
        be_set_threads(j.be, n); /* no other job runs: the backend is this one's */
        size_t f, t;
        /* the device's memory in the log; on CUDA this also makes the GPU current on this thread */
        if (!be_is_host(j.be) && be_mem_info(j.be, &f, &t) == 0)
            job_log(ctx, "on %s: %.1f of %.1f GB in use", be_name(j.be), (double)(t - f) / 1e9, (double)t / 1e9);
        else gf_clear_error();
    }
    return j.fn(ctx, j.arg);
}

void wb_device_of(const gf_backend *be, char *buf, size_t n) {
    snprintf(buf, n, "%s", be ? be_name(be) : "cpu");
    buf[strcspn(buf, " ")] = 0;
}

int wb_start(app_state *st, job_runner *jr, const char *name, job_fn fn, void *arg, teacher_state *owner) {
    workbench *wb = st->user;
    gf_backend *be = strcmp(name, "load") && wb ? wb->be : NULL;
    wb_job *j = gf_calloc(1, sizeof *j);
    *j = (wb_job){fn, arg, st->settings.threads, be};
    if (app_start_job(st, jr, name, wb_job_main, j, owner) != 0) {
        free(j);
        return -1;
    }
    /* every job's log line names where it runs (j is the worker's now: it may be freed already) */
    char dev[32];
    if (be) wb_device_of(be, dev, sizeof dev);
    else snprintf(dev, sizeof dev, "%s", settings_device_name(&st->settings));
    app_log(st, LOG_INFO, "%s: runs on %s", name, dev);
    return 0;
}

teacher_state *wb_ready(workbench *wb, app_state *st) {
    teacher_state *t = app_cur(st);
    if (!wb->m) {
        gf_fail("no teacher loaded yet%s", st->opening[0] ? " (it is opening)" : "");
        return NULL;
    }
    if (!t || !wb->m_key || strcmp(t->key, wb->m_key)) {
        gf_fail("the teacher shown (%s) is not the one loaded: open it on 1 Teacher", t ? t->name : "none");
        return NULL;
    }
    char dev[32];
    wb_device_of(wb->be, dev, sizeof dev);
    if (strcmp(dev, settings_device_name(&st->settings))) { /* never silently on another device */
        gf_fail("%s is loaded on %s but Settings say %s: reload it there (Enter on 1 Teacher)", t->name, dev,
                settings_device_name(&st->settings));
        return NULL;
    }
    return t;
}

/* ---- statistics (worker thread: reads its argument, never app_state) ---- */

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
    const job_phase phases[] = {
        {"tokenize", cost_tokenize(m, a->corpus)},
        {"stats", cost_forward(m, (double)a->seqs * a->ctx, a->ctx)},
    };
    job_set_phases(ctx, phases, 2);
    progress_sink sink = job_sink(ctx);
    if (!m->tok) {
        gf_fail("the teacher has no tokenizer");
        goto done;
    }
    job_progress(ctx, 0, 1, "tokenize");
    if (text_file_tokens(m->tok, a->corpus, false, &ids) != 0) goto done;
    if (job_cancelled(ctx)) {
        gf_fail("cancelled");
        goto done;
    }
    if (cut_sequences(ids.data, ids.len, 0, tokenizer_bos(m->tok), a->ctx, a->seqs, &cut, &n_seqs) != 0) {
        gf_fail_prefix(a->corpus);
        goto done;
    }
    job_begin_phase(ctx, "stats");
    job_log(ctx, "statistics over %d x %d tokens of %s", n_seqs, a->ctx, a->corpus);
    if (collect_attn_stats(m, cut.data, n_seqs, a->ctx, &st, &sink) != 0) goto done;
    for (int l = 0; l < m->cfg.n_layers; l++)
        for (int h = 0; h < m->cfg.n_heads; h++) {
            wb_emit_head(ctx, "teacher", MET_MEAN_DIST, l, h, attn_stats_mean_distance(&st, l, h));
            wb_emit_head(ctx, "teacher", MET_ENTROPY, l, h, attn_stats_entropy(&st, l, h));
            wb_emit_head(ctx, "teacher", MET_CONCENTRATION, l, h, attn_stats_concentration(&st, l, h));
            wb_emit_head(ctx, "teacher", MET_OUT_RMS, l, h, attn_stats_output_rms(&st, l, h));
            wb_emit_head(ctx, "teacher", MET_DIST_NOSINK, l, h, attn_stats_mean_distance_nosink(&st, l, h));
            wb_emit_head(ctx, "teacher", MET_SINK, l, h, attn_stats_sink_share(&st, l, h));
        }
    wb_event e = {.kind = WB_STATS_DONE};
    snprintf(e.u.stats_done.corpus, sizeof e.u.stats_done.corpus, "%s", a->corpus);
    wb_emit(ctx, &e);
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
    teacher_state *t = wb_ready(wb, st);
    if (!t) return -1;
    if (!wb->corpus) return gf_fail("no corpus: start graft with --text FILE or set GRAFT_TEXT");
    if (!wb->m->tok) return gf_fail("%s has no tokenizer: its statistics need one to read the corpus", t->name);
    stats_arg *a = gf_calloc(1, sizeof *a);
    a->m = wb->m;
    a->corpus = gf_strdup(wb->corpus);
    a->ctx = wb->stats_ctx;
    a->seqs = wb->stats_seqs;
    if (wb_start(st, jr, "stats", stats_job, a, t) != 0) {
        free(a->corpus);
        free(a);
        return -1;
    }
    return 0;
}

static int run_action(app_state *st, job_runner *jr, wb_action act) {
    workbench *wb = st->user;
    switch (act) {
    case ACT_LOAD: {
        teacher_state *t = app_cur(st);
        return teacher_start_load(wb, st, jr, t && t->arg[0] ? t->arg : wb->model_arg);
    }
    case ACT_STATS: return start_stats(wb, st, jr);
    case ACT_SELECT: return plan_start_select(wb, st, jr);
    case ACT_EVALUATE: return results_start_evaluate(wb, st, jr);
    case ACT_ABLATE: return results_start_ablate(wb, st, jr);
    case ACT_CALIBRATE: return calib_start(wb, st, jr, false);
    case ACT_CALIBRATE_ONE: return calib_start(wb, st, jr, true);
    case ACT_ALIGN: return align_start(wb, st, jr);
    case ACT_RACE: return recover_start_race(wb, st, jr);
    case ACT_GENERATE: return results_start_generate(wb, st, jr);
    case ACT_RECALL: return results_start_recall(wb, st, jr);
    case ACT_HALFLIFE: return stats_start_halflife(wb, st, jr);
    case ACT_HALFLIFE_FIX: return calib_start_halflife_fix(wb, st, jr);
    case ACT_COUNT: break;
    }
    return gf_fail("this screen has no job");
}

static job_runner *the_runner; /* on_end has no runner argument; one workbench per process */

/* After a load: statistics follow at once when the teacher has none for this corpus. */
static void after_load(workbench *wb, app_state *st) {
    teacher_state *t = app_cur(st);
    if (!t || !wb->corpus || !the_runner) return;
    if (t->stats_source[0]) { /* imported statistics stand until Enter on 3 Stats computes them here */
        app_log(st, LOG_INFO, "stats: %s has them from %s (Enter on 3 Stats computes them on %s)", t->name,
                t->stats_source, wb->corpus);
        return;
    }
    if (!strcmp(t->stats_corpus, wb->corpus)) {
        app_log(st, LOG_INFO, "stats: %s has them already for %s (Enter on 3 Stats recomputes)", t->name, wb->corpus);
        return;
    }
    if (start_stats(wb, st, the_runner) != 0) app_log(st, LOG_WARN, "stats: %s", gf_last_error());
}

static void load_failed(workbench *wb, app_state *st, const job_record *job, const event *ev) {
    snprintf(st->teacher_error, sizeof st->teacher_error, "opening %.200s: %.250s", st->opening, ev->text);
    app_clear_download(st);
    bool startup = job->id == wb->startup_load;
    char tried[512];
    snprintf(tried, sizeof tried, "%s", st->opening);
    st->opening[0] = 0;
    if (!startup || !wb->default_arg || !strcmp(tried, wb->default_arg) || !the_runner) return;
    /* the session's teacher cannot be opened (offline, token gone, file moved): the default one can */
    snprintf(st->fallback_note, sizeof st->fallback_note, "opened the default teacher instead: could not open %.200s (%.200s)",
             tried, ev->text);
    app_log(st, LOG_WARN, "%s", st->fallback_note);
    snprintf(st->notice, sizeof st->notice, "%s", st->fallback_note);
    wb->startup_load = 0;
    app_switch(st, NULL);
    if (teacher_start_load(wb, st, the_runner, wb->default_arg) != 0)
        app_log(st, LOG_ERROR, "load: %s", gf_last_error());
}

static void on_end(app_state *st, const job_record *job, const event *ev) {
    workbench *wb = st->user;
    if (!strcmp(job->name, "load")) {
        if (ev->kind == EV_DONE) {
            calib_cache_free(wb->calib); /* it captured the previous teacher */
            wb->calib = NULL;
            teacher_loaded(wb, st, ev->result);
            wb->startup_load = 0;
            after_load(wb, st);
        } else {
            load_failed(wb, st, job, ev);
        }
        return;
    }
    if (!strcmp(job->name, "generate")) results_generate_done(st, job->owner, ev);
    if (!strcmp(job->name, "halflife-fix")) {
        calib_halflife_fix_done(st, job->owner, ev); /* takes the result */
        return;
    }
    if (!strcmp(job->name, "halflife")) {
        stats_halflife_done(st, job->owner, ev); /* takes the result */
        return;
    }
    if (!strcmp(job->name, "recall")) {
        results_recall_done(st, job->owner, ev); /* takes the result */
        return;
    }
    if (!strcmp(job->name, "race") && ev->kind == EV_DONE) {
        recover_race_done(st, job->owner, ev->result);
        return;
    }
    if (ev->kind == EV_DONE) free(ev->result);
}

int workbench_attach(workbench *wb, app_state *st, job_runner *jr, const char *model_arg, const char *corpus,
                     const workbench_opts *opts) {
    memset(wb, 0, sizeof *wb);
    wb->stats_ctx = 256;
    wb->stats_seqs = 4;
    wb->seed = opts ? opts->seed : 1;
    wb->plan_keep = opts ? opts->keep : NAN;
    if (opts && opts->strategy) snprintf(wb->plan_strategy, sizeof wb->plan_strategy, "%s", opts->strategy);
    if (opts && opts->tokenizer && model_arg) {
        wb->tokenizer = gf_strdup(opts->tokenizer);
        wb->tokenizer_for = gf_strdup(model_arg);
    }
    wb->default_arg = default_teacher_path();
    if (!wb->default_arg) return -1;
    const char *env = getenv("GRAFT_TEACHER");
    const teacher_state *cur = app_cur(st);
    /* imported runs of a teacher whose file is not here are shown, never loaded */
    const teacher_state *resume = cur && !import_teacher_elsewhere(st, cur->arg) ? cur : NULL;
    int recent = 0;
    while (recent < st->n_recent && import_teacher_elsewhere(st, st->recent[recent].arg)) recent++;
    if (model_arg) wb->model_arg = gf_strdup(model_arg);
    else if (!(env && *env) && resume && resume->arg[0]) wb->model_arg = gf_strdup(resume->arg); /* the session's teacher */
    else if (!(env && *env) && recent < st->n_recent) wb->model_arg = gf_strdup(st->recent[recent].arg);
    else wb->model_arg = gf_strdup(wb->default_arg);
    if (!isnan(wb->plan_keep) || wb->plan_strategy[0]) wb->plan_for = gf_strdup(wb->model_arg);
    /* what the session showed belongs to another teacher: show nothing until this one loads */
    if (cur && strcmp(cur->arg, wb->model_arg)) app_switch(st, NULL);
    wb->corpus = corpus ? gf_strdup(corpus) : default_text_path();
    if (wb->corpus) {
        snprintf(st->corpus, sizeof st->corpus, "%s", wb->corpus);
        for (int i = 0; i < st->n_teachers; i++) teacher_forget_corpus(st->teachers[i], wb->corpus);
    }
    st->run = run_action;
    st->on_end = on_end;
    st->open_teacher = teacher_open;
    st->user = wb;
    the_runner = jr;
    if (teacher_start_load(wb, st, jr, wb->model_arg) != 0) return -1;
    wb->startup_load = job_current_id(jr);
    return 0;
}

void workbench_free(workbench *wb) {
    calib_cache_free(wb->calib);
    meter_set_gpu_query(NULL);
    if (wb->m) {
        model_free(wb->m);
        free(wb->m);
    }
    be_close(wb->be);
    free(wb->m_key);
    free(wb->model_arg);
    free(wb->tokenizer);
    free(wb->tokenizer_for);
    free(wb->plan_for);
    free(wb->corpus);
    free(wb->default_arg);
    memset(wb, 0, sizeof *wb);
}

void wb_request_init(request *r, req_kind k, const char *teacher_path, long seed, const gf_backend *be, char *dev) {
    request_init(r, k);
    r->pos[0] = teacher_path;
    r->n_pos = 1;
    r->co.seed = seed;
    wb_device_of(be, dev, 16);
    r->co.device = dev;
}
