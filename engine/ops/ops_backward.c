#include "ops/ops_backward.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

void op_linear_backward(float *dx, float *dW, float *db, const float *dy, const float *x, const float *W, int T,
                        int in, int out, bool accumulate_dx) {
    if (dx) /* dx[T, in] = dy[T, out] W[out, in] */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, in, out, 1.0f, dy, out, W, in,
                    accumulate_dx ? 1.0f : 0.0f, dx, in);
    if (dW) /* dW[out, in] += dy^T[out, T] x[T, in] */
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, out, in, T, 1.0f, dy, out, x, in, 1.0f, dW, in);
    if (db)
        for (int t = 0; t < T; t++)
            for (int o = 0; o < out; o++) db[o] += dy[(size_t)t * out + o];
}

void op_rmsnorm_backward(float *dx, float *dw, const float *dy, const float *x, const float *w, int T, int n,
                         float eps, bool accumulate_dx) {
    if (dw) /* serial over rows: a fixed summation order keeps runs bit-reproducible */
        for (int t = 0; t < T; t++) {
            const float *xr = x + (size_t)t * n, *gr = dy + (size_t)t * n;
            double ss = 0;
            for (int i = 0; i < n; i++) ss += (double)xr[i] * xr[i];
            const float r = (float)(1.0 / sqrt(ss / n + eps));
            for (int i = 0; i < n; i++) dw[i] += gr[i] * xr[i] * r;
        }
    if (!dx) return;
#pragma omp parallel for if (T > 16)
    for (int t = 0; t < T; t++) {
        const float *xr = x + (size_t)t * n, *gr = dy + (size_t)t * n;
        float *dr = dx + (size_t)t * n;
        double ss = 0, dot = 0;
        for (int i = 0; i < n; i++) {
            ss += (double)xr[i] * xr[i];
            dot += (double)gr[i] * w[i] * xr[i];
        }
        const double r = 1.0 / sqrt(ss / n + eps);
        const float a = (float)r, c = (float)(r * r * r * dot / n);
        for (int i = 0; i < n; i++) {
            const float g = a * gr[i] * w[i] - c * xr[i];
            dr[i] = accumulate_dx ? dr[i] + g : g;
        }
    }
}

void op_swiglu_backward(float *dgate, float *dup, const float *dact, const float *gate, const float *up, int T,
                        int F) {
    const size_t n = (size_t)T * F;
#pragma omp parallel for if (n > 65536)
    for (size_t i = 0; i < n; i++) {
        const float g = gate[i], s = 1.0f / (1.0f + expf(-g)), silu = g * s, d = dact[i];
        dup[i] = d * silu;
        dgate[i] = d * up[i] * s * (1.0f + g * (1.0f - s));
    }
}

void op_rope_backward(float *dx, const double *inv_freq, int T, int nh, int hd, int pos0, rope_pairing pairing) {
    const int half = hd / 2;
#pragma omp parallel for if (T > 16)
    for (int t = 0; t < T; t++) {
        const double pos = pos0 + t;
        for (int i = 0; i < half; i++) {
            const double a = pos * inv_freq[i];
            const float c = (float)cos(a), s = (float)sin(a);
            const int i0 = pairing == ROPE_ADJACENT ? 2 * i : i;
            const int i1 = pairing == ROPE_ADJACENT ? 2 * i + 1 : i + half;
            for (int h = 0; h < nh; h++) {
                float *v = dx + (size_t)t * nh * hd + (size_t)h * hd;
                const float g0 = v[i0], g1 = v[i1]; /* transpose of [[c, -s], [s, c]] */
                v[i0] = g0 * c + g1 * s;
                v[i1] = -g0 * s + g1 * c;
            }
        }
    }
}

void op_embedding_backward(float *dE, const float *dx, const int *tokens, int T, int D) {
    for (int t = 0; t < T; t++) {
        float *row = dE + (size_t)tokens[t] * D;
        const float *g = dx + (size_t)t * D;
        for (int i = 0; i < D; i++) row[i] += g[i];
    }
}

static float dotf(const float *a, const float *b, int n) {
    float s = 0;
    for (int i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

void attention_backward(float *dq, float *dk, float *dv, const float *dout, const float *q, const float *k,
                        const float *v, const attn_shape *s, int T) {
    const int H = s->n_heads, KV = s->n_kv_heads, hd = s->head_dim, group = H / KV;
    const size_t qs = (size_t)H * hd, kvs = (size_t)KV * hd;
    const float scale = 1.0f / sqrtf((float)hd);
    memset(dk, 0, (size_t)T * kvs * sizeof *dk);
    memset(dv, 0, (size_t)T * kvs * sizeof *dv);
    /* one KV head per iteration: its query heads write only its dk, dv columns */
#pragma omp parallel
    {
        float *p = gf_malloc((size_t)T * sizeof *p);
        float *dp = gf_malloc((size_t)T * sizeof *dp);
#pragma omp for schedule(dynamic, 1)
        for (int kvh = 0; kvh < KV; kvh++) {
            for (int h = kvh * group; h < (kvh + 1) * group; h++) {
                for (int t = 0; t < T; t++) {
                    const int n = t + 1;
                    const float *qr = q + (size_t)t * qs + (size_t)h * hd;
                    const float *gr = dout + (size_t)t * qs + (size_t)h * hd;
                    float m = -INFINITY;
                    for (int j = 0; j < n; j++) {
                        p[j] = dotf(qr, k + (size_t)j * kvs + (size_t)kvh * hd, hd) * scale;
                        if (p[j] > m) m = p[j];
                    }
                    double z = 0;
                    for (int j = 0; j < n; j++) {
                        p[j] = expf(p[j] - m);
                        z += p[j];
                    }
                    const float inv = (float)(1.0 / z);
                    double pdp = 0;
                    for (int j = 0; j < n; j++) {
                        p[j] *= inv;
                        dp[j] = dotf(gr, v + (size_t)j * kvs + (size_t)kvh * hd, hd);
                        pdp += (double)p[j] * dp[j];
                    }
                    float *dqr = dq + (size_t)t * qs + (size_t)h * hd;
                    for (int d = 0; d < hd; d++) dqr[d] = 0;
                    for (int j = 0; j < n; j++) {
                        const float ds = p[j] * (dp[j] - (float)pdp) * scale;
                        const float *kr = k + (size_t)j * kvs + (size_t)kvh * hd;
                        float *dkr = dk + (size_t)j * kvs + (size_t)kvh * hd;
                        float *dvr = dv + (size_t)j * kvs + (size_t)kvh * hd;
                        for (int d = 0; d < hd; d++) {
                            dqr[d] += ds * kr[d];
                            dkr[d] += ds * qr[d];
                            dvr[d] += p[j] * gr[d];
                        }
                    }
                }
            }
        }
        free(p);
        free(dp);
    }
}
