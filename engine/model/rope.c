#include "model/rope.h"

#include <math.h>
#include <stdlib.h>

#include "core/error.h"

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

void rope_table(float *table, const model_config *c, int n_pos) {
    const int half = c->head_dim / 2;
    double *inv = gf_malloc((size_t)(half ? half : 1) * sizeof *inv);
    rope_inv_freq(inv, c);
    for (int p = 0; p < n_pos; p++)
        for (int i = 0; i < half; i++) {
            const double a = (double)p * inv[i];
            table[((size_t)p * half + i) * 2] = (float)cos(a);
            table[((size_t)p * half + i) * 2 + 1] = (float)sin(a);
        }
    free(inv);
}
