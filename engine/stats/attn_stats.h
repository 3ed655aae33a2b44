/* Per-head attention statistics of METHOD.md section 4, accumulated inside the
 * attention kernel (no T x T matrix is ever stored).
 *
 * For query head h and query position i with causal probabilities A[i, j]:
 *   distance  = sum_j A[i,j] * max(i - j, 0.5)      (the diagonal counts 0.5)
 *   entropy   = -sum_j A[i,j] * log(max(A[i,j], 1e-10))
 *   output_rms = sqrt(mean_d tc[i,d]^2), tc = sum_j A[i,j] v_j (+ v bias), before o_proj
 *   dist_nosink = sum_{j>=1} A[i,j] max(i - j, 0.5) / sum_{j>=1} A[i,j]: the distance
 *                 without the first key (the attention sink); 0.5 for i = 0 (a row whose
 *                 other keys underflow in float next to the sink is recomputed rescaled)
 *   sink       = A[i,0]: the share of attention on the first key
 * (the last two are backend.h's GF_STAT_DIST_NOSINK and GF_STAT_SINK).
 * Each is summed over every (sequence, query position); the means divide by
 * that count. Both mean distances are clamped >= 0.5. */
#ifndef GRAFT_STATS_ATTN_STATS_H
#define GRAFT_STATS_ATTN_STATS_H

typedef struct {
    double distance, entropy, output_rms; /* sums */
    double dist_nosink, sink;             /* sums */
    long rows;                            /* query positions summed */
} head_stat_sum;

typedef struct {
    int n_layers, n_heads;
    head_stat_sum *sum; /* [L * H] */
} attn_stats;

void attn_stats_init(attn_stats *s, int n_layers, int n_heads);
void attn_stats_free(attn_stats *s);
void attn_stats_reset(attn_stats *s);

static inline head_stat_sum *attn_stats_at(const attn_stats *s, int layer, int head) {
    return &s->sum[(long)layer * s->n_heads + head];
}

/* Means over the accumulated rows (NaN when nothing was accumulated). */
double attn_stats_mean_distance(const attn_stats *s, int layer, int head);
double attn_stats_entropy(const attn_stats *s, int layer, int head);
double attn_stats_output_rms(const attn_stats *s, int layer, int head);
double attn_stats_mean_distance_nosink(const attn_stats *s, int layer, int head);
double attn_stats_sink_share(const attn_stats *s, int layer, int head);

/* Adds the per-head sums a backend accumulated (sums [L, H, GF_STAT_COUNT]
 * in backend.h's order) over `rows` query rows per head. */
void attn_stats_add(attn_stats *s, const double *sums, long rows);

/* c_h = 1 - (H_h - min H) / max(max H - min H, 1e-3) over the heads of the layer. */
double attn_stats_concentration(const attn_stats *s, int layer, int head);

#endif
