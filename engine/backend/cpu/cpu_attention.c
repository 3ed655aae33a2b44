/* Causal GQA softmax attention on CPU, one kernel for inference, statistics
 * and training, with no T x T matrix anywhere.
 *
 * Forward: work items are (sequence, head, block of QB query rows). A block's
 * score rows [QB, n] (n = keys it may see) come from one sgemm, are soft-maxed
 * exactly row by row (max, exp, sum in double), and multiply V in a second
 * sgemm. Memory: two [QB, n] buffers per thread, O(T). Each row's
 * log-sum-exp is kept for the backward; the METHOD.md section 4 statistics
 * are summed per item and added per head in item order (fixed bits).
 *
 * Backward (flash-style): work items are (sequence, KV head); for each of its
 * query heads and query blocks the probabilities are recomputed from the
 * scores and lse, then dS = P (dP - rowsum(P dP)) scale, and four sgemms give
 * dq, and add into that KV head's dk, dv (one thread owns them: no reduction
 * across threads). */
#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/blas_serial.h"
#include "backend/cpu/cpu.h"
#include "backend/cpu/cpu_hot.h"

#define QB 64                            /* query rows per block */
/* Below this many multiply-adds (scores and outputs of every head) the work runs on one thread: a
 * region costs more than it saves (a stories260K layer at T 64 is 0.5 M). */
#define ATTN_PAR_MIN_WORK 2000000.0
#define LOG_1E_MINUS_10 (-23.025850929940457)

/* The rows' expf in libmvec's vector form (8 floats a call under AVX2, within
 * 4 ulp): the scalar expf was ~3 % of the 0.5B-shape forward's samples at
 * T 512, and grows with T. A row's tail is padded to a whole vector with
 * -inf (exp 0), so every element takes the vector form; its sums run in
 * CPU_LANES doubles added in a fixed tree: fixed bits for a machine. */
CPU_VECTOR_MATH(float expf(float))

/* sr[j] -= m; pr[j] = exp(sr[j]) for j < nk; returns the sum of pr[0, nk) */
CPU_HOT static double shifted_exps(float *sr, float *pr, int nk, float m) {
    double lane[CPU_LANES] = {0};
    int j = 0;
    for (; j + CPU_LANES <= nk; j += CPU_LANES) {
#pragma omp simd
        for (int l = 0; l < CPU_LANES; l++) pr[j + l] = expf(sr[j + l] -= m);
        for (int l = 0; l < CPU_LANES; l++) lane[l] += pr[j + l];
    }
    if (j < nk) {
        float x[CPU_LANES], e[CPU_LANES];
        for (int l = 0; l < CPU_LANES; l++) x[l] = j + l < nk ? (sr[j + l] -= m) : -INFINITY;
#pragma omp simd
        for (int l = 0; l < CPU_LANES; l++) e[l] = expf(x[l]);
        for (int l = 0; l < CPU_LANES && j + l < nk; l++) lane[l] += (pr[j + l] = e[l]);
    }
    return cpu_lanes_sum(lane);
}

/* Query row i's statistics sums over keys j in [j0, nk), key j at distance
 * i - j (0.5 for the diagonal): *w += sum a_j, *wd += sum a_j d_j and, with ent,
 * *ent -= sum a_j log a_j (log a_j = sr[j] - log_z, floored at 1e-10) - each
 * in CPU_LANES double lanes added in a fixed tree (one chain of double adds
 * waited ~4 cycles a key; at ctx 2048 these loops were most of graft stats'
 * attention time). No branch in the lanes' loop, so it vectorizes at -O2: the
 * diagonal's 0.5 and the floor are selected by arithmetic with 0 or 1 (x 1 + 0
 * and 0 + y, exact), and every key's score is loaded, used or not. */
