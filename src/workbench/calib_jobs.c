#include "workbench/calib_jobs.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate/capture.h"
#include "method/build_layers.h"
#include "method/method_opts.h"
#include "core/error.h"
#include "student/calib_split.h"
#include "workbench/build_progress.h"
#include "workbench/job_cost.h"
#include "workbench/plan_jobs.h"
#include "workbench/wb_event.h"
#include "workbench/workbench.h"
#include "student/student.h"

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
    stage1_choice s1_choice; /* the Stage 1 options s1 was made with */
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

/* Teacher capture of the calibration slice, made once per teacher and corpus. */
static int ensure_capture(calib_cache *c, job_ctx *ctx, const progress_sink *pr) {
    if (c->captured) return 0;
    if (!c->m->tok) return gf_fail("the teacher has no tokenizer");
    split_spec spec;
    split_spec_default(&spec);
    job_progress(ctx, 0, 1, "tokenize");
    job_log(ctx, "capturing the teacher on %d x %d calibration tokens (+%d held-out sequences) of %s", spec.n_calib,
            spec.ctx, spec.n_heldout, c->corpus);
    const method_hooks h = {.progress = *pr};
    if (method_capture_corpus(c->m, c->corpus, &spec, &c->sp, &c->cal, &c->held, &h) != 0) return -1;
    c->captured = true;
    return 0;
}

static void publish_half_lives(job_ctx *ctx, const char *init, int l, const double *hl, int H) {
    for (int h = 0; h < H; h++) wb_emit_head(ctx, init, MET_HALFLIFE_IDLE, l, h, hl[h]);
}

/* The random (section 3 default) init's idle half-lives of layer l. */
static void publish_random_half_lives(job_ctx *ctx, const student *s, int l) {
    gdn_params p;
    gdn_params_alloc(&p, &s->gcfg);
    student_default_init(s, l, &p);
    double *hl = gf_malloc((size_t)s->gcfg.H * sizeof *hl);
    gdn_half_lives(&s->gcfg, &p, hl);
    publish_half_lives(ctx, student_init_name(INIT_RANDOM), l, hl, s->gcfg.H);
    free(hl);
    gdn_params_free(&p);
}

/* beta* and sigma* of the components that ran (the others have none) */
static void publish_stage1(job_ctx *ctx, const char *init, const layer_report *r, int H) {
    for (int h = 0; h < H; h++) {
        if (r->s1.parts & STAGE1_BETA) wb_emit_head(ctx, init, MET_BETA, r->layer, h, r->s1.beta_star[h]);
        if (r->s1.parts & STAGE1_SIGMA) wb_emit_head(ctx, init, MET_SIGMA, r->layer, h, r->s1.sigma_star[h]);
    }
}

/* ---- calibrate: Stage 1, layer by layer ---- */

typedef struct {
    calib_cache *c;
    bool *layers; /* [L] */
    stage1_choice s1;
    long seed; /* graft tui --seed */
} calib_arg;

static void capture_phases(job_ctx *ctx, const calib_cache *c, job_phase *ph, int *n) {
    split_spec spec;
    split_spec_default(&spec);
    ph[(*n)++] = (job_phase){"tokenize", c->captured ? 0 : cost_tokenize(c->m, c->corpus)};
    ph[(*n)++] = (job_phase){"teacher pass", c->captured ? 0
                             : cost_forward(c->m, (double)(spec.n_calib + spec.n_heldout) * spec.ctx, spec.ctx)};
    (void)ctx;
}

