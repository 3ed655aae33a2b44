#include "demo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/error.h"
#include "workbench/wb_event.h"

/* Deterministic noise in [0,1) (a 64-bit LCG), so demo screens are reproducible. */
static double noise(unsigned long long *s) {
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*s >> 11) / 9007199254740992.0;
}

/* One head's synthetic numbers: early layers local, later layers spread out. */
static void synth_head(int L, int H, int n_layers, unsigned long long *seed, double out[MET_COUNT]) {
    double depth = (double)L / (n_layers > 1 ? n_layers - 1 : 1);
    double logd = 0.3 + 5.5 * depth * noise(seed) + (H % 4 == 0 ? 1.0 : 0.0);
    double d = exp(logd);
    out[MET_MEAN_DIST] = d;
    out[MET_ENTROPY] = 0.3 + 0.8 * logd * (0.7 + 0.3 * noise(seed));
    out[MET_CONCENTRATION] = 1.0 / (1.0 + out[MET_ENTROPY]);
    out[MET_OUT_RMS] = 0.2 + 1.5 * noise(seed);
    out[MET_SINK] = (H % 3 == 0 ? 0.5 : 0.1) * (0.5 + noise(seed)); /* a few heads lean on the first token */
    out[MET_DIST_NOSINK] = 0.5 + d * (1 - out[MET_SINK]) * (0.6 + 0.3 * noise(seed));
    out[MET_HALFLIFE_IDLE] = d * (0.5 + noise(seed));
    out[MET_HALFLIFE_DATA] = out[MET_HALFLIFE_IDLE] * (0.5 + 0.4 * noise(seed));
    out[MET_BETA] = 0.1 + 0.8 * noise(seed);
    out[MET_SIGMA] = 0.5 + 1.5 * noise(seed);
    out[MET_ALIGN_LOSS] = 0.01 + 0.1 * noise(seed) * (1 + depth);
}

static void demo_row(teacher_state *t, const char *init, double ppl, double hl) {
    result_row r;
    result_row_init(&r);
    r.kind = RUN_EVALUATE;
    snprintf(r.teacher, sizeof r.teacher, "%s", t->name);
    snprintf(r.strategy, sizeof r.strategy, "uniform");
    r.keep = 0.5;
    snprintf(r.init, sizeof r.init, "%s", init);
    r.stage2_steps = strcmp(init, "random") ? 300 : 0;
    snprintf(r.corpus, sizeof r.corpus, "tinystories-valid.txt");
    r.eval_windows = 32;
    r.ctx = 256;
    r.ppl = ppl;
    r.hl_mean = hl, r.hl_med = hl / 2, r.hl_max = hl * 8;
    snprintf(r.kept, sizeof r.kept, "0,2,4,6,8,10,12,14,16,18,20,22,24,26");
    if (!strncmp(init, "taylor", 6)) result_set_stage1(&r, &t->stage1);
    teacher_add_result(t, &r);
}

void demo_fill(app_state *st, int n_layers, int n_heads) {
    char key[64];
    snprintf(key, sizeof key, "demo/Synthetic-%dL", n_layers);
    teacher_state *t = app_teacher(st, key);
    app_switch(st, t);
    snprintf(t->name, sizeof t->name, "demo/Synthetic-%dL @main", n_layers);
    snprintf(t->arg, sizeof t->arg, "%s", key);
    snprintf(t->model_arg, sizeof t->model_arg, "%s", key);
    t->loaded = true;
    snprintf(t->shape, sizeof t->shape, "%d layers · %d heads (2 KV)", n_layers, n_heads);
    const char *lines[] = {"synthetic statistics (graft tui --demo): no model is loaded",
                           "hidden 1536, intermediate 8960, vocab 151936, rope theta 1e6",
                           "tied embeddings, bf16 weights, 1.54 B parameters"};
    teacher_state_set_lines(t, lines, 3);
    snprintf(st->corpus, sizeof st->corpus, "tinystories-valid.txt");
    teacher_state_set_shape(t, n_layers, n_heads);
    snprintf(t->strategy, sizeof t->strategy, "uniform");
    t->keep_ratio = 0.5;
    t->kv_heads = 2, t->head_dim = 128, t->kv_bytes = 2;
    int te = teacher_init_index(t, "teacher");
    int r = teacher_init_index(t, "random");
    int c = teacher_init_index(t, "taylor-calibrate");
    unsigned long long seed = 42;
    bool *kept = gf_calloc((size_t)n_layers, sizeof *kept);
    for (int L = 0; L < n_layers; L++) {
        kept[L] = L % 2 == 0;
        for (int H = 0; H < n_heads; H++) {
            double v[MET_COUNT];
            synth_head(L, H, n_layers, &seed, v);
            size_t i = (size_t)L * n_heads + H;
            for (int m = MET_MEAN_DIST; m < MET_HALFLIFE_IDLE; m++) teacher_metric(t, te, (head_metric)m)[i] = v[m];
            for (int m = MET_HALFLIFE_IDLE; m <= MET_ALIGN_LOSS; m++) teacher_metric(t, c, (head_metric)m)[i] = v[m];
            /* a random init: half-lives unrelated to the teacher's distances */
            teacher_metric(t, r, MET_HALFLIFE_IDLE)[i] = exp(10 * noise(&seed));
            teacher_metric(t, r, MET_HALFLIFE_DATA)[i] = exp(8 * noise(&seed));
        }
    }
    teacher_set_kept(t, kept);
    free(kept);
    snprintf(t->stats_corpus, sizeof t->stats_corpus, "%s", st->corpus);
    for (int s = 0; s < 2; s++)
        for (int k = 0; k <= 60; k++) {
            double x = k * 8000.0, base = s ? 0.9 : 0.75;
            teacher_add_point(t, s ? "race/random" : "race/taylor-calibrate", x, 0.1 + base * exp(-k / (s ? 18.0 : 10.0)));
        }
    t->teacher_ppl = 17.2;
    snprintf(t->ppl_corpus, sizeof t->ppl_corpus, "%s", st->corpus);
    t->ppl_windows = 32, t->ppl_ctx = 256;
    demo_row(t, "random", 21.4, 131.9);
    demo_row(t, "taylor-calibrate", 18.9, 70.0);
    demo_fill_method(t);
    app_log(st, LOG_INFO, "demo: synthetic data for %d layers x %d heads", n_layers, n_heads);
}

