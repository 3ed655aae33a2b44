/* The per-head statistics accumulated inside the backend's attention op
 * (be_attention, added into stats/attn_stats.h)
 * against a direct float64 computation of the full causal attention matrix:
 * mean distance, the distance without the first key (no-sink), the share on
 * the first key (sink), entropy.
 *
 * Inputs: random q, k (GQA 4 query heads over 2 KV heads, head_dim 8, 37
 * tokens), with key 0 of KV head 1 pushed along the queries' common direction
 * so that heads 2 and 3 are sink heads; head 3's sink is so strong (score gap
 * ~150) that in float32 every other key's weight underflows to 0, the case the
 * kernel recomputes rescaled. Run once from position 0 and once as a
 * continuation (pos0 = 20, 17 new rows) over the same cache.
 *
 * Tolerance: 1e-5 relative (1e-6 absolute for the sink share). The kernel's
 * scores are float32 dot products (relative rounding ~1e-7 of scores up to
 * ~150, i.e. up to ~2e-5 absolute on a score, which moves weights by the same
 * relative amount); observed errors are below 1e-6. A wrong definition (sink
 * not excluded, no renormalization, diagonal not 0.5, row 0 not 0.5) moves
 * these means by more than 1e-2. Any NaN or Inf fails. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/rng.h"
#include "stats/attn_stats.h"
#include "be_util.h"

enum { H = 4, KV = 2, HD = 8, T = 37 };

typedef struct {
    double dist, nosink, sink, ent;
} row_means;

/* float64 reference over query rows pos0 .. pos0+nt-1 of head h: sums of each
 * statistic over those rows */
static row_means reference(const float *q, const float *k, int h, int pos0, int nt) {
    const int kvh = h / (H / KV);
    row_means r = {0, 0, 0, 0};
    double s[T], a[T];
    for (int t = 0; t < nt; t++) {
        const int i = pos0 + t;
        double m = -INFINITY;
        for (int j = 0; j <= i; j++) {
            double d = 0;
            for (int x = 0; x < HD; x++) d += (double)q[(size_t)t * H * HD + h * HD + x] * k[(size_t)j * KV * HD + kvh * HD + x];
            s[j] = d / sqrt((double)HD);
            if (s[j] > m) m = s[j];
        }
        double z = 0;
        for (int j = 0; j <= i; j++) z += a[j] = exp(s[j] - m);
        double rest = 0, rest_d = 0;
        for (int j = 0; j <= i; j++) {
            a[j] /= z;
            const double dd = i - j > 0 ? (double)(i - j) : 0.5;
            r.dist += a[j] * dd;
            r.ent -= a[j] * log(fmax(a[j], 1e-10));
            if (j >= 1) {
                /* renormalize over j >= 1 in log space: a[j] itself may underflow in float64 too */
                const double w = exp(s[j] - m);
                rest += w;
                rest_d += w * dd;
            }
        }
        if (i == 0) {
            r.nosink += 0.5;
        } else if (rest > 1e-300) {
            r.nosink += rest_d / rest;
        } else { /* shift by the max over j >= 1 */
            double m1 = -INFINITY, num = 0, den = 0;
            for (int j = 1; j <= i; j++) m1 = fmax(m1, s[j]);
            for (int j = 1; j <= i; j++) {
                const double w = exp(s[j] - m1);
                num += w * (i - j > 0 ? (double)(i - j) : 0.5);
                den += w;
            }
            r.nosink += num / den;
        }
        r.sink += a[0];
    }
    return r;
}

static void close_to(double got, double want, double rel, double abs_floor, const char *what, int h) {
    if (!isfinite(got) || !isfinite(want) || fabs(got - want) > fmax(rel * fabs(want), abs_floor))
        fail_msg("head %d %s: kernel %.12g, float64 %.12g (tolerance %.0e relative)", h, what, got, want, rel);
}

