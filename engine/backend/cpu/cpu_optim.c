/* The optimizer's ops on CPU: sum of squares (global gradient norm) and AdamW. */
#include <math.h>
#include <stdlib.h>

#include "backend/cpu/cpu.h"
#include "backend/cpu/cpu_hot.h"

#define BLOCK 65536

/* x[0, n)'s sum of squares in CPU_LANES running sums (cpu_hot.h): the same
 * bits on every machine and thread count; the compiler keeps the lanes in
 * vector registers. */
CPU_HOT static double sumsq_block(const float *x, size_t n) {
    double lane[CPU_LANES] = {0};
    size_t i = 0;
    for (; i + CPU_LANES <= n; i += CPU_LANES)
        for (int j = 0; j < CPU_LANES; j++) lane[j] += (double)x[i + j] * x[i + j];
    for (int j = 0; i < n; i++, j++) lane[j] += (double)x[i] * x[i];
    return cpu_lanes_sum(lane);
}

/* Fixed 64K-element blocks summed in order: the same bits whatever the thread count. */
void cpu_sumsq(gf_backend *be, gf_buf acc, gf_buf x, size_t n) {
    const size_t nb = (n + BLOCK - 1) / BLOCK;
    const float *X = cpu_f(x);
    double *part = cpu_scratch(be, nb * sizeof *part, "sum of squares");
    if (!part) return;
#pragma omp parallel for schedule(static) num_threads(cpu_threads(be, nb))
    for (size_t b = 0; b < nb; b++) {
        const size_t lo = b * BLOCK, hi = lo + BLOCK < n ? lo + BLOCK : n;
        part[b] = sumsq_block(X + lo, hi - lo);
    }
    double s = 0;
    for (size_t b = 0; b < nb; b++) s += part[b];
    cpu_d(acc)[0] += s;
    free(part);
}

typedef struct {
    float decay, b1, b2, eps, step_size, inv_sqrt_bc2, gs;
} adamw_consts;

/* One element of AdamW, in the order PyTorch's loop takes: updates *m and *v, returns the new p. A
 * straight-line function so that the loops below vectorize (no branch inside them; g * 1.0f is g). */
static inline float adamw_one(float p, float g, float *m, float *v, const adamw_consts k) {
    const float gi = g * k.gs;
    p *= k.decay;
    *m = k.b1 * *m + (1.0f - k.b1) * gi;
    *v = k.b2 * *v + (1.0f - k.b2) * gi * gi;
    return p - k.step_size * *m / (sqrtf(*v) * k.inv_sqrt_bc2 + k.eps);
}

/* One task's elements. Built for AVX2 too (CPU_HOT): eight lanes a vector
 * square root and division instead of x86-64-v2's four (AdamW was 2-2.8 % of
 * a CPU training step's samples); sqrt, division and the build's unfused
 * multiply-adds (-std=c11: no contraction) round each lane as the scalar
 * loop does, so both clones give the same bits. */
CPU_HOT static void adamw_block(float *P, float *PA, const float *G, float *M, float *Vv, size_t n,
                                const adamw_consts k) {
    if (PA) {
#pragma omp simd
        for (size_t i = 0; i < n; i++) PA[i] = P[i] = adamw_one(P[i], G[i], &M[i], &Vv[i], k);
    } else {
#pragma omp simd
        for (size_t i = 0; i < n; i++) P[i] = adamw_one(P[i], G[i], &M[i], &Vv[i], k);
    }
}

/* PyTorch's AdamW (decoupled weight decay), step = 1, 2, ...:
 *   p <- p - lr wd p;  m <- b1 m + (1 - b1) g;  v <- b2 v + (1 - b2) g^2
 *   p <- p - lr (m / (1 - b1^step)) / (sqrt(v / (1 - b2^step)) + eps),  g = grad_scale * grad
 * Vectorized by `omp simd` (sqrtf inlines to the vector square root because the build says
 * -fno-math-errno); each lane rounds as the scalar loop does: the same bits. Blocks of BLOCK
 * elements split over the threads (element-wise: any split gives the same bits). */
void cpu_adamw(gf_backend *be, gf_buf p, gf_buf p_act, gf_buf g, gf_buf m, gf_buf v, size_t n, const gf_adamw *h) {
    const double bc1 = 1.0 - pow(h->beta1, h->step), bc2 = 1.0 - pow(h->beta2, h->step);
    const adamw_consts k = {1.0f - h->lr * h->weight_decay, h->beta1, h->beta2, h->eps, (float)(h->lr / bc1),
                            (float)(1.0 / sqrt(bc2)), h->grad_scale};
    float *P = cpu_f(p), *M = cpu_f(m), *Vv = cpu_f(v);
    const float *G = cpu_f(g);
    float *PA = gf_is_none(p_act) || p_act.ptr == p.ptr ? NULL : cpu_f(p_act);
    const size_t nb = (n + BLOCK - 1) / BLOCK;
#pragma omp parallel for schedule(static) num_threads(cpu_threads(be, nb)) if (nb > 1)
    for (size_t b = 0; b < nb; b++) {
        const size_t lo = b * BLOCK, len = n - lo < BLOCK ? n - lo : BLOCK;
        adamw_block(P + lo, PA ? PA + lo : NULL, G + lo, M + lo, Vv + lo, len, k);
    }
}
