#include "attention/attention_train.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

void attention_train_forward(float *out, float *P, const float *q, const float *k, const float *v,
                             const attn_shape *s, int T) {
    const int H = s->n_heads, KV = s->n_kv_heads, hd = s->head_dim, group = H / KV;
    const int qs = H * hd, kvs = KV * hd;
    const float scale = 1.0f / sqrtf((float)hd);
#pragma omp parallel for schedule(dynamic, 1)
    for (int h = 0; h < H; h++) {
        const int g = h / group;
        float *Ph = P + (size_t)h * T * T;
        /* S[T, T] = scale Q_h K_g^T (the upper triangle is computed, then masked) */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, hd, scale, q + (size_t)h * hd, qs,
                    k + (size_t)g * hd, kvs, 0.0f, Ph, T);
        for (int t = 0; t < T; t++) {
            float *row = Ph + (size_t)t * T;
            float m = -INFINITY;
            for (int j = 0; j <= t; j++) m = row[j] > m ? row[j] : m;
            double z = 0;
            for (int j = 0; j <= t; j++) z += (row[j] = expf(row[j] - m));
            const float inv = (float)(1.0 / z);
            for (int j = 0; j <= t; j++) row[j] *= inv;
            for (int j = t + 1; j < T; j++) row[j] = 0;
        }
        /* O_h[T, hd] = P V_g */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, hd, T, 1.0f, Ph, T, v + (size_t)g * hd, kvs, 0.0f,
                    out + (size_t)h * hd, qs);
    }
}

void attention_train_backward(float *dq, float *dk, float *dv, const float *dout, const float *P, const float *q,
                              const float *k, const float *v, const attn_shape *s, int T, float *scratch) {
    const int H = s->n_heads, KV = s->n_kv_heads, hd = s->head_dim, group = H / KV;
    const int qs = H * hd, kvs = KV * hd;
    const float scale = 1.0f / sqrtf((float)hd);
    /* one KV head per iteration: its query heads write only its dk, dv columns */
#pragma omp parallel for schedule(dynamic, 1)
    for (int g = 0; g < KV; g++) {
        for (int h = g * group; h < (g + 1) * group; h++) {
            const float *Ph = P + (size_t)h * T * T;
            float *dS = scratch + (size_t)h * T * T;
            const float beta = h == g * group ? 0.0f : 1.0f;
            /* dV_g += P^T dO_h */
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hd, T, 1.0f, Ph, T, dout + (size_t)h * hd, qs, beta,
                        dv + (size_t)g * hd, kvs);
            /* dP = dO_h V_g^T; dS = P (dP - rowsum(P dP)) scale */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, hd, 1.0f, dout + (size_t)h * hd, qs,
                        v + (size_t)g * hd, kvs, 0.0f, dS, T);
            for (int t = 0; t < T; t++) {
                const float *pr = Ph + (size_t)t * T;
                float *dr = dS + (size_t)t * T;
                double dot = 0;
                for (int j = 0; j <= t; j++) dot += (double)pr[j] * dr[j];
                const float c = (float)dot;
                for (int j = 0; j <= t; j++) dr[j] = pr[j] * (dr[j] - c) * scale;
                for (int j = t + 1; j < T; j++) dr[j] = 0;
            }
            /* dQ_h = dS K_g; dK_g += dS^T Q_h */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, hd, T, 1.0f, dS, T, k + (size_t)g * hd, kvs, 0.0f,
                        dq + (size_t)h * hd, qs);
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hd, T, 1.0f, dS, T, q + (size_t)h * hd, qs, beta,
                        dk + (size_t)g * hd, kvs);
        }
    }
}
