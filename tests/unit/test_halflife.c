/* graft halflife's engine (engine/halflife): the per-token gates captured from
 * the GDN layer's own forward and their per-head summaries, against a float64
 * computation of g_t = -exp(A_log) softplus(Wa x_t + dt_bias) and
 * beta_t = sigmoid(Wb x_t) on a hand-made layer (layer 0 of the llama fixture,
 * whose input is RMSNorm(embedding) and so computable here); a head with
 * Wa = 0 has its idle half-life at every token; quantiles, flags, targets and
 * the teacher statistics reader on hand-made values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/rng.h"
#include "formats/model_load.h"
#include "halflife/halflife.h"
#include "convert/build.h"
#include "host_weights.h"
#include "check.h"

static int cmp_d(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* numpy's default quantile (linear between order statistics), written again here */
static double ref_quantile(double *v, size_t n, double p) {
    qsort(v, n, sizeof *v, cmp_d);
    const double h = (double)(n - 1) * p;
    const size_t lo = (size_t)h, hi = lo + 1 < n ? lo + 1 : lo;
    return v[lo] + (h - (double)lo) * (v[hi] - v[lo]);
}

static double softplus_d(double x) { return x > 20 ? x : log1p(exp(x)); }

typedef struct {
    gf_backend *be;
    int H;
    float *g, *beta; /* [N, H] of layer 0 */
    int calls;
} grab;

static int grab_gates(void *ud, int layer, gf_buf g, gf_buf beta, int N) {
    grab *c = ud;
    assert_int_equal(layer, 0);
    c->calls++;
    if (be_download(c->be, c->g, GF_F32, g, (size_t)N * c->H) != 0) return -1;
    return be_download(c->be, c->beta, GF_F32, beta, (size_t)N * c->H);
}

