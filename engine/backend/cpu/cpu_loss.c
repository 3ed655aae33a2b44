/* Losses with their gradients on CPU: cross-entropy, KL with temperature,
 * squared error, row L2 distance. Rows run in parallel; their losses are
 * summed afterwards in row order, so the total does not depend on how
 * threads combine (resumed runs must print bit-identical curves). Softmaxes
 * in double. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>

#include "backend/cpu/cpu.h"
#include "backend/cpu/cpu_hot.h"

/* The exps of a row (two softmaxes of 151,936 entries a row in distillation)
 * were the KL's whole cost with libm's scalar exp; libmvec's takes two or four
 * doubles at once (~2 ulp seen here), 2.7x the scalar rate at x86-64-v2
 * (CPU_VECTOR_MATH, cpu_hot.h). The lanes' partial sums are added in a fixed
 * order: the same bits every run. */
CPU_VECTOR_MATH(double exp(double))
/* The row loops are also built for AVX2 + FMA and picked at run time (GCC
 * function multi-versioning, as the GDN core does; the build targets
 * x86-64-v2): there libmvec's exp takes four doubles a call. A machine gives
 * the same bits every run; one with AVX2 and one without differ in the last
 * places of the sums (the lanes' partial sums are four there, two here):
 * CPU_HOT (cpu_hot.h). */

#define BLOCK 65536

/* p[V] = softmax(z / tau) in double; returns log of the normalizer (of z/tau).
 * Division by tau is correctly rounded and monotone, so the largest z / tau is
 * the largest z divided once; at tau = 1 the quotients are z itself (the
 * default temperature, and cross-entropy's), so no division is spent on them. */
CPU_HOT static double softmax_row(double *p, const float *z, int V, double tau) {
    const double m = (double)cpu_row_max(z, V) / tau;
    double sum = 0;
    if (tau == 1.0) {
#pragma omp simd reduction(+ : sum)
        for (int i = 0; i < V; i++) sum += (p[i] = exp(z[i] - m));
    } else {
#pragma omp simd reduction(+ : sum) /* a vector division rounds each lane as the scalar one does */
        for (int i = 0; i < V; i++) sum += (p[i] = exp(z[i] / tau - m));
    }
#pragma omp simd /* a vector division rounds each lane as the scalar one does */
    for (int i = 0; i < V; i++) p[i] /= sum;
    return m + log(sum);
}

static void add_rows(gf_buf loss, const double *rows, int N) {
    double s = 0;
    for (int t = 0; t < N; t++) s += rows[t];
    cpu_d(loss)[0] += s;
}

void cpu_cross_entropy(gf_backend *be, gf_buf loss, gf_buf dlogits, gf_buf logits, gf_buf targets, int N, int V,
                       float grad_scale) {
    const int nt = (size_t)N * V > CPU_ELEMS_PAR ? cpu_threads(be, (size_t)N) : 1;
    double *rows = cpu_scratch(be, ((size_t)N + (size_t)nt * V) * sizeof *rows, "cross-entropy");
    if (!rows) return;
    const float *Z = cpu_f(logits);
    const int *tg = cpu_i(targets);
    float *DZ = gf_is_none(dlogits) ? NULL : cpu_f(dlogits);
#pragma omp parallel num_threads(nt)
    {
        double *p = rows + N + (size_t)omp_get_thread_num() * V;
#pragma omp for schedule(static)
        for (int t = 0; t < N; t++) {
            const float *a = Z + (size_t)t * V;
            float *d = DZ ? DZ + (size_t)t * V : NULL;
            if (tg[t] < 0) {
                rows[t] = 0;
                if (d)
                    for (int i = 0; i < V; i++) d[i] = 0;
                continue;
            }
            const double lz = softmax_row(p, a, V, 1.0);
            rows[t] = lz - a[tg[t]];
            if (d)
                for (int i = 0; i < V; i++) d[i] = (float)(grad_scale * (p[i] - (i == tg[t])));
        }
    }
    add_rows(loss, rows, N);
    free(rows);
}

/* One row's tau^2 KL(teacher b || student a) at temperature tau, and its
 * gradient into d (NULL: none); es, et [V] scratch. Four passes over the
 * vocabulary instead of seven: the two maxima, both rows' exps (unnormalized)
 * in one loop, then one loop that makes each probability where it is used and
 * adds the KL while it writes the gradient, so the probabilities are never
 * stored and read back (at 151,936 entries a row, es and et are 2.4 MB of
 * doubles, past a core's L2). A probability is its exp times the reciprocal
 * of the row's sum, not a division: two vector divisions an entry were ~20 %
 * of the row's time; the product adds at most one double ulp (2.2e-16
 * relative) to each probability, far inside what the loss and the float
 * gradient resolve (test_train_grad checks both against long double). */