static inline void stat_terms(float p, float x, int dist, double log_z, double *a, double *ad, double *ala) {
    const double d = (double)dist, keep = (double)(p > 1e-10f);
    *a = p;
    *ad = *a * (d + 0.5 * (double)(d == 0.0));
    *ala = *a * (keep * ((double)x - log_z) + (1.0 - keep) * LOG_1E_MINUS_10);
}

CPU_HOT static void row_stat_sums(const float *pr, const float *sr, int j0, int nk, int i, double log_z, double *w,
                                  double *wd, double *ent) {
    double lw[CPU_LANES] = {0}, ld[CPU_LANES] = {0}, le[CPU_LANES] = {0};
    int j = j0;
    for (; j + CPU_LANES <= nk; j += CPU_LANES)
#pragma omp simd
        for (int l = 0; l < CPU_LANES; l++) {
            double a, ad, ala;
            stat_terms(pr[j + l], sr[j + l], i - (j + l), log_z, &a, &ad, &ala);
            lw[l] += a;
            ld[l] += ad;
            le[l] -= ala;
        }
    for (int l = 0; j < nk; j++, l++) {
        double a, ad, ala;
        stat_terms(pr[j], sr[j], i - j, log_z, &a, &ad, &ala);
        lw[l] += a;
        ld[l] += ad;
        le[l] -= ala;
    }
    if (w) *w += cpu_lanes_sum(lw);
    *wd += cpu_lanes_sum(ld);
    if (ent) *ent += cpu_lanes_sum(le);
}