static void measured_gates_match_float64(void **state) {
    (void)state;
    char path[4096];
    const char *root = getenv("GRAFT_ROOT");
    snprintf(path, sizeof path, "%s/tests/fixtures/hf/llama", root ? root : ".");
    model m;
    assert_int_equal(model_load(&m, path, NULL), 0);
    student s;
    student_settings set;
    student_settings_default(&set);
    set.init = INIT_RANDOM;
    assert_int_equal(student_init_empty(&s, &m, &set), 0);
    const bool first[3] = {true, false, false};
    assert_int_equal(student_build_layers(&s, first, NULL, NULL, NULL), 0);
    const int D = m.cfg.dim, H = s.gcfg.H, V = m.cfg.vocab_size;
    gdn_params p;
    gdn_params_alloc(&p, &s.gcfg);
    assert_int_equal(student_get_layer(&s, 0, &p), 0);
    /* hand-made gates: head 0 reads nothing from its input (Wa = 0); the other
     * heads' Wa and Wb rows are N(0, 1) so that the tokens spread them */
    rng64 r;
    rng_seed2(&r, 35, 0);
    for (int h = 0; h < H; h++) {
        for (int i = 0; i < D; i++) {
            p.wa[(size_t)h * D + i] = h == 0 ? 0.0f : (float)rng_normal(&r);
            p.wb[(size_t)h * D + i] = (float)(0.5 * rng_normal(&r));
        }
        p.a_log[h] = (float)log(0.2 + 0.3 * h);
        p.dt_bias[h] = (float)(-3.0 + 0.8 * h);
    }
    assert_int_equal(student_put_layer(&s, 0, &p), 0);
    assert_int_equal(student_set_gdn(&s, first), 0);

    enum { B = 3, T = 41 };
    const size_t N = (size_t)B * T;
    int ids[B * T];
    for (size_t i = 0; i < N; i++) ids[i] = (int)(rng_uniform(&r) * V) % V;

    /* float64: x_t = RMSNorm(embedding[tok]) * attn_norm, then the gates */
    const model_weights *w = HW(&m);
    double *hl = malloc(N * H * sizeof *hl), *bt = malloc(N * H * sizeof *bt);
    for (size_t t = 0; t < N; t++) {
        const float *e = w->tok_embed + (size_t)ids[t] * D;
        double ss = 0;
        for (int i = 0; i < D; i++) ss += (double)e[i] * e[i];
        const double inv = 1.0 / sqrt(ss / D + m.cfg.norm_eps);
        for (int h = 0; h < H; h++) {
            double a = 0, b = 0;
            for (int i = 0; i < D; i++) {
                const double x = e[i] * inv * w->layers[0].attn_norm[i];
                a += p.wa[(size_t)h * D + i] * x;
                b += p.wb[(size_t)h * D + i] * x;
            }
            const double g = -exp((double)p.a_log[h]) * softplus_d(a + p.dt_bias[h]);
            hl[t * H + h] = log(2.0) / -g;
            bt[t * H + h] = 1.0 / (1.0 + exp(-b));
        }
    }

    /* per token, through the transformer's hook: float32 rounding of the norm,
     * a 48-term dot product and exp / log1p is ~1e-6 relative; 1e-4 leaves room
     * and still fails on any wrong term (a missing exp(A_log) moves it by 0.2-2.5x) */
    grab c = {m.be, H, malloc(N * H * sizeof(float)), malloc(N * H * sizeof(float)), 0};
    tf_run *run;
    const tf_run_opts ro = {.B = B, .T = T};
    assert_int_equal(tf_run_open(&run, &s.tf, &ro), 0);
    const tf_hooks hooks = {NULL, &c, NULL, grab_gates};
    assert_int_equal(tf_forward(run, ids, B, T, 0, &hooks), 0);
    assert_int_equal(be_sync(m.be), 0);
    tf_run_close(run);
    assert_int_equal(c.calls, 1);
    const double idle0 = log(2.0) / (exp((double)p.a_log[0]) * softplus_d(p.dt_bias[0]));
    for (size_t k = 0; k < N * H; k++) {
        check_close(log(2.0) / -(double)c.g[k], hl[k], 0, 1e-4);
        check_close(c.beta[k], bt[k], 1e-6, 1e-4);
        if (k % H == 0) check_close(log(2.0) / -(double)c.g[k], idle0, 0, 1e-5); /* Wa = 0: idle at every token */
    }

    /* the summaries of halflife_measure (B sequences of T) against the float64 quantiles */
    halflife_request q;
    halflife_request_default(&q);
    q.ctx = T, q.seqs = B, q.batch = 2; /* two forwards: rows of the second land after the first's */
    halflife_result res;
    assert_int_equal(halflife_measure(&s.tf, ids, &q, NULL, NULL, &res), 0);
    assert_int_equal(res.n_heads, H);
    assert_int_equal(res.tokens, (long)N);
    double *col = malloc(N * sizeof *col);
    int spread_heads = 0;
    for (int h = 0; h < H; h++) {
        const halflife_head *hd = &res.heads[h];
        assert_int_equal(hd->layer, 0);
        assert_int_equal(hd->head, h);
        check_close(hd->idle, log(2.0) / (exp((double)p.a_log[h]) * softplus_d(p.dt_bias[h])), 0, 1e-12);
        const double ps[3] = {0.1, 0.5, 0.9}, got[3] = {hd->p10, hd->p50, hd->p90},
                     gotb[3] = {hd->beta_p10, hd->beta_p50, hd->beta_p90};
        long under = 0, over = 0, in_hist = 0;
        for (size_t t = 0; t < N; t++) under += hl[t * H + h] < 1, over += hl[t * H + h] > T;
        for (int b = 0; b < HL_HIST_BINS; b++) in_hist += hd->hist[b];
        assert_int_equal(in_hist, (long)N);
        /* one token on the edge of 1 or T may fall either side in float32 */
        check_close(hd->under_one, (double)under / N, 1.0 / N, 0);
        check_close(hd->over_ctx, (double)over / N, 1.0 / N, 0);
        for (int i = 0; i < 3; i++) {
            /* an order statistic moves no more than the largest per-token error: same 1e-4 */
            for (size_t t = 0; t < N; t++) col[t] = hl[t * H + h];
            check_close(got[i], ref_quantile(col, N, ps[i]), 0, 1e-4);
            for (size_t t = 0; t < N; t++) col[t] = bt[t * H + h];
            check_close(gotb[i], ref_quantile(col, N, ps[i]), 1e-6, 1e-4);
        }
        if (h == 0) {
            check_close(hd->p10, hd->idle, 0, 1e-5);
            check_close(hd->p90, hd->idle, 0, 1e-5);
            int nonzero = 0;
            for (int b = 0; b < HL_HIST_BINS; b++) nonzero += hd->hist[b] != 0;
            assert_int_equal(nonzero, 1);
        } else {
            spread_heads += hd->p90 > 1.5 * hd->p10; /* the quantiles are told apart */
        }
    }
    assert_true(spread_heads >= H - 2);
    halflife_result_free(&res);
    free(col);
    free(c.g);
    free(c.beta);
    free(hl);
    free(bt);
    gdn_params_free(&p);
    student_free(&s);
    model_free(&m);
}

