#include <cblas.h>
#include <math.h>
#include <string.h>

#include "ops/ops.h"

void op_linear(float *y, const float *x, const float *W, const float *b, int T, int in, int out) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, out, in, 1.0f, x, in, W, in, 0.0f, y, out);
    if (b) {
#pragma omp parallel for if (T * out > 65536)
        for (int t = 0; t < T; t++)
            for (int o = 0; o < out; o++) y[(size_t)t * out + o] += b[o];
    }
}

void op_rmsnorm(float *y, const float *x, const float *w, int T, int n, float eps) {
#pragma omp parallel for if (T > 16)
    for (int t = 0; t < T; t++) {
        const float *xr = x + (size_t)t * n;
        float *yr = y + (size_t)t * n;
        double ss = 0;
        for (int i = 0; i < n; i++) ss += (double)xr[i] * xr[i];
        float inv = (float)(1.0 / sqrt(ss / n + eps));
        for (int i = 0; i < n; i++) yr[i] = xr[i] * inv * w[i];
    }
}

void op_head_rmsnorm(float *x, const float *w, int T, int nh, int hd, float eps) {
    op_rmsnorm(x, x, w, T * nh, hd, eps);
}

void op_swiglu(float *gate, const float *up, int T, int F) {
    size_t n = (size_t)T * F;
#pragma omp parallel for if (n > 65536)
    for (size_t i = 0; i < n; i++) {
        float g = gate[i];
        gate[i] = g / (1.0f + expf(-g)) * up[i];
    }
}

void op_add(float *x, const float *y, size_t n) {
    for (size_t i = 0; i < n; i++) x[i] += y[i];
}

void rope_inv_freq(double *inv_freq, const model_config *c) {
    const int half = c->head_dim / 2;
    const rope_scaling *s = &c->rope_scaling;
    for (int i = 0; i < half; i++) {
        double f = 1.0 / pow((double)c->rope_theta, (2.0 * i) / c->head_dim);
        if (s->type == ROPE_SCALING_LINEAR) {
            f /= s->factor;
        } else if (s->type == ROPE_SCALING_FACTORS) {
            f /= s->freq_factors[i];
        } else if (s->type == ROPE_SCALING_LLAMA3) {
            /* long wavelengths slowed by factor, short kept, smooth blend between */
            double wavelen = 2.0 * M_PI / f;
            double low_wavelen = s->original_max_pos / s->low_freq_factor;
            double high_wavelen = s->original_max_pos / s->high_freq_factor;
            if (wavelen > low_wavelen) {
                f /= s->factor;
            } else if (wavelen >= high_wavelen) {
                double smooth = (s->original_max_pos / wavelen - s->low_freq_factor) /
                                (s->high_freq_factor - s->low_freq_factor);
                f = (1.0 - smooth) * f / s->factor + smooth * f;
            }
        }
        inv_freq[i] = f;
    }
}

void op_rope(float *x, const double *inv_freq, int T, int nh, int hd, int pos0, rope_pairing pairing) {
    const int half = hd / 2;
#pragma omp parallel for if (T > 16)
    for (int t = 0; t < T; t++) {
        const double pos = pos0 + t;
        for (int i = 0; i < half; i++) {
            const double a = pos * inv_freq[i];
            const float c = (float)cos(a), s = (float)sin(a);
            for (int h = 0; h < nh; h++) {
                float *v = x + (size_t)t * nh * hd + (size_t)h * hd;
                const int i0 = pairing == ROPE_ADJACENT ? 2 * i : i;
                const int i1 = pairing == ROPE_ADJACENT ? 2 * i + 1 : i + half;
                const float x0 = v[i0], x1 = v[i1];
                v[i0] = x0 * c - x1 * s;
                v[i1] = x0 * s + x1 * c;
            }
        }
    }
}
