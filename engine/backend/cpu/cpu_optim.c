/* The optimizer's ops on CPU: sum of squares (global gradient norm) and AdamW. */
#include <math.h>
#include <stdlib.h>

#include "backend/cpu/cpu.h"

#define BLOCK 65536

/* Fixed 64K-element blocks summed in order: the same bits whatever the thread count. */
void cpu_sumsq(gf_backend *be, gf_buf acc, gf_buf x, size_t n) {
    const size_t nb = (n + BLOCK - 1) / BLOCK;
    const float *X = cpu_f(x);
    double *part = cpu_scratch(be, nb * sizeof *part, "sum of squares");
    if (!part) return;
#pragma omp parallel for schedule(static) num_threads(cpu_threads(be, nb))
    for (size_t b = 0; b < nb; b++) {
        const size_t lo = b * BLOCK, hi = lo + BLOCK < n ? lo + BLOCK : n;
        double s = 0;
        for (size_t i = lo; i < hi; i++) s += (double)X[i] * X[i];
        part[b] = s;
    }
    double s = 0;
    for (size_t b = 0; b < nb; b++) s += part[b];
    cpu_d(acc)[0] += s;
    free(part);
}

/* PyTorch's AdamW (decoupled weight decay), step = 1, 2, ...:
 *   p <- p - lr wd p;  m <- b1 m + (1 - b1) g;  v <- b2 v + (1 - b2) g^2
 *   p <- p - lr (m / (1 - b1^step)) / (sqrt(v / (1 - b2^step)) + eps),  g = grad_scale * grad */
void cpu_adamw(gf_backend *be, gf_buf p, gf_buf p_act, gf_buf g, gf_buf m, gf_buf v, size_t n, const gf_adamw *h) {
    const double bc1 = 1.0 - pow(h->beta1, h->step), bc2 = 1.0 - pow(h->beta2, h->step);
    const float decay = 1.0f - h->lr * h->weight_decay, b1 = h->beta1, b2 = h->beta2, eps = h->eps;
    const float step_size = (float)(h->lr / bc1), inv_sqrt_bc2 = (float)(1.0 / sqrt(bc2)), gs = h->grad_scale;
    float *P = cpu_f(p), *M = cpu_f(m), *Vv = cpu_f(v);
    const float *G = cpu_f(g);
    float *PA = gf_is_none(p_act) || p_act.ptr == p.ptr ? NULL : cpu_f(p_act);
#pragma omp parallel for schedule(static) num_threads(cpu_threads(be, n / BLOCK + 1)) if (n > BLOCK)
    for (size_t i = 0; i < n; i++) {
        const float gi = gs == 1.0f ? G[i] : G[i] * gs;
        P[i] *= decay;
        M[i] = b1 * M[i] + (1.0f - b1) * gi;
        Vv[i] = b2 * Vv[i] + (1.0f - b2) * gi * gi;
        P[i] -= step_size * M[i] / (sqrtf(Vv[i]) * inv_sqrt_bc2 + eps);
        if (PA) PA[i] = P[i];
    }
}