static void quantiles_of_hand_values(void **state) {
    (void)state;
    const double a[4] = {1, 2, 3, 4};
    check_close(halflife_quantile(a, 4, 0.5), 2.5, 1e-12, 0);
    check_close(halflife_quantile(a, 4, 0.1), 1.3, 1e-12, 0);
    check_close(halflife_quantile(a, 4, 0.9), 3.7, 1e-12, 0);
    check_close(halflife_quantile(a, 4, 1.0), 4, 0, 0);
    const double b[3] = {1, 2, INFINITY};
    check_close(halflife_quantile(b, 3, 0.5), 2, 0, 0);
    assert_true(isinf(halflife_quantile(b, 3, 0.9)));
    /* g = 0 (no decay): half-life +inf, counted over the context */
    const float g[4] = {-log(2.0f) / 2, -log(2.0f) / 10, 0.0f, -log(2.0f) * 4}, beta[4] = {0.1f, 0.2f, 0.3f, 0.4f};
    halflife_head hd;
    memset(&hd, 0, sizeof hd);
    halflife_summarize(g, beta, 4, 1, 8, &hd);
    check_close(hd.under_one, 0.25, 0, 0);
    check_close(hd.over_ctx, 0.5, 0, 0);
    check_close(hd.p50, 6, 1e-5, 0); /* sorted 0.25, 2, 10, inf */
    check_close(hd.beta_p50, 0.25, 1e-7, 0);
}

static halflife_head healthy(void) {
    halflife_head h;
    memset(&h, 0, sizeof h);
    h.ctx = 256;
    h.target = 40;
    h.p10 = 20, h.p50 = 40, h.p90 = 80;
    h.beta_p10 = 0.3, h.beta_p50 = 0.5, h.beta_p90 = 0.7;
    return h;
}

static void flags_and_their_order(void **state) {
    (void)state;
    halflife_thresholds t;
    halflife_thresholds_default(&t);
    halflife_head h[7];
    for (int i = 0; i < 7; i++) h[i] = healthy();
    h[1].p10 = 2, h[1].p50 = 5;                   /* 40 / 5 = 8 > 4 */
    h[2].p50 = 200, h[2].p90 = 300;               /* 5x */
    h[3].p10 = 1, h[3].p90 = 400;                 /* 400x spread */
    h[4].beta_p50 = 0.02;
    h[5].beta_p50 = 0.99;
    h[6].target = NAN, h[6].under_one = 0.7;      /* no target: the share decides */
    const unsigned want[7] = {0, HL_FLAG_TOO_SHORT, HL_FLAG_TOO_LONG, HL_FLAG_TOO_SPREAD, HL_FLAG_BETA_SHUT,
                              HL_FLAG_BETA_SATURATED, HL_FLAG_TOO_SHORT};
    for (int i = 0; i < 7; i++) {
        halflife_flag(&h[i], &t);
        assert_int_equal(h[i].flags, want[i]);
        assert_true(i == 0 ? h[i].severity == 0 && h[i].reason[0] == 0 : h[i].severity >= 1 && h[i].reason[0] != 0);
    }
    /* at the threshold exactly: not flagged */
    halflife_head edge = healthy();
    edge.p50 = 10;
    halflife_flag(&edge, &t);
    assert_int_equal(edge.flags, 0);
    /* a head whose teacher looked half a token back and which follows it: most of its tokens are
     * under one token, which is its target, not a fault (the share rules judge heads without one) */
    halflife_head local = healthy();
    local.target = 0.5, local.p10 = 0.3, local.p50 = 0.5, local.p90 = 0.95, local.under_one = 0.92;
    halflife_flag(&local, &t);
    assert_int_equal(local.flags, 0);
    halflife_result r = {256, 1, 256, 7, h};
    int idx[7];
    assert_int_equal(halflife_flagged_order(&r, idx), 6);
    for (int i = 1; i < 6; i++) assert_true(h[idx[i - 1]].severity >= h[idx[i]].severity);
    assert_int_equal(idx[0], 5); /* beta 0.99: (1 - 0.95) / 0.01 = 5, the largest excess (shut: 0.05 / 0.02 = 2.5) */
}

