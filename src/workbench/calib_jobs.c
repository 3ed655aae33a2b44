#include "workbench/calib_jobs.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate/capture.h"
#include "cli/method_opts.h"
#include "core/error.h"
#include "student/build.h"
#include "student/calib_split.h"

/* Owned by the workbench; touched only by the running job (one at a time) or
 * by the UI thread while no job runs. */
struct calib_cache {
    const model *m;
    char *corpus;
    bool captured;
    token_split sp;
    teacher_capture cal, held;
    bool have_student;
    student s1; /* taylor-only: the layers calibrated so far */
};

void calib_cache_free(calib_cache *c) {
    if (!c) return;
    teacher_capture_free(&c->cal);
    teacher_capture_free(&c->held);
    token_split_free(&c->sp);
    if (c->have_student) student_free(&c->s1);
    free(c->corpus);
    free(c);
}

int align_steps_setting(void) {
    const char *e = getenv("GRAFT_ALIGN_STEPS");
    if (e && *e) {
        char *end;
        long v = strtol(e, &end, 10);
        if (*end == 0 && v >= 0 && v <= 100000) return (int)v;
    }
    return 300;
}

/* ---- progress and cancellation bridge (any thread) ---- */

typedef struct {
    job_ctx *ctx;
    atomic_int cancel;
    atomic_long steps_done;
    long steps_total;
} bridge;

static void bridge_report(void *ud, const char *what, double done, double total) {
    bridge *b = ud;
    if (job_cancelled(b->ctx)) atomic_store(&b->cancel, 1);
    if (strcmp(what, "align") != 0) job_progress(b->ctx, done, total, what); /* align: from on_step */
}

static progress_sink bridge_sink(bridge *b, job_ctx *ctx) {
    b->ctx = ctx;
    atomic_store(&b->cancel, 0);
    atomic_store(&b->steps_done, 0);
    return (progress_sink){.report = bridge_report, .ud = b, .cancel = &b->cancel};
}

/* Teacher capture of the calibration slice, made once per teacher and corpus. */
static int ensure_capture(calib_cache *c, job_ctx *ctx, const progress_sink *pr) {
    if (c->captured) return 0;
    if (!c->m->tok) return gf_fail("the teacher has no tokenizer");
    split_spec spec;
    split_spec_default(&spec);
    job_progress(ctx, 0, 1, "capture");
    if (token_split_make(&c->sp, c->m->tok, c->corpus, NULL, &spec) != 0) return -1;
    job_log(ctx, "capturing the teacher on %d x %d calibration tokens (+%d held-out sequences) of %s", c->sp.n_calib,
            spec.ctx, c->sp.n_heldout, c->corpus);
    if (method_capture(c->m, &c->sp, &c->cal, &c->held, pr) != 0) {
        token_split_free(&c->sp);
        return -1;
    }
    c->captured = true;
    return 0;
}

static void publish_half_lives(job_ctx *ctx, const char *init, int l, const double *hl, int H) {
    char label[64];
    snprintf(label, sizeof label, "%s/halflife_idle", init);
    for (int h = 0; h < H; h++) job_stat(ctx, label, l, h, hl[h]);
}

/* The random (section 3 default) init's idle half-lives of layer l. */
static void publish_random_half_lives(job_ctx *ctx, const student *s, int l) {
    gdn_params p;
    gdn_params_alloc(&p, &s->gcfg);
    student_default_init(s, l, &p);
    double *hl = gf_malloc((size_t)s->gcfg.H * sizeof *hl);
    gdn_half_lives(&s->gcfg, &p, hl);
    publish_half_lives(ctx, "random", l, hl, s->gcfg.H);
    free(hl);
    gdn_params_free(&p);
}

static void publish_stage1(job_ctx *ctx, const char *init, const layer_report *r, int H) {
    const stage1_result *a = &r->s1;
    const int l = r->layer;
    char b[64], sg[64];
    snprintf(b, sizeof b, "%s/beta", init);
    snprintf(sg, sizeof sg, "%s/sigma", init);
    for (int h = 0; h < H; h++) {
        job_stat(ctx, b, l, h, a->beta_star[h]);
        job_stat(ctx, sg, l, h, a->sigma_star[h]);
    }
}

/* ---- calibrate: Stage 1, layer by layer ---- */

typedef struct {
    calib_cache *c;
    bool *layers; /* [L] */
} calib_arg;

