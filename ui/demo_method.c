/* Demo data for Calibrate and Align (graft tui --demo): Stage 1 numbers
 * derived from the demo teacher's statistics with METHOD.md's formulas for
 * the first converted layers, Stage 2 curves for every converted layer. */
#include <math.h>
#include <stdio.h>

#include "demo.h"
#include "student/student.h"

static double softplus_inv(double y) { return y > 20 ? y : log(expm1(y)); }

void demo_fill_method(teacher_state *ts) {
    const int L = ts->n_layers, H = ts->n_heads;
    const int t = teacher_init_index(ts, "teacher");
    const double *d = teacher_metric(ts, t, MET_MEAN_DIST), *ent = teacher_metric(ts, t, MET_ENTROPY),
                 *conc = teacher_metric(ts, t, MET_CONCENTRATION);
    if (!d || L > 1024) return;
    bool conv[1024];
    teacher_converted(ts, conv);
    int n_cal = 0;
    for (int l = 0; l < L; l++) {
        if (!conv[l]) continue;
        if (n_cal < 5) { /* the first five converted layers calibrated, the rest pending */
            calib_layer *c = method_calib(&ts->method, L, H, l);
            for (int h = 0; h < H; h++) {
                const size_t i = (size_t)l * H + h;
                const double dh = d[i] < 0.5 ? 0.5 : d[i], cc = conc[i];
                double g = log(2.0) / dh;
                g = g < 1e-3 ? 1e-3 : g > 5 ? 5 : g;
                const double beta = 0.3 + 0.4 * cc, raw = 0.4 + 0.5 * h + 0.05 * l;
                c->v[CAL_DIST][h] = dh;
                c->v[CAL_ENTROPY][h] = ent[i];
                c->v[CAL_CONC][h] = cc;
                c->v[CAL_BETA][h] = beta;
                c->v[CAL_LOGIT][h] = log(beta / (1 - beta));
                c->v[CAL_WB_LOGIT][h] = 0.9 * log(beta / (1 - beta));
                c->v[CAL_SIGMA_RAW][h] = raw;
                c->v[CAL_SIGMA][h] = raw < 0.1 ? 0.1 : raw > 10 ? 10 : raw;
                c->v[CAL_TARGET_G][h] = g;
                c->v[CAL_DT_BIAS][h] = softplus_inv(g);
                c->v[CAL_HALFLIFE][h] = log(2.0) / g;
                c->v[CAL_DECAY_DIST][h] = dh;
                c->v[CAL_DIST_NOSINK][h] = teacher_metric(ts, t, MET_DIST_NOSINK)[i];
                c->v[CAL_SINK][h] = teacher_metric(ts, t, MET_SINK)[i];
            }
            c->alpha_star = 0.0012 + 0.0001 * l;
            c->parts = STAGE1_ALL;
            c->done = true;
        }
        n_cal++;
        for (int k = 0; k <= 60; k++) {
            const double base = 0.02 * (1 + l / 10.0);
            method_align_point(&ts->method, L, l, k * 5, base * (0.4 + 0.6 * exp(-k / 12.0)),
                               base * (0.5 + 0.6 * exp(-k / 14.0)));
        }
        align_layer *a = method_align(&ts->method, L, l);
        const double v[AL_COUNT] = {
            [AL_STEPS] = 300, [AL_BEST_STEP] = 300, [AL_BEST_LOSS] = a->loss[a->n - 1],
            [AL_BEST_HELDOUT] = a->held[a->n - 1], [AL_WB_BEFORE] = 0.0105, [AL_WB_AFTER] = 0.0105 * (1.2 + 0.05 * l),
            [AL_WG_BEFORE] = 1.1e-4, [AL_WG_AFTER] = 1.1e-4 * (60 + l), [AL_HL_MEAN_BEFORE] = 12 + l,
            [AL_HL_MEDIAN_BEFORE] = 8 + l, [AL_HL_MEAN_AFTER] = 13 + l, [AL_HL_MEDIAN_AFTER] = 8.5 + l, [AL_DONE] = 1,
        };
        for (int f = 0; f < AL_COUNT; f++) a->v[f] = v[f];
    }
    snprintf(ts->method.align_ran, sizeof ts->method.align_ran, "taylor-calibrate");
    snprintf(ts->method.align_outcome, sizeof ts->method.align_outcome, "done");
    snprintf(ts->method.calib_outcome, sizeof ts->method.calib_outcome, "done");
}
