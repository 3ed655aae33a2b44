#include "calibrate/stage1.h"

#include <math.h>
#include <omp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "gdn/gdn_layer.h"

/* Rows of the output-gate pass between two looks at the cancel flag: on
 * SmolLM2-135M one row is about 0.3 M multiply-adds, so 64 rows take a few ms. */
#define CANCEL_EVERY_ROWS 64

static int cancelled(void) { return gf_fail("cancelled"); }

static double softplus_inv(double y) { return y + log(-expm1(-y)); }
static double logit(double p) { return log(p / (1.0 - p)); }
static double silu(double x) { return x / (1.0 + exp(-x)); }

static double clampd(double x, double lo, double hi) { return x < lo ? lo : x > hi ? hi : x; }

/* 1. decay; a --half-life override sets target_g = ln 2 / N exactly (no clamp) */
static void apply_decay(const student_settings *set, int H, gdn_params *p, stage1_result *r) {
    for (int h = 0; h < H; h++) {
        const double over = set->half_life;
        r->decay_dist[h] = over > 0 ? over : set->distance == DECAY_DISTANCE_NO_SINK ? r->dist_nosink[h] : r->dist[h];
        r->target_g[h] = over > 0 ? log(2.0) / over : clampd(log(2.0) / r->decay_dist[h], 1e-3, 5.0);
        r->dt_bias[h] = softplus_inv(r->target_g[h]);
        p->a_log[h] = 0.0f;
        p->dt_bias[h] = (float)r->dt_bias[h];
    }
}

/* mean over the N calibration rows x [N, D] of row . x_t */
static double mean_logit(const float *row, const float *x, size_t N, int D) {
    double acc = 0;
    for (size_t n = 0; n < N; n++) {
        const float *xr = x + n * D;
        double d = 0;
        for (int i = 0; i < D; i++) d += (double)row[i] * xr[i];
        acc += d;
    }
    return acc / (double)N;
}

/* 2. write gate: row h of Wb rescaled towards logit(beta*_h) */
static void apply_write_gate(const student_settings *set, int H, int D, const float *x, size_t N, gdn_params *p,
                             stage1_result *r) {
    for (int h = 0; h < H; h++) {
        float *row = p->wb + (size_t)h * D;
        r->beta_star[h] = 0.3 + 0.4 * r->conc[h];
        const double want = logit(r->beta_star[h]);
        const double cur = set->write_gate == WRITE_GATE_MEAN_LOGIT ? mean_logit(row, x, N, D) : 0;
        if (set->write_gate == WRITE_GATE_MEAN_LOGIT && fabs(cur) >= 1e-8) {
            const double f = want / cur;
            for (int i = 0; i < D; i++) row[i] = (float)(row[i] * f);
        } else {
            if (set->write_gate == WRITE_GATE_MEAN_LOGIT) r->mean_logit_fallback++;
            double ma = 0;
            for (int i = 0; i < D; i++) ma += fabs((double)row[i]);
            ma /= D;
            if (ma > 0) {
                const double f = want / sqrt((double)D) / ma;
                for (int i = 0; i < D; i++) row[i] = (float)(row[i] * f);
            }
        }
    }
}

/* 3. value scale by least squares against the teacher's head outputs tc [N, H*dv],
 * with the GDN core run on the parameters as they are now (on the student's
 * backend; its core output downloaded); the reference fit runs it with query
 * scale 1, the scaled fit with the forward's scale */
static int apply_value_scale(gf_backend *be, const gdn_config *layer, sigma_fit_mode fit, const teacher_capture *cal,
                             const float *x, const float *tc, gdn_params *p, stage1_result *r) {
    gdn_config fit_cfg = *layer;
    if (fit == SIGMA_FIT_REFERENCE) fit_cfg.scale_mode = GDN_SCALE_NONE;
    const gdn_config *c = &fit_cfg;
    const int D = c->D, H = c->H, dv = c->dv;
    const size_t N = capture_rows(cal);
    float *core = gf_try_malloc(N * (size_t)H * dv * sizeof *core, "stage 1");
    if (!core) return -1;
    if (gdn_layer_run_host(be, c, p, x, cal->n_seqs, cal->T, NULL, core) != 0) {
        free(core);
        return -1;
    }
    for (int h = 0; h < H; h++) {
        double num = 0, den = 0;
        for (size_t n = 0; n < N; n++) {
            const float *o = core + (n * H + h) * (size_t)dv;
            const float *t = tc + (n * H + h) * (size_t)dv;
            for (int j = 0; j < dv; j++) {
                num += (double)t[j] * o[j];
                den += (double)o[j] * o[j];
            }
        }
        r->sigma_raw[h] = den > 0 ? num / den : 1.0;
        r->sigma_star[h] = clampd(r->sigma_raw[h], 0.1, 10.0);
        const float f = (float)r->sigma_star[h];
        for (size_t i = 0; i < (size_t)dv * D; i++) p->wv[(size_t)h * dv * D + i] *= f;
        if (p->bv)
            for (int j = 0; j < dv; j++) p->bv[h * dv + j] *= f;
    }
    free(core);
    return 0;
}

