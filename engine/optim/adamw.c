#include "optim/adamw.h"

#include <math.h>

void adamw_step(float *params, const float *grads, float *m, float *v, size_t n, float lr, float b1,
                float b2, float eps, float wd, int step) {
    const double bc1 = 1.0 - pow(b1, step), bc2 = 1.0 - pow(b2, step);
    const float decay = 1.0f - lr * wd;
    const float step_size = (float)(lr / bc1);
    const float inv_sqrt_bc2 = (float)(1.0 / sqrt(bc2));
    for (size_t i = 0; i < n; i++) {
        float g = grads[i];
        params[i] *= decay;
        m[i] = b1 * m[i] + (1.0f - b1) * g;
        v[i] = b2 * v[i] + (1.0f - b2) * g * g;
        params[i] -= step_size * m[i] / (sqrtf(v[i]) * inv_sqrt_bc2 + eps);
    }
}

double grad_sq_sum(const float *g, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += (double)g[i] * g[i];
    return s;
}