static int calib_job(job_ctx *ctx, void *argp) {
    calib_arg *a = argp;
    calib_cache *c = a->c;
    const int L = c->m->cfg.n_layers;
    progress_sink pr = job_sink(ctx);
    int rc = -1, n = 0, done = 0;
    bool *one = gf_calloc((size_t)L, sizeof *one);
    for (int l = 0; l < L; l++) n += a->layers[l];
    job_phase ph[4];
    int np = 0;
    capture_phases(ctx, c, ph, &np);
    ph[np++] = (job_phase){"stage 1", n * cost_stage1_layer(c->m)};
    job_set_phases(ctx, ph, np);
    if (ensure_capture(c, ctx, &pr) != 0) goto out;
    if (c->have_student && !stage1_choice_same(&c->s1_choice, &a->s1)) { /* other options: another student */
        student_free(&c->s1);
        c->have_student = false;
    }
    if (!c->have_student) {
        student_settings set;
        if (plan_student_settings(INIT_TAYLOR_ONLY, 0, 0, &a->s1, a->seed, &set) != 0) goto out;
        if (student_init_empty(&c->s1, (model *)c->m, &set) != 0) goto out;
        c->have_student = true;
        c->s1_choice = a->s1;
    }
    const int H = c->s1.gcfg.H;
    progress_sink cancel_only = {.report = NULL, .ud = NULL, .cancel = job_cancel_flag(ctx)};
    for (int l = 0; l < L; l++) {
        if (!a->layers[l]) continue;
        if (job_cancelled(ctx)) {
            gf_fail("cancelled");
            goto out;
        }
        job_progress(ctx, done, n, "stage 1");
        memset(one, 0, (size_t)L * sizeof *one);
        one[l] = true;
        const method_hooks h = {.progress = cancel_only};
        if (method_build_layers(&c->s1, one, &c->cal, &c->held, &h) != 0) goto out;
        const layer_report *r = &c->s1.rep[l];
        const stage1_result *s = &r->s1;
        const attn_stats *ts = &c->cal.stats;
        for (int h = 0; h < H; h++) {
            wb_event e = {.kind = WB_CALIB_HEAD};
            e.u.calib_head.layer = l;
            e.u.calib_head.head = h;
            double *v = e.u.calib_head.v;
            for (int f = 0; f < CAL_COUNT; f++) v[f] = NAN;
            v[CAL_HALFLIFE] = r->half_life[h];
            /* the teacher statistics; with no component Stage 1 did not run and they come from the capture */
            v[CAL_DIST] = attn_stats_mean_distance(ts, l, h);
            v[CAL_DIST_NOSINK] = attn_stats_mean_distance_nosink(ts, l, h);
            v[CAL_SINK] = attn_stats_sink_share(ts, l, h);
            v[CAL_ENTROPY] = attn_stats_entropy(ts, l, h);
            v[CAL_CONC] = attn_stats_concentration(ts, l, h);
            if (r->has_stage1) { /* a component that did not run left NaN */
                const double b = s->beta_star[h];
                v[CAL_BETA] = b, v[CAL_LOGIT] = log(b / (1 - b)), v[CAL_WB_LOGIT] = s->wb_logit[h];
                v[CAL_SIGMA_RAW] = s->sigma_raw[h], v[CAL_SIGMA] = s->sigma_star[h];
                v[CAL_TARGET_G] = s->target_g[h], v[CAL_DT_BIAS] = s->dt_bias[h], v[CAL_DECAY_DIST] = s->decay_dist[h];
            }
            wb_emit(ctx, &e);
        }
        if (r->has_stage1) publish_stage1(ctx, student_init_name(INIT_TAYLOR_ONLY), r, H);
        publish_half_lives(ctx, student_init_name(INIT_TAYLOR_ONLY), l, r->half_life, H);
        publish_random_half_lives(ctx, &c->s1, l);
        wb_event e = {.kind = WB_CALIB_LAYER};
        e.u.calib_layer.layer = l;
        e.u.calib_layer.alpha = r->has_stage1 ? s->alpha_star : NAN;
        e.u.calib_layer.parts = r->has_stage1 ? s->parts : STAGE1_NONE;
        wb_emit(ctx, &e);
        job_log(ctx, "layer %d calibrated: alpha* %.4g", l, e.u.calib_layer.alpha);
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
    int steps, keep_best_heldout;
    stage1_choice s1;
    long seed; /* graft tui --seed */
} align_arg;

/* Every step's losses, on the OpenMP thread training `layer` (the event queue is mutex-guarded). */
static void align_step(build_progress *b, int layer, int step, double loss, double heldout) {
    wb_event e = {.kind = WB_ALIGN_STEP};
    e.u.align_step.layer = layer;
    e.u.align_step.step = step;
    e.u.align_step.loss = loss;
    e.u.align_step.heldout = heldout;
    wb_emit(b->ctx, &e);
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
    progress_sink pr = job_sink(ctx);
    student s = {0};
    bool have = false;
    int rc = -1, n = 0;
    for (int l = 0; l < L; l++) n += a->layers[l];
    split_spec spec;
    split_spec_default(&spec);
    job_phase ph[4];
    int np = 0;
    capture_phases(ctx, c, ph, &np);
    ph[np++] = (job_phase){"stage 1", init_uses_stage1(a->init) ? n * cost_stage1_layer(c->m) : 0};
    ph[np++] = (job_phase){"align", n * cost_stage2_layer(c->m, a->steps, spec.n_calib + spec.n_heldout, spec.ctx)};
    job_set_phases(ctx, ph, np);
    if (ensure_capture(c, ctx, &pr) != 0) goto out;
    student_settings set;
    if (plan_student_settings(a->init, a->steps, a->keep_best_heldout, &a->s1, a->seed, &set) != 0) goto out;
    if (student_init_empty(&s, (model *)c->m, &set) != 0) goto out;
    have = true;
    const char *name = student_init_name(a->init);
    char s1[64] = "";
    if (init_uses_stage1(a->init)) {
        char label[40];
        stage1_choice_label(&a->s1, label, sizeof label);
        snprintf(s1, sizeof s1, ", stage1 %s", label);
    }
    job_log(ctx, "stage 2 (%s%s): %d layers, %d steps each", name, s1, n, a->steps);
    for (int l = 0; l < L; l++) {
        if (!a->layers[l]) continue;
        wb_event e = {.kind = WB_ALIGN_BEGIN};
        e.u.align_begin.layer = l;
        e.u.align_begin.steps = a->steps;
        wb_emit(ctx, &e);
    }
    build_progress bp;
    build_progress_init(&bp, ctx, n, a->steps);
    bp.on_step = align_step;
    progress_sink bs = build_progress_sink(&bp);
    stage2_observer obs = build_progress_observer(&bp);
    const method_hooks h = {.progress = pr, .build = &bs, .obs = &obs};
    if (method_build_layers(&s, a->layers, &c->cal, &c->held, &h) != 0) goto out;
    const int H = s.gcfg.H;
    for (int l = 0; l < L; l++) {
        if (!a->layers[l]) continue;
        const layer_report *r = &s.rep[l];
        wb_event e = {.kind = WB_ALIGN_LAYER};
        double *v = e.u.align_layer.v;
        e.u.align_layer.layer = l;
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
        wb_emit(ctx, &e);
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

static int prepare(workbench *wb) {
    if (!wb->corpus) return gf_fail("no corpus: start graft with --text FILE or set GRAFT_TEXT");
    if (!wb->m->tok) return gf_fail("the teacher has no tokenizer: Stage 1 reads the corpus with it");
    calib_cache *c = wb->calib;
    if (c && (c->m != wb->m || strcmp(c->corpus, wb->corpus) != 0)) {
        calib_cache_free(c);
        c = wb->calib = NULL;
    }
    if (!c) {
        c = wb->calib = gf_calloc(1, sizeof *c);
        c->m = wb->m;
        c->corpus = gf_strdup(wb->corpus);
    }
    return 0;
}

int calib_start(workbench *wb, app_state *st, job_runner *jr, bool one_layer) {
    teacher_state *t = wb_ready(wb, st);
    if (!t || prepare(wb) != 0) return -1;
    const int L = t->n_layers;
    /* other Stage 1 options than the numbers shown: every converted layer again */
    const bool rerun = !stage1_choice_same(&t->stage1, &t->method.calib_s1);
    bool *todo = gf_calloc((size_t)L, sizeof *todo);
    teacher_converted(t, todo);
    int n = 0;
    for (int l = 0; l < L; l++) {
        calib_layer *cl = t->method.calib && !rerun ? &t->method.calib[l] : NULL;
        if (cl && cl->done) todo[l] = false;
        if (todo[l] && one_layer && n > 0) todo[l] = false;
        n += todo[l];
    }
    if (n == 0) {
        free(todo);
        return gf_fail("every converted layer of %s is calibrated already", t->name);
    }
    calib_arg *a = gf_calloc(1, sizeof *a);
    a->c = wb->calib;
    a->layers = todo;
    a->s1 = t->stage1;
    a->seed = wb->seed;
    if (wb_start(st, jr, "calibrate", calib_job, a, t) != 0) {
        free(todo);
        free(a);
        return -1;
    }
    if (rerun) { /* the numbers of the other options go: none is shown under the new ones */
        method_calib_reset(&t->method, L, t->n_heads);
        teacher_drop_init_metrics(t, student_init_name(INIT_TAYLOR_ONLY));
        t->method.calib_s1 = t->stage1;
    }
    snprintf(t->method.calib_outcome, sizeof t->method.calib_outcome, "running");
    return 0;
}

int align_start(workbench *wb, app_state *st, job_runner *jr) {
    teacher_state *t = wb_ready(wb, st);
    if (!t || prepare(wb) != 0) return -1;
    const int L = t->n_layers;
    student_init init;
    if (student_init_parse(t->method.align_init, &init) != 0) return -1;
    if (!init_uses_stage2(init)) return gf_fail("%s has no Stage 2", t->method.align_init);
    align_arg *a = gf_calloc(1, sizeof *a);
    a->c = wb->calib;
    a->layers = gf_calloc((size_t)L, sizeof *a->layers);
    teacher_converted(t, a->layers);
    a->init = init;
    a->seed = wb->seed;
    a->steps = st->settings.stage2_steps;
    a->keep_best_heldout = st->settings.keep_best_heldout;
    a->s1 = t->stage1;
    if (wb_start(st, jr, "align", align_job, a, t) != 0) {
        free(a->layers);
        free(a);
        return -1;
    }
    method_align_reset(&t->method, L);
    teacher_drop_init_metrics(t, t->method.align_init); /* this run's numbers replace the last run's */
    t->method.align_s1 = t->stage1;
    snprintf(t->method.align_ran, sizeof t->method.align_ran, "%s", t->method.align_init);
    snprintf(t->method.align_outcome, sizeof t->method.align_outcome, "running");
    return 0;
}