/* pr[j] = exp(pr[j] - lse) for j < nk; returns sum of pr[j] dr[j] */
CPU_HOT static double probs_dot(float *pr, const float *dr, int nk, float lse) {
    double lane[CPU_LANES] = {0};
    int j = 0;
    for (; j + CPU_LANES <= nk; j += CPU_LANES) {
#pragma omp simd
        for (int l = 0; l < CPU_LANES; l++) pr[j + l] = expf(pr[j + l] - lse);
        for (int l = 0; l < CPU_LANES; l++) lane[l] += (double)pr[j + l] * dr[j + l];
    }
    if (j < nk) {
        float x[CPU_LANES], e[CPU_LANES];
        for (int l = 0; l < CPU_LANES; l++) x[l] = j + l < nk ? pr[j + l] - lse : -INFINITY;
#pragma omp simd
        for (int l = 0; l < CPU_LANES; l++) e[l] = expf(x[l]);
        for (int l = 0; l < CPU_LANES && j + l < nk; l++) lane[l] += (double)(pr[j + l] = e[l]) * dr[j + l];
    }
    return cpu_lanes_sum(lane);
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

void cpu_attention(gf_backend *be, gf_buf out, gf_buf lse, gf_buf stats, gf_buf q, gf_buf k, gf_buf v,
                   const gf_attn_shape *s) {
    const int B = s->B, T = s->T, H = s->H, KV = s->KV, hd = s->hd, group = H / KV, pos0 = s->pos0;
    const size_t qs = (size_t)H * hd, kvs = (size_t)KV * hd;
    const float scale = 1.0f / sqrtf((float)hd);
    const int nqb = (T + QB - 1) / QB, items = B * H * nqb, n_max = pos0 + T;
    const float *Q = cpu_f(q), *K = cpu_f(k), *V = cpu_f(v);
    float *O = cpu_f(out), *LSE = gf_is_none(lse) ? NULL : cpu_f(lse);
    double *part = NULL; /* [items, GF_STAT_COUNT] */
    if (!gf_is_none(stats) && !(part = cpu_scratch(be, (size_t)items * GF_STAT_COUNT * sizeof *part, "attention")))
        return;
    const double work = 2.0 * B * H * T * n_max * hd;
    const int nt = work < ATTN_PAR_MIN_WORK ? 1 : cpu_threads(be, (size_t)items);
    const size_t per = (size_t)(QB < T ? QB : T) * n_max; /* one [QB, n] buffer */
    float *scratch = cpu_scratch(be, (size_t)nt * 2 * per * sizeof(float), "attention");
    if (!scratch) {
        free(part);
        return;
    }
#pragma omp parallel num_threads(nt)
    {
        cpu_region_blas_serial();
        float *S = scratch + (size_t)omp_get_thread_num() * 2 * per; /* [QB, n] scores - row max */
        float *P = S + per;                                             /* [QB, n] probabilities */
#pragma omp for schedule(dynamic, 1)
        for (int it = 0; it < items; it++) {
            const int b = it / (H * nqb), h = it / nqb % H, qb = it % nqb, kvh = h / group;
            const int t0 = qb * QB, t1 = t0 + QB < T ? t0 + QB : T, L = t1 - t0, n = pos0 + t1;
            const float *Qb = Q + ((size_t)b * T + t0) * qs + (size_t)h * hd;
            const float *Kb = K + (size_t)b * s->S * kvs + (size_t)kvh * hd;
            const float *Vb = V + (size_t)b * s->S * kvs + (size_t)kvh * hd;
            float *Ob = O + ((size_t)b * T + t0) * qs + (size_t)h * hd;
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, L, n, hd, scale, Qb, (int)qs, Kb, (int)kvs, 0.0f, S,
                        n);
            double acc[GF_STAT_COUNT] = {0};
            for (int r = 0; r < L; r++) {
                const int i = pos0 + t0 + r, nk = i + 1;
                float *sr = S + (size_t)r * n, *pr = P + (size_t)r * n;
                const float m = cpu_row_max(sr, nk);
                double rest = 0, rest_dist = 0; /* rest*: keys j >= 1, unnormalized */
                const double z = shifted_exps(sr, pr, nk, m);
                if (part) row_stat_sums(pr, sr, 1, nk, i, 0, &rest, &rest_dist, NULL);
                const double sink = pr[0] / z;
                const float inv = (float)(1.0 / z);
                for (int j = 0; j < nk; j++) pr[j] *= inv;
                for (int j = nk; j < n; j++) pr[j] = 0;
                const double log_z = log(z);
                if (LSE) LSE[((size_t)b * H + h) * T + t0 + r] = (float)(m + log_z);
                if (!part) continue;
                double dist = 0, ent = 0; /* log a = score - max - log z, without a log per key */
                row_stat_sums(pr, sr, 0, nk, i, log_z, NULL, &dist, &ent);
                acc[GF_STAT_DISTANCE] += dist;
                acc[GF_STAT_ENTROPY] += ent;
                /* row 0 has no key j >= 1; z >= 1, so rest < 1e-20 z means the float
                 * weights of keys j >= 1 may have underflowed: recomputed rescaled */
                acc[GF_STAT_DIST_NOSINK] += i == 0 ? 0.5 : rest >= 1e-20 * z ? rest_dist / rest
                                                                          : nosink_distance_rescaled(sr, i);
                acc[GF_STAT_SINK] += sink;
            }
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, L, hd, n, 1.0f, P, n, Vb, (int)kvs, 0.0f, Ob,
                        (int)qs);
            if (part) {
                for (int r = 0; r < L; r++) {
                    const float *o = Ob + (size_t)r * qs;
                    double ss = 0;
                    for (int d = 0; d < hd; d++) ss += (double)o[d] * o[d];
                    acc[GF_STAT_OUT_RMS] += sqrt(ss / hd);
                }
                memcpy(part + (size_t)it * GF_STAT_COUNT, acc, sizeof acc);
            }
        }
    }
    free(scratch);
    if (part) {
        double *st = cpu_d(stats);
        for (int it = 0; it < items; it++) { /* per head, items in order */
            const int h = it / nqb % H;
            for (int c = 0; c < GF_STAT_COUNT; c++) st[(size_t)h * GF_STAT_COUNT + c] += part[(size_t)it * GF_STAT_COUNT + c];
        }
        free(part);
    }
}