CPU_HOT static double kl_row(float *d, double *es, double *et, const float *a, const float *b, int V, float tau,
                             float grad_scale) {
    const double dt = tau, ms = (double)cpu_row_max(a, V) / dt, mt = (double)cpu_row_max(b, V) / dt;
    double ss = 0, st = 0;
    if (tau == 1.0f) {
#pragma omp simd reduction(+ : ss, st)
        for (int i = 0; i < V; i++) {
            ss += (es[i] = exp(a[i] - ms));
            st += (et[i] = exp(b[i] - mt));
        }
    } else {
#pragma omp simd reduction(+ : ss, st) /* a vector division rounds each lane as the scalar one does */
        for (int i = 0; i < V; i++) {
            ss += (es[i] = exp(a[i] / dt - ms));
            st += (et[i] = exp(b[i] / dt - mt));
        }
    }
    const double ls = ms + log(ss), lt = mt + log(st), k = (double)grad_scale * dt;
    const double rs = 1.0 / ss, rt = 1.0 / st; /* reciprocals: see above */
    double kl = 0; /* entries the teacher gives 0 add nothing (not 0 x inf) */
    if (d && tau == 1.0f) {
#pragma omp simd reduction(+ : kl)
        for (int i = 0; i < V; i++) {
            const double pt = et[i] * rt, ps = es[i] * rs;
            kl += pt > 0 ? pt * ((b[i] - lt) - (a[i] - ls)) : 0.0;
            d[i] = (float)(k * (ps - pt));
        }
    } else if (d) {
#pragma omp simd reduction(+ : kl)
        for (int i = 0; i < V; i++) {
            const double pt = et[i] * rt, ps = es[i] * rs;
            kl += pt > 0 ? pt * ((b[i] / dt - lt) - (a[i] / dt - ls)) : 0.0;
            d[i] = (float)(k * (ps - pt));
        }
    } else if (tau == 1.0f) {
#pragma omp simd reduction(+ : kl)
        for (int i = 0; i < V; i++) {
            const double pt = et[i] * rt;
            kl += pt > 0 ? pt * ((b[i] - lt) - (a[i] - ls)) : 0.0;
        }
    } else {
#pragma omp simd reduction(+ : kl)
        for (int i = 0; i < V; i++) {
            const double pt = et[i] * rt;
            kl += pt > 0 ? pt * ((b[i] / dt - lt) - (a[i] / dt - ls)) : 0.0;
        }
    }
    return dt * dt * kl;
}

void cpu_kl_div(gf_backend *be, gf_buf loss, gf_buf dstudent, gf_buf student, gf_buf teacher, int N, int V,
                float tau, float grad_scale) {
    const int nt = (size_t)N * V > CPU_ELEMS_PAR ? cpu_threads(be, (size_t)N) : 1;
    double *rows = cpu_scratch(be, ((size_t)N + 2 * (size_t)nt * V) * sizeof *rows, "kl divergence");
    if (!rows) return;
    const float *ZS = cpu_f(student), *ZT = cpu_f(teacher);
    float *DZ = gf_is_none(dstudent) ? NULL : cpu_f(dstudent);
#pragma omp parallel num_threads(nt)
    {
        double *es = rows + N + (size_t)omp_get_thread_num() * 2 * V, *et = es + V;
#pragma omp for schedule(static)
        for (int t = 0; t < N; t++)
            rows[t] = kl_row(DZ ? DZ + (size_t)t * V : NULL, es, et, ZS + (size_t)t * V, ZT + (size_t)t * V, V, tau,
                             grad_scale);
    }
    add_rows(loss, rows, N);
    free(rows);
}

void cpu_mse(gf_backend *be, gf_buf loss, gf_buf dy, gf_buf y, gf_buf target, size_t n, float grad_scale) {
    const size_t nb = (n + BLOCK - 1) / BLOCK;
    double *part = cpu_scratch(be, nb * sizeof *part, "squared error");
    if (!part) return;
    const float *Y = cpu_f(y), *Tt = cpu_f(target);
    float *DY = gf_is_none(dy) ? NULL : cpu_f(dy);
#pragma omp parallel for schedule(static) num_threads(cpu_threads(be, nb))
    for (size_t b = 0; b < nb; b++) {
        const size_t lo = b * BLOCK, hi = lo + BLOCK < n ? lo + BLOCK : n;
        double s = 0;
        for (size_t i = lo; i < hi; i++) {
            const double d = (double)Y[i] - Tt[i];
            s += d * d;
            if (DY) DY[i] = (float)(2.0 * d * (double)grad_scale);
        }
        part[b] = s;
    }
    double s = 0;
    for (size_t b = 0; b < nb; b++) s += part[b];
    cpu_d(loss)[0] += s;
    free(part);
}

void cpu_row_l2(gf_backend *be, gf_buf loss, gf_buf ds, gf_buf s, gf_buf t, int N, int D, float grad_scale) {
    double *rows = cpu_scratch(be, (size_t)N * sizeof *rows, "row distance");
    if (!rows) return;
    const float *S = cpu_f(s), *Tt = cpu_f(t);
    float *DS = gf_is_none(ds) ? NULL : cpu_f(ds);
    const double rs = 1.0 / sqrt((double)D);
#pragma omp parallel for schedule(static) num_threads(cpu_threads(be, (size_t)N)) if ((size_t)N * D > CPU_ELEMS_PAR)
    for (int r = 0; r < N; r++) {
        const float *a = S + (size_t)r * D, *b = Tt + (size_t)r * D;
        double ss = 0;
        for (int i = 0; i < D; i++) ss += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        const double norm = sqrt(ss);
        rows[r] = norm * rs;
        if (DS && norm > 0) {
            const double c = grad_scale * rs / norm;
            float *d = DS + (size_t)r * D;
            for (int i = 0; i < D; i++) d[i] += (float)(c * ((double)a[i] - b[i]));
        }
    }
    add_rows(loss, rows, N);
    free(rows);
}
