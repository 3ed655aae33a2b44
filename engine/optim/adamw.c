#include "optim/adamw.h"

#include <math.h>

void adamw_step(float *params, const float *grads, float *m, float *v, size_t n, float lr, float beta1, float beta2,
                float eps, float weight_decay, long step) {
    const double bc1 = 1.0 - pow(beta1, (double)step), bc2 = 1.0 - pow(beta2, (double)step);
    const float step_size = (float)(lr / bc1), inv_sqrt_bc2 = (float)(1.0 / sqrt(bc2));
    const float decay = lr * weight_decay;
#pragma omp parallel for if (n > 65536) schedule(static)
    for (size_t i = 0; i < n; i++) {
        const float g = grads[i];
        m[i] = beta1 * m[i] + (1.0f - beta1) * g;
        v[i] = beta2 * v[i] + (1.0f - beta2) * g * g;
        const float p = params[i];
        params[i] = p - step_size * m[i] / (sqrtf(v[i]) * inv_sqrt_bc2 + eps) - decay * p;
    }
}
