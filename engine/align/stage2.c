#include "align/stage2.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/error.h"
#include "optim/adamw.h"

typedef struct {
    size_t off, n; /* into the parameter block */
    double lr;
} trained_tensor;

/* Layout of the block: wq wk wv wg wa wb [bq bk bv] [conv_q conv_k conv_v] a_log dt_bias w_norm wo. */
static int trained_tensors(const gdn_config *c, const gdn_params *p, const student_settings *set,
                           trained_tensor *out) {
    const size_t D = (size_t)c->D, H = (size_t)c->H, qk = H * c->dk, hv = H * c->dv;
    int k = 0;
#define ADD(ptr, count, rate) \
    do { out[k].off = (size_t)((ptr) - p->block); out[k].n = (count); out[k].lr = (rate); k++; } while (0)
    ADD(p->wq, (2 * qk + hv) * D, set->lr_qkv);       /* Wq Wk Wv */
    ADD(p->wg, (hv + 2 * H) * D, set->lr_gates);      /* Wg Wa Wb */
    if (p->bq) ADD(p->bq, 2 * qk + hv, set->lr_qkv);  /* biases */
    if (p->conv_q) ADD(p->conv_q, (2 * qk + hv) * GDN_CONV_K, set->lr_gates);
    ADD(p->a_log, 2 * H, set->lr_gates);              /* A_log dt_bias */
#undef ADD
    return k;
}

static double mse_and_grad(const float *y, const float *t, size_t n, float *dy) {
    double s = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)y[i] - t[i];
        s += d * d;
        if (dy) dy[i] = (float)(2.0 * d / (double)n);
    }
    return s / (double)n;
}

double gdn_layer_mse(const gdn_config *c, const gdn_params *p, const align_set *set) {
    gdn_cache cache;
    gdn_cache_alloc(&cache, c, set->B, set->T);
    size_t n = (size_t)set->B * set->T * c->D;
    float *y = gf_malloc(n * sizeof *y);
    gdn_forward(c, p, &cache, set->x, y);
    double l = mse_and_grad(y, set->target, n, NULL);
    free(y);
    gdn_cache_free(&cache);
    return l;
}

int stage2_align(const student_settings *set, const gdn_config *c, gdn_params *p, const align_set *cal,
                 const align_set *held, stage2_result *r, const progress_sink *progress, const stage2_observer *obs,
                 int layer) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    const int steps = set->steps;
    if (steps < 0) return gf_fail("stage 2 steps must be >= 0, got %d", steps);
    if (held && held->B <= 0) held = NULL;
    r->steps = steps;
    r->loss = gf_calloc((size_t)steps + 1, sizeof(float));
    r->heldout = held ? gf_calloc((size_t)steps + 1, sizeof(float)) : NULL;
    r->best_heldout = NAN;

    gdn_params grad, m, v;
    gdn_params_alloc(&grad, c);
    gdn_params_alloc(&m, c);
    gdn_params_alloc(&v, c);
    float *best = gf_malloc(p->n * sizeof *best);
    memcpy(best, p->block, p->n * sizeof *best);
    trained_tensor tt[8];
    const int ntt = trained_tensors(c, p, set, tt);

    gdn_cache cache, hcache;
    gdn_cache_alloc(&cache, c, cal->B, cal->T);
    const size_t n = (size_t)cal->B * cal->T * c->D;
    float *y = gf_malloc(n * sizeof *y), *dy = gf_malloc(n * sizeof *dy);
    float *hy = NULL;
    size_t hn = 0;
    if (held) {
        gdn_cache_alloc(&hcache, c, held->B, held->T);
        hn = (size_t)held->B * held->T * c->D;
        hy = gf_malloc(hn * sizeof *hy);
    }
    double best_key = INFINITY;
    int rc = 0;
    for (int step = 0; step <= steps; step++) {
        if (progress_cancelled(progress)) {
            rc = gf_fail("cancelled");
            break;
        }
        gdn_forward(c, p, &cache, cal->x, y);
        const double loss = mse_and_grad(y, cal->target, n, dy);
        r->loss[step] = (float)loss;
        double hloss = NAN;
        if (held && progress_cancelled(progress)) {
            rc = gf_fail("cancelled");
            break;
        }
        if (held) {
            gdn_forward(c, p, &hcache, held->x, hy);
            hloss = mse_and_grad(hy, held->target, hn, NULL);
            r->heldout[step] = (float)hloss;
        }
        if (obs && obs->on_step) obs->on_step(obs->ud, layer, step, loss, hloss);
        const double key = set->keep_best == KEEP_BEST_HELDOUT && held ? hloss : loss;
        if (key < best_key) {
            best_key = key;
            r->best_step = step;
            r->best_loss = loss;
            r->best_heldout = hloss;
            memcpy(best, p->block, p->n * sizeof *best);
        }
        if (step == steps) break;
        if (progress_cancelled(progress)) { /* the backward is the longest part of a step: look first */
            rc = gf_fail("cancelled");
            break;
        }
        memset(grad.block, 0, grad.n * sizeof(float));
        gdn_backward(c, p, &cache, cal->x, dy, NULL, &grad);
        double sq = 0;
        for (int i = 0; i < ntt; i++) sq += grad_sq_sum(grad.block + tt[i].off, tt[i].n);
        const double norm = sqrt(sq), coef = set->clip / (norm + 1e-6);
        for (int i = 0; i < ntt; i++) {
            float *g = grad.block + tt[i].off;
            if (coef < 1.0)
                for (size_t j = 0; j < tt[i].n; j++) g[j] = (float)(g[j] * coef);
            adamw_step(p->block + tt[i].off, g, m.block + tt[i].off, v.block + tt[i].off, tt[i].n, (float)tt[i].lr,
                       0.9f, 0.999f, 1e-8f, (float)set->weight_decay, step + 1);
        }
        if (omp_get_thread_num() == 0) progress_report(progress, "align", step, steps);
    }
    memcpy(p->block, best, p->n * sizeof *best);
    free(best);
    free(y);
    free(dy);
    free(hy);
    gdn_cache_free(&cache);
    if (held) gdn_cache_free(&hcache);
    gdn_params_free(&grad);
    gdn_params_free(&m);
    gdn_params_free(&v);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    r->seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    return rc;
}
