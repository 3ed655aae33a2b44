#include "workbench/method_state.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "student/student.h"

static const char *const calib_keys[CAL_COUNT] = {
    "dist", "entropy", "conc", "beta", "logit", "wb_logit", "sigma_raw", "sigma", "target_g", "dt_bias", "halflife",
    "dist_nosink", "sink", "decay_dist",
};
static const char *const align_keys[AL_COUNT] = {
    "steps", "best_step", "best_loss", "best_heldout", "wb_before", "wb_after", "wg_before", "wg_after",
    "hl_mean_before", "hl_median_before", "hl_mean_after", "hl_median_after", "done",
};

const char *calib_field_key(calib_field f) { return (unsigned)f < CAL_COUNT ? calib_keys[f] : "?"; }
const char *align_field_key(align_field f) { return (unsigned)f < AL_COUNT ? align_keys[f] : "?"; }

void method_state_init(method_state *ms) {
    memset(ms, 0, sizeof *ms);
    snprintf(ms->align_init, sizeof ms->align_init, "%s", student_init_name(INIT_TAYLOR_CALIBRATE));
    stage1_choice_default(&ms->calib_s1);
    stage1_choice_default(&ms->align_s1);
}

static void free_calib(method_state *ms, int n_layers) {
    if (!ms->calib) return;
    for (int l = 0; l < n_layers; l++)
        for (int f = 0; f < CAL_COUNT; f++) free(ms->calib[l].v[f]);
    free(ms->calib);
    ms->calib = NULL;
}

static void free_align(method_state *ms, int n_layers) {
    if (!ms->align) return;
    for (int l = 0; l < n_layers; l++) {
        free(ms->align[l].step);
        free(ms->align[l].loss);
        free(ms->align[l].held);
    }
    free(ms->align);
    ms->align = NULL;
}

void method_state_free(method_state *ms) {
    free_calib(ms, ms->n_layers);
    free_align(ms, ms->n_layers);
}

void method_state_resize(method_state *ms, int n_layers, int n_heads) {
    (void)n_heads;
    method_state_free(ms);
    ms->n_layers = n_layers;
    ms->calib_outcome[0] = ms->align_outcome[0] = ms->align_ran[0] = 0;
}

void method_calib_reset(method_state *ms, int n_layers, int n_heads) {
    (void)n_heads;
    free_calib(ms, n_layers);
    ms->calib_outcome[0] = 0;
}

void method_align_reset(method_state *ms, int n_layers) {
    free_align(ms, n_layers);
    ms->align_outcome[0] = 0;
}

calib_layer *method_calib(method_state *ms, int n_layers, int n_heads, int layer) {
    if (layer < 0 || layer >= n_layers || n_heads <= 0) return NULL;
    ms->n_layers = n_layers;
    if (!ms->calib) ms->calib = gf_calloc((size_t)n_layers, sizeof *ms->calib);
    calib_layer *c = &ms->calib[layer];
    if (!c->v[0]) {
        c->alpha_star = NAN;
        for (int f = 0; f < CAL_COUNT; f++) {
            c->v[f] = gf_malloc((size_t)n_heads * sizeof *c->v[f]);
            for (int h = 0; h < n_heads; h++) c->v[f][h] = NAN;
        }
    }
    return c;
}

align_layer *method_align(method_state *ms, int n_layers, int layer) {
    if (layer < 0 || layer >= n_layers) return NULL;
    ms->n_layers = n_layers;
    if (!ms->align) {
        ms->align = gf_calloc((size_t)n_layers, sizeof *ms->align);
        for (int l = 0; l < n_layers; l++) {
            ms->align[l].last_step = -1;
            for (int f = 0; f < AL_COUNT; f++) ms->align[l].v[f] = NAN;
        }
    }
    return &ms->align[layer];
}

void method_align_point(method_state *ms, int n_layers, int layer, long step, double loss, double heldout) {
    align_layer *a = method_align(ms, n_layers, layer);
    if (!a) return;
    /* one point per step */
    size_t i = a->n;
    if (a->n > 0 && a->step[a->n - 1] == (double)step) i = a->n - 1;
    if (i == a->n) {
        if (a->n == a->cap) {
            a->cap = a->cap ? 2 * a->cap : 64;
            a->step = gf_realloc(a->step, a->cap * sizeof *a->step);
            a->loss = gf_realloc(a->loss, a->cap * sizeof *a->loss);
            a->held = gf_realloc(a->held, a->cap * sizeof *a->held);
        }
        a->step[i] = (double)step;
        a->n++;
    }
    a->loss[i] = loss;
    a->held[i] = heldout;
    if (step > a->last_step) a->last_step = (int)step;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double median_of(const double *v, int n) {
    double *t = gf_malloc((size_t)(n > 0 ? n : 1) * sizeof *t);
    int k = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(v[i])) t[k++] = v[i];
    double m = NAN;
    if (k) {
        qsort(t, (size_t)k, sizeof *t, cmp_double);
        m = k % 2 ? t[k / 2] : 0.5 * (t[k / 2 - 1] + t[k / 2]);
    }
    free(t);
    return m;
}