static void make_inputs(float *q, float *k, float *v) {
    rng64 r;
    rng_seed2(&r, 11, 0);
    for (int i = 0; i < T * H * HD; i++) q[i] = (float)rng_normal(&r);
    for (int i = 0; i < T * KV * HD; i++) k[i] = (float)rng_normal(&r);
    for (int i = 0; i < T * KV * HD; i++) v[i] = (float)rng_normal(&r);
    /* heads 2, 3 (KV head 1): every query gets a shared component along e_0;
     * key 0 is long along e_0: a strong sink for head 2, an extreme one for head 3 */
    for (int t = 0; t < T; t++) {
        q[(size_t)t * H * HD + 2 * HD] += 3.0f;
        q[(size_t)t * H * HD + 3 * HD] += 40.0f;
    }
    k[1 * HD] = 10.0f;
}

static void check_run(int pos0, int nt) {
    float *q = malloc(sizeof(float) * T * H * HD), *k = malloc(sizeof(float) * T * KV * HD),
          *v = malloc(sizeof(float) * T * KV * HD), *out = malloc(sizeof(float) * T * H * HD);
    make_inputs(q, k, v);
    attn_stats st;
    attn_stats_init(&st, 1, H);
    /* the query rows of this run start at q row pos0; the cache holds all T keys */
    const gf_attn_shape shape = {1, nt, H, KV, HD, pos0, T};
    gf_buf Q = tb_act(q + (size_t)pos0 * H * HD, (size_t)nt * H * HD), K = tb_act(k, (size_t)T * KV * HD),
           V = tb_act(v, (size_t)T * KV * HD), O = tb_act(NULL, (size_t)nt * H * HD),
           S = tb_new(GF_F64, NULL, GF_F64, (size_t)H * GF_STAT_COUNT);
    be_attention(be_default(), O, gf_none(), S, Q, K, V, &shape);
    double sums[H * GF_STAT_COUNT];
    assert_int_equal(be_download(be_default(), sums, GF_F64, S, (size_t)H * GF_STAT_COUNT), 0);
    attn_stats_add(&st, sums, nt);
    tb_get(out, O, (size_t)nt * H * HD);
    tb_free(&Q), tb_free(&K), tb_free(&V), tb_free(&O), tb_free(&S);
    double sink_seen = 0;
    for (int h = 0; h < H; h++) {
        const row_means r = reference(q + (size_t)pos0 * H * HD, k, h, pos0, nt);
        const head_stat_sum *acc = attn_stats_at(&st, 0, h);
        assert_int_equal(acc->rows, nt);
        close_to(acc->distance, r.dist, 1e-5, 0, "distance sum", h);
        close_to(acc->dist_nosink, r.nosink, 1e-5, 0, "no-sink distance sum", h);
        close_to(acc->sink, r.sink, 1e-5, 1e-6 * nt, "sink share sum", h);
        close_to(acc->entropy, r.ent, 1e-5, 1e-6 * nt, "entropy sum", h);
        /* the means the rest of graft reads */
        close_to(attn_stats_mean_distance_nosink(&st, 0, h), fmax(r.nosink / nt, 0.5), 1e-5, 0, "mean no-sink distance", h);
        close_to(attn_stats_sink_share(&st, 0, h), r.sink / nt, 1e-5, 1e-6, "mean sink share", h);
        if (h == 3) sink_seen = r.sink / nt;
    }
    /* the inputs did make an extreme sink, and it differs from the plain distance */
    assert_true(sink_seen > 0.999);
    assert_true(fabs(attn_stats_mean_distance_nosink(&st, 0, 3) - attn_stats_mean_distance(&st, 0, 3)) > 1.0);
    attn_stats_free(&st);
    free(q);
    free(k);
    free(v);
    free(out);
}

static void stats_from_position_0(void **state) {
    (void)state;
    check_run(0, T);
}

static void stats_continued(void **state) {
    (void)state;
    check_run(20, T - 20);
}

/* no rows accumulated: the means are NaN, not 0 */
static void empty_stats_are_nan(void **state) {
    (void)state;
    attn_stats st;
    attn_stats_init(&st, 1, 2);
    assert_true(isnan(attn_stats_mean_distance_nosink(&st, 0, 1)));
    assert_true(isnan(attn_stats_sink_share(&st, 0, 1)));
    attn_stats_free(&st);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stats_from_position_0),
        cmocka_unit_test(stats_continued),
        cmocka_unit_test(empty_stats_are_nan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
