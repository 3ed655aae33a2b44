#include "train/losses.h"

#include <math.h>
#include <stdlib.h>

#include "core/error.h"

/* Row losses are summed serially afterwards so the total does not depend on
 * how threads combine (resumed runs must print bit-identical curves). */
static double sum_rows(double *rows, int T) {
    double s = 0;
    for (int t = 0; t < T; t++) s += rows[t];
    free(rows);
    return s;
}

/* p[V] = softmax(z / tau) in double; returns log of the normalizer (of z/tau). */
static double softmax_row(double *p, const float *z, int V, double tau) {
    double m = -INFINITY;
    for (int i = 0; i < V; i++) m = fmax(m, z[i] / tau);
    double sum = 0;
    for (int i = 0; i < V; i++) sum += (p[i] = exp(z[i] / tau - m));
    for (int i = 0; i < V; i++) p[i] /= sum;
    return m + log(sum);
}

double loss_kl_rows(float *dzs, const float *zs, const float *zt, int T, int V, float tau, float grad_scale) {
    double *rows = gf_malloc((size_t)T * sizeof *rows);
#pragma omp parallel
    {
        double *ps = gf_malloc((size_t)V * sizeof *ps), *pt = gf_malloc((size_t)V * sizeof *pt);
#pragma omp for schedule(static)
        for (int t = 0; t < T; t++) {
            const float *a = zs + (size_t)t * V, *b = zt + (size_t)t * V;
            const double ls = softmax_row(ps, a, V, tau), lt = softmax_row(pt, b, V, tau);
            double kl = 0;
            for (int i = 0; i < V; i++)
                if (pt[i] > 0) kl += pt[i] * ((b[i] / (double)tau - lt) - (a[i] / (double)tau - ls));
            rows[t] = (double)tau * tau * kl;
            float *d = dzs + (size_t)t * V;
            for (int i = 0; i < V; i++) d[i] = (float)(grad_scale * (double)tau * (ps[i] - pt[i]));
        }
        free(ps);
        free(pt);
    }
    return sum_rows(rows, T);
}

double loss_ce_rows(float *dz, const float *z, const int *targets, int T, int V, float grad_scale) {
    double *rows = gf_malloc((size_t)T * sizeof *rows);
#pragma omp parallel
    {
        double *p = gf_malloc((size_t)V * sizeof *p);
#pragma omp for schedule(static)
        for (int t = 0; t < T; t++) {
            const float *a = z + (size_t)t * V;
            const double lz = softmax_row(p, a, V, 1.0);
            rows[t] = lz - a[targets[t]];
            if (dz) {
                float *d = dz + (size_t)t * V;
                for (int i = 0; i < V; i++) d[i] = (float)(grad_scale * (p[i] - (i == targets[t])));
            }
        }
        free(p);
    }
    return sum_rows(rows, T);
}

double loss_align_rows(float *ds, const float *s, const float *t, int T, int D, float grad_scale) {
    double total = 0;
    const double rs = 1.0 / sqrt((double)D);
    for (int r = 0; r < T; r++) {
        const float *a = s + (size_t)r * D, *b = t + (size_t)r * D;
        double ss = 0;
        for (int i = 0; i < D; i++) ss += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        const double norm = sqrt(ss);
        total += norm * rs;
        if (ds && norm > 0) {
            const double c = grad_scale * rs / norm;
            float *d = ds + (size_t)r * D;
            for (int i = 0; i < D; i++) d[i] += (float)(c * ((double)a[i] - b[i]));
        }
    }
    return total;
}
