#include "optim/schedule.h"

#include <math.h>
#include <string.h>

#include "core/error.h"

double lr_factor(const lr_schedule *s, long step) {
    if (s->warmup > 0 && step <= s->warmup) return (double)step / s->warmup;
    if (s->shape == LR_CONSTANT) return 1.0;
    const long span = s->total - s->warmup;
    if (span <= 0) return 1.0;
    double progress = (double)(step - s->warmup) / span;
    if (progress > 1) progress = 1;
    return s->min_ratio + (1.0 - s->min_ratio) * 0.5 * (1.0 + cos(M_PI * progress));
}

int lr_shape_parse(const char *name, lr_shape *out) {
    if (strcmp(name, "cosine") == 0) *out = LR_COSINE;
    else if (strcmp(name, "constant") == 0) *out = LR_CONSTANT;
    else return gf_fail("unknown schedule '%s' (cosine or constant)", name);
    return 0;
}

#include <stdlib.h>

#include "core/error.h"

#define SS_BLOCK 65536

double sum_squares(const float *x, size_t n) {
    const size_t nb = (n + SS_BLOCK - 1) / SS_BLOCK;
    if (nb <= 1) {
        double s = 0;
        for (size_t i = 0; i < n; i++) s += (double)x[i] * x[i];
        return s;
    }
    double *part = gf_malloc(nb * sizeof *part);
#pragma omp parallel for schedule(static)
    for (size_t b = 0; b < nb; b++) {
        const size_t lo = b * SS_BLOCK, hi = lo + SS_BLOCK < n ? lo + SS_BLOCK : n;
        double s = 0;
        for (size_t i = lo; i < hi; i++) s += (double)x[i] * x[i];
        part[b] = s;
    }
    double s = 0;
    for (size_t b = 0; b < nb; b++) s += part[b];
    free(part);
    return s;
}

void scale_floats(float *x, size_t n, double f) {
#pragma omp parallel for schedule(static) if (n > SS_BLOCK)
    for (size_t i = 0; i < n; i++) x[i] = (float)(x[i] * f);
}

double grad_global_norm(float *const *grads, const size_t *sizes, int n_blocks) {
    double ss = 0;
    for (int b = 0; b < n_blocks; b++) ss += sum_squares(grads[b], sizes[b]);
    return sqrt(ss);
}

double grad_clip(float *const *grads, const size_t *sizes, int n_blocks, double norm, double max_norm) {
    if (max_norm <= 0 || !(norm > max_norm)) return 1.0;
    const double f = max_norm / norm;
    for (int b = 0; b < n_blocks; b++) scale_floats(grads[b], sizes[b], f);
    return f;
}