/* 3'. the gated value scale (set.sigma_fit gated), after the output gate:
 * sigma*_h = sum(tc_h . n_h) / sum(n_h . n_h), clamped to [0.1, 10], with
 * n_h = RMSNorm(o_h) * w_norm * silu(Wg x)_h what Wo reads of head h (o with the
 * forward's query scale); Wg's rows for head h multiplied by sigma*_h. silu is
 * near linear at the damped gate's size, so the head's output scales by about sigma*_h. */
static int apply_gated_value_scale(gf_backend *be, const gdn_config *c, const float *x, const float *tc,
                                   size_t N, int B, int T, gdn_params *p, stage1_result *r,
                                   const progress_sink *progress) {
    const int D = c->D, H = c->H, dv = c->dv, HV = H * dv;
    float *core = gf_try_malloc(N * (size_t)HV * sizeof *core, "stage 1");
    if (!core) return -1;
    if (gdn_layer_run_host(be, c, p, x, B, T, NULL, core) != 0) {
        free(core);
        return -1;
    }
    const int nt = be_is_host(be) ? be_threads(be) : omp_get_max_threads();
    double *num = calloc((size_t)H, sizeof *num), *den = calloc((size_t)H, sizeof *den);
    if (!num || !den) {
        free(core), free(num), free(den);
        return gf_fail("stage 1: out of memory");
    }
    for (size_t n0 = 0; n0 < N; n0 += CANCEL_EVERY_ROWS) {
        if (progress_cancelled(progress)) {
            free(core), free(num), free(den);
            return cancelled();
        }
        const long n1 = (long)(n0 + CANCEL_EVERY_ROWS < N ? n0 + CANCEL_EVERY_ROWS : N);
        for (int h = 0; h < H; h++) {
            double nu = 0, de = 0;
#pragma omp parallel for schedule(static) reduction(+ : nu, de) num_threads(nt > 0 ? nt : 1)
            for (long n = (long)n0; n < n1; n++) {
                const float *xr = x + (size_t)n * D;
                const float *o = core + ((size_t)n * H + h) * dv;
                const float *t = tc + ((size_t)n * H + h) * dv;
                double ss = 0;
                for (int j = 0; j < dv; j++) ss += (double)o[j] * o[j];
                const double inv = 1.0 / sqrt(ss / dv + c->norm_eps);
                for (int j = 0; j < dv; j++) {
                    const float *w = p->wg + ((size_t)h * dv + j) * D;
                    double z = 0;
                    for (int i = 0; i < D; i++) z += (double)w[i] * xr[i];
                    const double y = o[j] * inv * p->w_norm[j] * silu(z);
                    nu += (double)t[j] * y;
                    de += y * y;
                }
            }
            num[h] += nu, den[h] += de;
        }
    }
    for (int h = 0; h < H; h++) {
        r->sigma_raw[h] = den[h] > 0 ? num[h] / den[h] : 1.0;
        r->sigma_star[h] = clampd(r->sigma_raw[h], 0.1, 10.0);
        const float f = (float)r->sigma_star[h];
        for (size_t i = 0; i < (size_t)dv * D; i++) p->wg[(size_t)h * dv * D + i] *= f;
    }
    free(core), free(num), free(den);
    return 0;
}

/* 4. output gate: Wg <- alpha* Wv (Wv as the value scale left it); the
 * longest part of Stage 1 (N x H*dv x D in double), so it looks at the cancel
 * flag every CANCEL_EVERY_ROWS rows and leaves p untouched when cancelled */