void cpu_attention_backward(gf_backend *be, gf_buf dq, gf_buf dk, gf_buf dv, gf_buf dout, gf_buf out, gf_buf lse,
                            gf_buf q, gf_buf k, gf_buf v, const gf_attn_shape *s) {
    (void)out;
    const int B = s->B, T = s->T, H = s->H, KV = s->KV, hd = s->hd, group = H / KV;
    const size_t qs = (size_t)H * hd, kvs = (size_t)KV * hd;
    const float scale = 1.0f / sqrtf((float)hd);
    const int items = B * KV;
    const float *Q = cpu_f(q), *K = cpu_f(k), *V = cpu_f(v), *DO = cpu_f(dout), *LSE = cpu_f(lse);
    float *DQ = cpu_f(dq), *DK = cpu_f(dk), *DV = cpu_f(dv);
    const int nt = 2.0 * B * H * T * T * hd < ATTN_PAR_MIN_WORK ? 1 : cpu_threads(be, (size_t)items);
    const size_t per = (size_t)(QB < T ? QB : T) * T;
    float *scratch = cpu_scratch(be, (size_t)nt * 2 * per * sizeof(float), "attention backward");
    if (!scratch) return;
#pragma omp parallel num_threads(nt)
    {
        cpu_region_blas_serial();
        float *P = scratch + (size_t)omp_get_thread_num() * 2 * per; /* [QB, n] probabilities */
        float *dS = P + per;                                           /* [QB, n] dP, then dS */
#pragma omp for schedule(dynamic, 1)
        for (int it = 0; it < items; it++) {
            const int b = it / KV, kvh = it % KV;
            const float *Kb = K + (size_t)b * T * kvs + (size_t)kvh * hd;
            const float *Vb = V + (size_t)b * T * kvs + (size_t)kvh * hd;
            float *DKb = DK + (size_t)b * T * kvs + (size_t)kvh * hd;
            float *DVb = DV + (size_t)b * T * kvs + (size_t)kvh * hd;
            for (int t = 0; t < T; t++) {
                memset(DKb + (size_t)t * kvs, 0, (size_t)hd * sizeof(float));
                memset(DVb + (size_t)t * kvs, 0, (size_t)hd * sizeof(float));
            }
            for (int h = kvh * group; h < (kvh + 1) * group; h++)
                for (int t0 = 0; t0 < T; t0 += QB) {
                    const int t1 = t0 + QB < T ? t0 + QB : T, L = t1 - t0, n = t1;
                    const float *Qb = Q + ((size_t)b * T + t0) * qs + (size_t)h * hd;
                    const float *DOb = DO + ((size_t)b * T + t0) * qs + (size_t)h * hd;
                    float *DQb = DQ + ((size_t)b * T + t0) * qs + (size_t)h * hd;
                    const float *lr = LSE + ((size_t)b * H + h) * T + t0;
                    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, L, n, hd, scale, Qb, (int)qs, Kb, (int)kvs,
                                0.0f, P, n);
                    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, L, n, hd, 1.0f, DOb, (int)qs, Vb, (int)kvs,
                                0.0f, dS, n);
                    for (int r = 0; r < L; r++) {
                        const int nk = t0 + r + 1;
                        float *pr = P + (size_t)r * n, *dr = dS + (size_t)r * n;
                        const float c = (float)probs_dot(pr, dr, nk, lr[r]);
                        for (int j = 0; j < nk; j++) dr[j] = pr[j] * (dr[j] - c) * scale;
                        for (int j = nk; j < n; j++) pr[j] = dr[j] = 0;
                    }
                    /* dQ = dS K; dK += dS^T Q; dV += P^T dO */
                    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, L, hd, n, 1.0f, dS, n, Kb, (int)kvs, 0.0f,
                                DQb, (int)qs);
                    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n, hd, L, 1.0f, dS, n, Qb, (int)qs, 1.0f,
                                DKb, (int)kvs);
                    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n, hd, L, 1.0f, P, n, DOb, (int)qs, 1.0f,
                                DVb, (int)kvs);
                }
        }
    }
    free(scratch);
}
