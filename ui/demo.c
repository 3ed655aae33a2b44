#include "demo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/error.h"
#include "ui.h"

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
    out[MET_HALFLIFE_IDLE] = d * (0.5 + noise(seed));
    out[MET_HALFLIFE_DATA] = out[MET_HALFLIFE_IDLE] * (0.5 + 0.4 * noise(seed));
    out[MET_BETA] = 0.1 + 0.8 * noise(seed);
    out[MET_SIGMA] = 0.5 + 1.5 * noise(seed);
    out[MET_ALIGN_LOSS] = 0.01 + 0.1 * noise(seed) * (1 + depth);
}

void demo_fill(app_state *st, int n_layers, int n_heads) {
    snprintf(st->teacher, sizeof st->teacher, "demo/Synthetic-%dL @main", n_layers);
    snprintf(st->shape, sizeof st->shape, "%d layers, %d heads (2 KV)", n_layers, n_heads);
    snprintf(st->device, sizeof st->device, "cpu 2 threads");
    const char *lines[] = {"synthetic statistics (graft tui --demo): no model is loaded",
                           "hidden 1536, intermediate 8960, vocab 151936, rope theta 1e6",
                           "tied embeddings, bf16 weights, 1.54 B parameters"};
    app_state_set_teacher_lines(st, lines, 3);
    snprintf(st->strategy, sizeof st->strategy, "uniform");
    st->keep_ratio = 0.5;
    snprintf(st->corpus, sizeof st->corpus, "tinystories-valid.txt");
    app_state_set_shape(st, n_layers, n_heads);
    int t = app_state_init_index(st, "teacher");
    int r = app_state_init_index(st, "random");
    int c = app_state_init_index(st, "taylor-calibrate");
    unsigned long long seed = 42;
    bool *kept = gf_calloc((size_t)n_layers, sizeof *kept);
    st->layer_score = gf_calloc((size_t)n_layers, sizeof *st->layer_score);
    for (int L = 0; L < n_layers; L++) {
        kept[L] = L % 2 == 0;
        st->layer_score[L] = 0.2 + 0.8 * noise(&seed);
        for (int H = 0; H < n_heads; H++) {
            double v[MET_COUNT];
            synth_head(L, H, n_layers, &seed, v);
            size_t i = (size_t)L * n_heads + H;
            for (int m = MET_MEAN_DIST; m <= MET_OUT_RMS; m++) app_state_metric(st, t, (head_metric)m)[i] = v[m];
            for (int m = MET_HALFLIFE_IDLE; m < MET_COUNT; m++) app_state_metric(st, c, (head_metric)m)[i] = v[m];
            /* a random init: half-lives unrelated to the teacher's distances */
            app_state_metric(st, r, MET_HALFLIFE_IDLE)[i] = exp(10 * noise(&seed));
            app_state_metric(st, r, MET_HALFLIFE_DATA)[i] = exp(8 * noise(&seed));
        }
    }
    app_state_set_kept(st, kept);
    free(kept);
    for (int s = 0; s < 2; s++)
        for (int k = 0; k <= 60; k++) {
            double x = k * 8000.0, base = s ? 0.9 : 0.75;
            app_state_add_point(st, s ? "race/random" : "race/taylor-calibrate", x, 0.1 + base * exp(-k / (s ? 18.0 : 10.0)));
        }
    const char *hdr[] = {"strategy", "keep", "init", "ppl", "KL/token", "tokens"};
    app_state_set_result_header(st, hdr, 6);
    const char *r1[] = {"uniform", "50%", "random", "21.4", "0.142", "400k"};
    const char *r2[] = {"uniform", "50%", "taylor-calibrate", "18.9", "0.109", "328k"};
    app_state_add_result(st, r1, 6);
    app_state_add_result(st, r2, 6);
    demo_fill_method(st);
    app_state_log(st, "demo: synthetic data for %d layers x %d heads", n_layers, n_heads);
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
            job_stat(ctx, "mean_dist", L, H, v[MET_MEAN_DIST]);
            job_stat(ctx, "entropy", L, H, v[MET_ENTROPY]);
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
        job_loss(ctx, "calib", k, 0.05 + 0.4 * exp(-k / 30.0));
        job_loss(ctx, "held-out", k, 0.06 + 0.4 * exp(-k / 33.0));
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

int demo_run(app_state *st, job_runner *jr, int screen) {
    shape_arg = (demo_shape){st->n_layers, st->n_heads};
    if (job_running(jr)) return job_start(jr, "busy", demo_count_job, NULL); /* sets the refusal message */
    if (screen == SCR_STATS) {
        int t = app_state_init_index(st, "teacher");
        for (int m = MET_MEAN_DIST; m <= MET_ENTROPY; m++) {
            double *mat = app_state_metric(st, t, (head_metric)m);
            for (int i = 0; mat && i < st->n_layers * st->n_heads; i++) mat[i] = NAN;
        }
        return job_start(jr, "stats", demo_stats_job, &shape_arg);
    }
    if (screen == SCR_ALIGN || screen == SCR_RECOVER) {
        for (int i = 0; i < st->n_series; i++) st->series[i].n = 0;
        return job_start(jr, "align", demo_loss_job, NULL);
    }
    return job_start(jr, "count", demo_count_job, NULL);
}
