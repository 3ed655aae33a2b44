#include "stats/attn_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/error.h"

void attn_stats_init(attn_stats *s, int n_layers, int n_heads) {
    s->n_layers = n_layers;
    s->n_heads = n_heads;
    s->sum = gf_calloc((size_t)n_layers * n_heads, sizeof *s->sum);
}

void attn_stats_free(attn_stats *s) {
    free(s->sum);
    memset(s, 0, sizeof *s);
}

void attn_stats_reset(attn_stats *s) { memset(s->sum, 0, (size_t)s->n_layers * s->n_heads * sizeof *s->sum); }

double attn_stats_mean_distance(const attn_stats *s, int layer, int head) {
    const head_stat_sum *h = attn_stats_at(s, layer, head);
    if (h->rows == 0) return NAN;
    double d = h->distance / h->rows;
    return d < 0.5 ? 0.5 : d;
}

double attn_stats_mean_distance_nosink(const attn_stats *s, int layer, int head) {
    const head_stat_sum *h = attn_stats_at(s, layer, head);
    if (h->rows == 0) return NAN;
    double d = h->dist_nosink / h->rows;
    return d < 0.5 ? 0.5 : d;
}

double attn_stats_sink_share(const attn_stats *s, int layer, int head) {
    const head_stat_sum *h = attn_stats_at(s, layer, head);
    return h->rows ? h->sink / h->rows : NAN;
}

double attn_stats_entropy(const attn_stats *s, int layer, int head) {
    const head_stat_sum *h = attn_stats_at(s, layer, head);
    return h->rows ? h->entropy / h->rows : NAN;
}

double attn_stats_output_rms(const attn_stats *s, int layer, int head) {
    const head_stat_sum *h = attn_stats_at(s, layer, head);
    return h->rows ? h->output_rms / h->rows : NAN;
}

void attn_stats_add(attn_stats *s, const double *sums, long rows) {
    for (int l = 0; l < s->n_layers; l++)
        for (int h = 0; h < s->n_heads; h++) {
            const double *x = sums + ((size_t)l * s->n_heads + h) * GF_STAT_COUNT;
            head_stat_sum *a = attn_stats_at(s, l, h);
            a->distance += x[GF_STAT_DISTANCE];
            a->entropy += x[GF_STAT_ENTROPY];
            a->output_rms += x[GF_STAT_OUT_RMS];
            a->dist_nosink += x[GF_STAT_DIST_NOSINK];
            a->sink += x[GF_STAT_SINK];
            a->rows += rows;
        }
}

double attn_stats_concentration(const attn_stats *s, int layer, int head) {
    double lo = INFINITY, hi = -INFINITY;
    for (int h = 0; h < s->n_heads; h++) {
        double e = attn_stats_entropy(s, layer, h);
        if (e < lo) lo = e;
        if (e > hi) hi = e;
    }
    double span = hi - lo;
    if (span < 1e-3) span = 1e-3;
    return 1.0 - (attn_stats_entropy(s, layer, head) - lo) / span;
}