static int apply_output_gate(gf_backend *be, const student_settings *set, const gdn_config *c, const float *x,
                             size_t N, gdn_params *p, stage1_result *r, const progress_sink *progress) {
    const int D = c->D, HV = c->H * c->dv;
    /* the CPU backend's worker threads; beside a device the host's cores (at
     * 1.5B one layer is N x 2.4 M multiply-adds in double) */
    const int nt = be_is_host(be) ? be_threads(be) : omp_get_max_threads();
    double ss = 0;
    for (size_t n0 = 0; n0 < N; n0 += CANCEL_EVERY_ROWS) {
        if (progress_cancelled(progress)) return cancelled();
        const long n1 = (long)(n0 + CANCEL_EVERY_ROWS < N ? n0 + CANCEL_EVERY_ROWS : N);
        double part = 0;
#pragma omp parallel for schedule(static) reduction(+ : part) num_threads(nt > 0 ? nt : 1)
        for (long n = (long)n0; n < n1; n++) {
            const float *xr = x + (size_t)n * D;
            for (int o = 0; o < HV; o++) {
                const float *w = p->wv + (size_t)o * D;
                double d = p->bv ? p->bv[o] : 0.0;
                for (int i = 0; i < D; i++) d += (double)w[i] * xr[i];
                const double v = silu(d);
                part += v * v;
            }
        }
        ss += part;
    }
    const double rms_v = sqrt(ss / ((double)N * HV));
    r->rms_v = rms_v;
    r->alpha_star = rms_v > 0 ? set->damping * r->rms_tc / rms_v : 0.0;
    for (size_t i = 0; i < (size_t)HV * D; i++) p->wg[i] = (float)(r->alpha_star * p->wv[i]);
    return 0;
}

int stage1_apply(const student *s, int l, gdn_params *p, const teacher_capture *cal, stage1_result *r,
                 const progress_sink *progress) {
    const gdn_config *c = &s->gcfg;
    const int D = c->D, H = c->H, dv = c->dv;
    const size_t N = capture_rows(cal);
    if (!cal->heads) return gf_fail("stage 1 needs the teacher's per-head outputs");
    const float *x = capture_xn(cal, l);     /* [N, D] */
    const float *tc = capture_heads(cal, l); /* [N, H*dv] */
    const unsigned parts = s->set.stage1 & STAGE1_ALL;
    r->parts = parts;

    /* teacher statistics */
    for (int h = 0; h < H; h++) {
        r->dist[h] = attn_stats_mean_distance(&cal->stats, l, h);
        r->dist_nosink[h] = attn_stats_mean_distance_nosink(&cal->stats, l, h);
        r->sink[h] = attn_stats_sink_share(&cal->stats, l, h);
        r->entropy[h] = attn_stats_entropy(&cal->stats, l, h);
        r->conc[h] = attn_stats_concentration(&cal->stats, l, h);
        double acc = 0;
        for (size_t n = 0; n < N; n++) {
            const float *t = tc + n * (size_t)H * dv + (size_t)h * dv;
            double ss = 0;
            for (int j = 0; j < dv; j++) ss += (double)t[j] * t[j];
            acc += sqrt(ss / dv);
        }
        r->tc_rms[h] = acc / (double)N;
    }
    /* RMS(tc): the mean over (sequence, token, head) of each head vector's RMS */
    double rms_tc = 0;
    for (int h = 0; h < H; h++) rms_tc += r->tc_rms[h];
    r->rms_tc = rms_tc / H;

    /* the values of a component not applied stay NaN */
    for (int h = 0; h < H; h++)
        r->decay_dist[h] = r->target_g[h] = r->dt_bias[h] = r->beta_star[h] = r->sigma_raw[h] = r->sigma_star[h] = NAN;
    r->alpha_star = r->rms_v = NAN;
    r->mean_logit_fallback = 0;

    /* the cancel flag between components and inside the output gate (a cancel leaves p part-way) */
    if (parts & STAGE1_DECAY) apply_decay(&s->set, H, p, r);
    if (parts & STAGE1_BETA) apply_write_gate(&s->set, H, D, x, N, p, r);
    for (int h = 0; h < H; h++) r->wb_logit[h] = mean_logit(p->wb + (size_t)h * D, x, N, D);
    if (progress_cancelled(progress)) return cancelled();
    const bool gated = s->set.sigma_fit == SIGMA_FIT_GATED;
    if ((parts & STAGE1_SIGMA) && !gated && apply_value_scale(s->m->be, c, s->set.sigma_fit, cal, x, tc, p, r) != 0)
        return -1;
    if (progress_cancelled(progress)) return cancelled();
    if ((parts & STAGE1_GATE) && apply_output_gate(s->m->be, &s->set, c, x, N, p, r, progress) != 0) return -1;
    /* the gated fit reads the gate it scales, so it runs last */
    if ((parts & STAGE1_SIGMA) && gated &&
        apply_gated_value_scale(s->m->be, c, x, tc, N, cal->n_seqs, cal->T, p, r, progress) != 0)
        return -1;
    return 0;
}