static void nap_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

typedef struct {
    int n_layers, n_heads;
} demo_shape;

static demo_shape shape_arg; /* one demo job at a time: the runner refuses a second */

static int demo_stats_job(job_ctx *ctx, void *arg) {
    demo_shape *s = arg;
    unsigned long long seed = 7;
    job_log(ctx, "computing statistics on %d layers (synthetic)", s->n_layers);
    for (int L = 0; L < s->n_layers; L++) {
        if (job_cancelled(ctx)) return gf_fail("cancelled at layer %d", L);
        for (int H = 0; H < s->n_heads; H++) {
            double v[MET_COUNT];
            synth_head(L, H, s->n_layers, &seed, v);
            wb_emit_head(ctx, "teacher", MET_MEAN_DIST, L, H, v[MET_MEAN_DIST]);
            wb_emit_head(ctx, "teacher", MET_ENTROPY, L, H, v[MET_ENTROPY]);
        }
        job_progress(ctx, L + 1, s->n_layers, "layers");
        nap_ms(120);
    }
    return 0;
}

static int demo_loss_job(job_ctx *ctx, void *arg) {
    (void)arg;
    for (int k = 0; k < 200; k++) {
        if (job_cancelled(ctx)) return gf_fail("cancelled at step %d", k);
        wb_event e = {.kind = WB_RACE_POINT};
        snprintf(e.u.race_point.init, sizeof e.u.race_point.init, "demo");
        e.u.race_point.tokens = k;
        e.u.race_point.loss = 0.05 + 0.4 * exp(-k / 30.0);
        wb_emit(ctx, &e);
        job_progress(ctx, k + 1, 200, "steps");
        nap_ms(40);
    }
    return 0;
}

static int demo_count_job(job_ctx *ctx, void *arg) {
    (void)arg;
    for (int k = 0; k < 100; k++) {
        if (job_cancelled(ctx)) return gf_fail("cancelled");
        job_progress(ctx, k + 1, 100, "steps");
        nap_ms(50);
    }
    job_log(ctx, "counted to 100");
    return 0;
}

int demo_run(app_state *st, job_runner *jr, wb_action a) {
    teacher_state *t = app_cur(st);
    if (!t) return gf_fail("no demo teacher");
    shape_arg = (demo_shape){t->n_layers, t->n_heads};
    if (job_running(jr)) return job_start(jr, "busy", demo_count_job, NULL); /* sets the refusal message */
    if (a == ACT_STATS) {
        int te = teacher_init_index(t, "teacher");
        for (int m = MET_MEAN_DIST; m <= MET_ENTROPY; m++) {
            double *mat = teacher_metric(t, te, (head_metric)m);
            for (int i = 0; mat && i < t->n_layers * t->n_heads; i++) mat[i] = NAN;
        }
        return app_start_job(st, jr, "stats", demo_stats_job, &shape_arg, t);
    }
    if (a == ACT_ALIGN || a == ACT_RACE) {
        teacher_clear_series(t, "race/");
        return app_start_job(st, jr, "align", demo_loss_job, NULL, t);
    }
    return app_start_job(st, jr, "count", demo_count_job, NULL, t);
}