static int calib_job(job_ctx *ctx, void *argp) {
    calib_arg *a = argp;
    calib_cache *c = a->c;
    const int L = c->m->cfg.n_layers;
    bridge br;
    progress_sink pr = bridge_sink(&br, ctx);
    int rc = -1, n = 0, done = 0;
    bool *one = gf_calloc((size_t)L, sizeof *one);
    for (int l = 0; l < L; l++) n += a->layers[l];
    if (ensure_capture(c, ctx, &pr) != 0) goto out;
    if (!c->have_student) {
        student_settings set;
        student_settings_default(&set);
        set.init = INIT_TAYLOR_ONLY;
        if (student_init_empty(&c->s1, (model *)c->m, &set) != 0) goto out;
        c->have_student = true;
    }
    const int H = c->s1.gcfg.H;
    for (int l = 0; l < L; l++) {
        if (!a->layers[l]) continue;
        if (job_cancelled(ctx)) {
            gf_fail("cancelled");
            goto out;
        }
        job_progress(ctx, done, n, "stage 1");
        memset(one, 0, (size_t)L * sizeof *one);
        one[l] = true;
        if (student_build_layers(&c->s1, one, &c->cal, c->held.L ? &c->held : NULL, NULL) != 0) goto out;
        const layer_report *r = &c->s1.rep[l];
        const stage1_result *s = &r->s1;
        for (int h = 0; h < H; h++) {
            const double b = s->beta_star[h];
            const double v[CAL_COUNT] = {
                [CAL_DIST] = s->dist[h], [CAL_ENTROPY] = s->entropy[h], [CAL_CONC] = s->conc[h],
                [CAL_BETA] = b, [CAL_LOGIT] = log(b / (1 - b)), [CAL_WB_LOGIT] = s->wb_logit[h],
                [CAL_SIGMA_RAW] = s->sigma_raw[h], [CAL_SIGMA] = s->sigma_star[h],
                [CAL_TARGET_G] = s->target_g[h], [CAL_DT_BIAS] = s->dt_bias[h], [CAL_HALFLIFE] = r->half_life[h],
            };
            char label[64];
            for (int f = 0; f < CAL_COUNT; f++) {
                snprintf(label, sizeof label, "calib:%s", calib_field_key((calib_field)f));
                job_stat(ctx, label, l, h, v[f]);
            }
        }
        job_stat(ctx, "calib:alpha", l, -1, s->alpha_star);
        publish_stage1(ctx, "taylor-only", r, H);
        publish_half_lives(ctx, "taylor-only", l, r->half_life, H);
        publish_random_half_lives(ctx, &c->s1, l);
        job_stat(ctx, "calib:done", l, -1, 1);
        job_log(ctx, "layer %d calibrated: alpha* %.4g", l, s->alpha_star);
        job_progress(ctx, ++done, n, "stage 1");
    }
    rc = 0;
out:
    free(one);
    free(a->layers);
    free(a);
    return rc;
}

/* ---- align: Stage 2 on the converted layers ---- */

typedef struct {
    calib_cache *c;
    bool *layers;
    student_init init;
    int steps;
    bridge br;
    long total;
} align_arg;

/* On the OpenMP thread training `layer`: job_loss / job_progress push into the
 * runner's mutex-guarded queue, so this is safe from several threads. */
static void on_step(void *ud, int layer, int step, double loss, double heldout) {
    align_arg *a = ud;
    char label[64];
    snprintf(label, sizeof label, "align/%d/calib", layer);
    job_loss(a->br.ctx, label, step, loss);
    if (!isnan(heldout)) {
        snprintf(label, sizeof label, "align/%d/held-out", layer);
        job_loss(a->br.ctx, label, step, heldout);
    }
    long done = atomic_fetch_add(&a->br.steps_done, 1) + 1;
    if (done % 8 == 0 || done == a->total) job_progress(a->br.ctx, (double)done, (double)a->total, "align");
    if (job_cancelled(a->br.ctx)) atomic_store(&a->br.cancel, 1); /* every layer stops at its next step */
}

static void half_life_summary(const double *hl, int H, double *mean, double *median) {
    double s = 0;
    for (int h = 0; h < H; h++) s += hl[h];
    *mean = s / H;
    *median = median_of(hl, H);
}