static void targets_follow_stage1(void **state) {
    (void)state;
    student_settings set;
    student_settings_default(&set);
    const double all[4] = {2, 1e4, 0.05, NAN}, ns[4] = {3, 5, 7, 9};
    double t[4];
    halflife_targets(&set, all, ns, 4, t);
    check_close(t[0], 2, 1e-12, 0);
    check_close(t[1], log(2.0) / 1e-3, 1e-9, 0); /* target_g clamped at 1e-3 */
    check_close(t[2], log(2.0) / 5, 1e-12, 0);   /* and at 5 */
    assert_true(isnan(t[3]));
    set.distance = DECAY_DISTANCE_NO_SINK;
    halflife_targets(&set, all, ns, 4, t);
    check_close(t[3], 9, 1e-12, 0);
    set.half_life = 64;
    halflife_targets(&set, all, ns, 4, t);
    for (int i = 0; i < 4; i++) check_close(t[i], 64, 0, 0);
}

static void teacher_stats_reader(void **state) {
    (void)state;
    char path[] = "/tmp/graft_hl_statsXXXXXX";
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *json = "{\"teacher_attention_stats\":[{\"layer\":1,\"heads\":[{\"head\":0,\"mean_distance\":7.5,"
                       "\"mean_distance_no_sink\":3.25},{\"head\":1,\"mean_distance\":2}]}]}";
    assert_int_equal(write(fd, json, strlen(json)), (ssize_t)strlen(json));
    close(fd);
    double all[6], ns[6];
    assert_int_equal(halflife_teacher_read(path, 3, 2, all, ns), 1);
    check_close(all[2], 7.5, 0, 0);
    check_close(ns[2], 3.25, 0, 0);
    check_close(all[3], 2, 0, 0);
    assert_true(isnan(ns[3]) && isnan(all[0]) && isnan(all[5]));
    FILE *f = fopen(path, "w");
    fputs("{\"teacher_attention_stats\": [", f);
    fclose(f);
    assert_int_equal(halflife_teacher_read(path, 3, 2, all, ns), -1);
    assert_non_null(strstr(gf_last_error(), path));
    unlink(path);
    assert_int_equal(halflife_teacher_read(path, 3, 2, all, ns), 0); /* absent: nothing known, no error */
}

static void request_checks(void **state) {
    (void)state;
    halflife_request q;
    halflife_request_default(&q);
    assert_int_equal(halflife_request_check(&q), 0);
    q.ctx = 1;
    assert_int_equal(halflife_request_check(&q), -1);
    assert_non_null(strstr(gf_last_error(), "--ctx"));
    halflife_request_default(&q);
    q.seqs = 0;
    assert_int_equal(halflife_request_check(&q), -1);
    assert_non_null(strstr(gf_last_error(), "--seqs"));
    halflife_request_default(&q);
    q.th.beta_shut = 0.99;
    assert_int_equal(halflife_request_check(&q), -1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(measured_gates_match_float64),
        cmocka_unit_test(quantiles_of_hand_values),
        cmocka_unit_test(flags_and_their_order),
        cmocka_unit_test(targets_follow_stage1),
        cmocka_unit_test(teacher_stats_reader),
        cmocka_unit_test(request_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
