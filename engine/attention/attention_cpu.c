/* Exact row-wise causal attention: for each (head, query) the score row is
 * computed into an O(T) scratch buffer, soft-maxed, and used once for the
 * output and the statistics. Memory is O(T) per thread, never O(T^2). */
#include <math.h>
#include <omp.h>
#include <stdlib.h>

#include "attention/attention.h"
#include "core/error.h"

#define LOG_1E_MINUS_10 (-23.025850929940457)

static float dot(const float *a, const float *b, int n) {
    float s = 0;
#pragma omp simd reduction(+ : s)
    for (int i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

/* No-sink distance of query row i >= 1 from the shifted scores sc[0..i],
 * re-shifted by the largest score among keys j >= 1: used when the first key
 * holds so much of the row that the float weights of the others underflow. */
static double nosink_distance_rescaled(const float *sc, int i) {
    float m1 = -INFINITY;
    for (int j = 1; j <= i; j++)
        if (sc[j] > m1) m1 = sc[j];
    double num = 0, den = 0;
    for (int j = 1; j <= i; j++) {
        const double w = exp((double)sc[j] - m1);
        num += w * (i - j > 0 ? (double)(i - j) : 0.5);
        den += w;
    }
    return num / den;
}

void attention_forward(float *out, const float *q, const float *k_cache, const float *v_cache,
                       const attn_shape *s, int T, int pos0, attn_stats *stats, int layer) {
    const int H = s->n_heads, KV = s->n_kv_heads, hd = s->head_dim, group = H / KV;
    const size_t qstride = (size_t)H * hd, kvstride = (size_t)KV * hd;
    const float scale = 1.0f / sqrtf((float)hd);
    const int n_keys_max = pos0 + T;

#pragma omp parallel
    {
        float *p = gf_malloc((size_t)n_keys_max * sizeof *p);   /* [n] exp(score - max) */
        float *sc = gf_malloc((size_t)n_keys_max * sizeof *sc); /* [n] score - max */
#pragma omp for schedule(dynamic, 1)
        for (int h = 0; h < H; h++) {
            const int kvh = h / group;
            double sum_dist = 0, sum_ent = 0, sum_rms = 0, sum_nosink = 0, sum_sink = 0;
            for (int t = 0; t < T; t++) {
                const int i = pos0 + t, n = i + 1;
                const float *qr = q + (size_t)t * qstride + (size_t)h * hd;
                float m = -INFINITY;
                for (int j = 0; j < n; j++) {
                    p[j] = dot(qr, k_cache + (size_t)j * kvstride + (size_t)kvh * hd, hd) * scale;
                    if (p[j] > m) m = p[j];
                }
                double z = 0;
                for (int j = 0; j < n; j++) {
                    sc[j] = p[j] - m;
                    p[j] = expf(sc[j]);
                    z += p[j];
                }
                const float inv = (float)(1.0 / z);
                const double log_z = log(z);
                float *o = out + (size_t)t * qstride + (size_t)h * hd;
                for (int d = 0; d < hd; d++) o[d] = 0;
                double dist = 0, ent = 0, rest_dist = 0, rest = 0; /* rest*: keys j >= 1 */
                for (int j = 0; j < n; j++) {
                    const float a = p[j] * inv;
                    const float *vr = v_cache + (size_t)j * kvstride + (size_t)kvh * hd;
#pragma omp simd
                    for (int d = 0; d < hd; d++) o[d] += a * vr[d];
                    if (stats) {
                        dist += (double)a * (i - j > 0 ? (double)(i - j) : 0.5);
                        /* log a = score - max - log z, without a log per key */
                        ent -= (double)a * (a > 1e-10f ? (double)sc[j] - log_z : LOG_1E_MINUS_10);
                        /* the no-sink distance renormalizes over keys j >= 1; the
                         * unnormalized p[j] give the same ratio */
                        if (j >= 1) {
                            rest_dist += (double)p[j] * (i - j > 0 ? (double)(i - j) : 0.5);
                            rest += (double)p[j];
                        }
                    }
                }
                if (stats) {
                    double ss = 0;
                    for (int d = 0; d < hd; d++) ss += (double)o[d] * o[d];
                    sum_dist += dist;
                    sum_ent += ent;
                    sum_rms += sqrt(ss / hd);
                    /* row 0 has no key j >= 1; z >= 1, so rest < 1e-20 z means the
                     * float weights of keys j >= 1 may have underflowed */
                    sum_nosink += i == 0 ? 0.5 : rest >= 1e-20 * z ? rest_dist / rest : nosink_distance_rescaled(sc, i);
                    sum_sink += (double)p[0] / z;
                }
            }
            if (stats) {
                head_stat_sum *acc = attn_stats_at(stats, layer, h);
                acc->distance += sum_dist;
                acc->entropy += sum_ent;
                acc->output_rms += sum_rms;
                acc->dist_nosink += sum_nosink;
                acc->sink += sum_sink;
                acc->rows += T;
            }
        }
        free(p);
        free(sc);
    }
}