static int align_job(job_ctx *ctx, void *argp) {
    align_arg *a = argp;
    calib_cache *c = a->c;
    const int L = c->m->cfg.n_layers;
    progress_sink pr = bridge_sink(&a->br, ctx);
    student s = {0};
    bool have = false;
    int rc = -1, n = 0;
    for (int l = 0; l < L; l++) n += a->layers[l];
    a->total = (long)n * (a->steps + 1);
    if (ensure_capture(c, ctx, &pr) != 0) goto out;
    student_settings set;
    student_settings_default(&set);
    set.init = a->init;
    set.steps = a->steps;
    if (student_init_empty(&s, (model *)c->m, &set) != 0) goto out;
    have = true;
    const char *name = student_init_name(a->init);
    job_log(ctx, "stage 2 (%s): %d layers, %d steps each", name, n, a->steps);
    for (int l = 0; l < L; l++)
        if (a->layers[l]) job_stat(ctx, "align:steps", l, -1, a->steps);
    stage2_observer obs = {on_step, a};
    if (student_build_layers_observed(&s, a->layers, &c->cal, c->held.L ? &c->held : NULL, &pr, &obs) != 0) goto out;
    const int H = s.gcfg.H;
    for (int l = 0; l < L; l++) {
        if (!a->layers[l]) continue;
        const layer_report *r = &s.rep[l];
        double v[AL_COUNT];
        v[AL_STEPS] = r->s2.steps;
        v[AL_BEST_STEP] = r->s2.best_step;
        v[AL_BEST_LOSS] = r->s2.best_loss;
        v[AL_BEST_HELDOUT] = r->s2.best_heldout;
        v[AL_WB_BEFORE] = r->wb_mean_abs_pre2;
        v[AL_WB_AFTER] = r->wb_mean_abs;
        v[AL_WG_BEFORE] = r->wg_mean_abs_pre2;
        v[AL_WG_AFTER] = r->wg_mean_abs;
        half_life_summary(r->half_life_pre2, H, &v[AL_HL_MEAN_BEFORE], &v[AL_HL_MEDIAN_BEFORE]);
        half_life_summary(r->half_life, H, &v[AL_HL_MEAN_AFTER], &v[AL_HL_MEDIAN_AFTER]);
        v[AL_DONE] = 1;
        char label[64];
        for (int f = 0; f < AL_COUNT; f++) {
            snprintf(label, sizeof label, "align:%s", align_field_key((align_field)f));
            job_stat(ctx, label, l, -1, v[f]);
        }
        publish_half_lives(ctx, name, l, r->half_life, H);
        if (r->has_stage1) publish_stage1(ctx, name, r, H);
        job_log(ctx, "layer %d aligned: loss %.5g -> %.5g (best step %d of %d)", l, r->s2.loss[0], r->s2.best_loss,
                r->s2.best_step, r->s2.steps);
    }
    rc = 0;
out:
    if (have) student_free(&s);
    free(a->layers);
    free(a);
    return rc;
}

/* ---- front end (UI thread) ---- */

static int prepare(calib_cache **cache, const model *m, const char *corpus) {
    if (!m) return gf_fail("no teacher loaded yet");
    if (!corpus) return gf_fail("no corpus: start graft with --text FILE or set GRAFT_TEXT");
    calib_cache *c = *cache;
    if (c && (c->m != m || strcmp(c->corpus, corpus) != 0)) {
        calib_cache_free(c);
        c = *cache = NULL;
    }
    if (!c) {
        c = *cache = gf_calloc(1, sizeof *c);
        c->m = m;
        c->corpus = gf_strdup(corpus);
    }
    return 0;
}

int calib_start(calib_cache **cache, const model *m, const char *corpus, app_state *st, job_runner *jr) {
    const int mode = st->method.run_arg;
    st->method.run_arg = CALIB_RUN_ALL;
    if (prepare(cache, m, corpus) != 0) return -1;
    const int L = st->n_layers;
    if (L != m->cfg.n_layers) return gf_fail("the teacher's shape is not shown yet");
    bool *todo = gf_calloc((size_t)L, sizeof *todo);
    app_state_converted(st, todo);
    int n = 0;
    for (int l = 0; l < L; l++) {
        calib_layer *cl = st->method.calib ? &st->method.calib[l] : NULL;
        if (cl && cl->done) todo[l] = false;
        if (todo[l] && mode == CALIB_RUN_ONE && n > 0) todo[l] = false;
        n += todo[l];
    }
    if (n == 0) {
        free(todo);
        return gf_fail("every converted layer is calibrated already");
    }
    calib_arg *a = gf_calloc(1, sizeof *a);
    a->c = *cache;
    a->layers = todo;
    if (job_start(jr, "calibrate", calib_job, a) != 0) {
        free(todo);
        free(a);
        return -1;
    }
    snprintf(st->method.calib_outcome, sizeof st->method.calib_outcome, "running");
    return 0;
}

int align_start(calib_cache **cache, const model *m, const char *corpus, app_state *st, job_runner *jr) {
    if (prepare(cache, m, corpus) != 0) return -1;
    const int L = st->n_layers;
    if (L != m->cfg.n_layers) return gf_fail("the teacher's shape is not shown yet");
    student_init init;
    if (student_init_parse(st->method.align_init, &init) != 0) return -1;
    if (!init_uses_stage2(init)) return gf_fail("%s has no Stage 2", st->method.align_init);
    align_arg *a = gf_calloc(1, sizeof *a);
    a->c = *cache;
    a->layers = gf_calloc((size_t)L, sizeof *a->layers);
    app_state_converted(st, a->layers);
    a->init = init;
    a->steps = align_steps_setting();
    if (job_start(jr, "align", align_job, a) != 0) {
        free(a->layers);
        free(a);
        return -1;
    }
    method_align_reset(&st->method, L);
    snprintf(st->method.align_ran, sizeof st->method.align_ran, "%s", st->method.align_init);
    snprintf(st->method.align_outcome, sizeof st->method.align_outcome, "running");
    return 0;
}
