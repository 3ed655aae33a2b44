/* Stage 2 (per-layer alignment) and AdamW. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "align/stage2.h"
#include "calibrate/capture.h"
#include "formats/model_load.h"
#include "convert/build.h"
#include "be_util.h"
#include "check.h"

/* Two AdamW steps on one scalar, by hand (PyTorch's update rule). */
static void adamw_matches_hand_computation(void **state) {
    (void)state;
    float p = 1.0f, m = 0, v = 0;
    const float lr = 0.1f, b1 = 0.9f, b2 = 0.999f, eps = 1e-8f, wd = 0.01f;
    double P = 1.0, M = 0, V = 0;
    const float g[2] = {0.5f, -0.25f};
    for (int t = 1; t <= 2; t++) {
        tb_adamw(&p, &g[t - 1], &m, &v, 1, lr, b1, b2, eps, wd, t);
        P *= 1 - lr * wd;
        M = b1 * M + (1 - b1) * g[t - 1];
        V = b2 * V + (1 - b2) * g[t - 1] * g[t - 1];
        P -= lr * (M / (1 - pow(b1, t))) / (sqrt(V / (1 - pow(b2, t))) + eps);
        check_close(p, P, 1e-6, 0); /* float32 step on O(1) values */
    }
    /* zero gradient: only the decay acts */
    float q = 2.0f, mq = 0, vq = 0, zero = 0;
    tb_adamw(&q, &zero, &mq, &vq, 1, lr, b1, b2, eps, wd, 1);
    check_close(q, 2.0f * (1 - lr * wd), 2.5e-7, 0); /* one float32 multiply on 2.0: 1 ulp */
}

/* be_adamw over two 64K-element blocks and a tail of 13 (its blocks split over
 * the threads, each a vector loop and its remainder): against a double
 * reference within 1e-6 (float32 steps on O(1) values, a few roundings), the
 * same bits on 1 thread as on 2, and the active copy (p_act) the same bits as p. */
static void adamw_blocks_any_threads(void **state) {
    (void)state;
    const size_t n = 2 * 65536 + 13;
    float *p[2], *m[2], *v[2], *pa = malloc(n * sizeof *pa), *g = malloc(n * sizeof *g);
    for (int r = 0; r < 2; r++) p[r] = malloc(n * sizeof(float)), m[r] = malloc(n * sizeof(float)), v[r] = malloc(n * sizeof(float));
    assert_non_null(pa), assert_non_null(g);
    for (size_t i = 0; i < n; i++) {
        g[i] = (float)((i * 2654435761u) % 20001) / 10000.0f - 1.0f;
        p[0][i] = p[1][i] = (float)((i * 40503u) % 1001) / 500.0f - 1.0f;
        m[0][i] = m[1][i] = 0.1f * g[i];
        v[0][i] = v[1][i] = (float)((i * 7919u) % 997) / 997.0f;
    }
    const gf_adamw h = {1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, 3, 0.5f};
    gf_buf PA = tb_f32(NULL, n), G = tb_f32(g, n);
    for (int r = 0; r < 2; r++) {
        gf_buf P = tb_f32(p[r], n), M = tb_f32(m[r], n), V = tb_f32(v[r], n);
        be_set_threads(be_default(), r + 1);
        be_adamw(be_default(), P, r ? PA : gf_none(), G, M, V, n, &h);
        tb_get(p[r], P, n), tb_get(m[r], M, n), tb_get(v[r], V, n);
        tb_free(&P), tb_free(&M), tb_free(&V);
    }
    be_set_threads(be_default(), 0);
    tb_get(pa, PA, n);
    assert_memory_equal(p[0], p[1], n * sizeof(float));
    assert_memory_equal(m[0], m[1], n * sizeof(float));
    assert_memory_equal(v[0], v[1], n * sizeof(float));
    assert_memory_equal(pa, p[1], n * sizeof(float));
    const double bc1 = 1 - pow(0.9, 3), bc2 = 1 - pow(0.999, 3);
    for (size_t i = 0; i < n; i += 97) {
        const double gi = 0.5 * g[i], M = 0.9 * (0.1f * g[i]) + 0.1 * gi;
        const double V = 0.999 * (double)((float)((i * 7919u) % 997) / 997.0f) + 0.001 * gi * gi;
        const double P0 = (double)((float)((i * 40503u) % 1001) / 500.0f - 1.0f) * (1 - 1e-3 * 0.01);
        const double P = P0 - 1e-3 * (M / bc1) / (sqrt(V / bc2) + 1e-8);
        check_close(p[0][i], P, 1e-6, 0);
        check_close(m[0][i], M, 1e-6, 0);
        check_close(v[0][i], V, 1e-6, 0);
    }
    tb_free(&PA), tb_free(&G);
    for (int r = 0; r < 2; r++) free(p[r]), free(m[r]), free(v[r]);
    free(pa), free(g);
}

static void load_qwen2(model *m) {
    const char *root = getenv("GRAFT_ROOT");
    char p[4096];
    snprintf(p, sizeof p, "%s/tests/fixtures/hf/qwen2", root ? root : ".");
    assert_int_equal(model_load(m, p, NULL), 0);
}

static void capture(const model *m, teacher_capture *c, int seed, int S, int T) {
    int *ids = malloc((size_t)S * T * sizeof *ids);
    for (int i = 0; i < S * T; i++) ids[i] = 3 + (int)((unsigned)(i * 2654435761u + (unsigned)seed * 97u) % (unsigned)(m->cfg.vocab_size - 3));
    assert_int_equal(teacher_capture_run(c, m, ids, S, T, 1, NULL), 0);
    free(ids);
}

/* Loss goes down, the kept state is the best seen, Wo and w_norm are frozen,
 * the curves have steps + 1 points, Stage 2 moves the gates. */
static void stage2_aligns_and_keeps_best(void **state) {
    (void)state;
    model m;
    load_qwen2(&m);
    teacher_capture cal, held;
    capture(&m, &cal, 1, 2, 32);
    capture(&m, &held, 2, 1, 32);
    for (int mode = 0; mode < 2; mode++) {
        student s;
        student_settings set;
        student_settings_default(&set);
        set.init = INIT_TAYLOR_CALIBRATE;
        set.steps = 40;
        set.keep_best = mode ? KEEP_BEST_HELDOUT : KEEP_BEST_TRAIN;
        assert_int_equal(student_init_empty(&s, &m, &set), 0);
        /* reference copy after Stage 1 only */
        student t;
        set.init = INIT_TAYLOR_ONLY;
        assert_int_equal(student_init_empty(&t, &m, &set), 0);
        bool all[2] = {true, true};
        assert_int_equal(student_build_layers(&s, all, &cal, &held, NULL), 0);
        assert_int_equal(student_build_layers(&t, all, &cal, &held, NULL), 0);
        for (int l = 0; l < 2; l++) {
            const stage2_result *r = &s.rep[l].s2;
            assert_true(s.rep[l].has_stage2);
            assert_int_equal(r->steps, 40);
            assert_non_null(r->heldout);
            assert_true(r->loss[40] < r->loss[0]);
            float best = INFINITY;
            int arg = -1;
            const float *key = mode ? r->heldout : r->loss;
            for (int i = 0; i <= 40; i++)
                if (key[i] < best) best = key[i], arg = i;
            assert_int_equal(r->best_step, arg);
            /* the kept state reproduces its recorded loss */
            align_set cs = {capture_xn(&cal, l), capture_attn_out(&cal, l), cal.n_seqs, cal.T};
            /* losses are float64 sums of float32 values: 1e-6 relative, or 1e-5 for the other run's state */
            check_close(gdn_layer_mse(m.be, &s.gcfg, s.gdn[l], &cs), r->best_loss, 1e-9, 1e-6);
            /* stage 2 starts from the Stage 1 state: its loss[0] is the taylor-only layer's loss */
            check_close(gdn_layer_mse(m.be, &t.gcfg, t.gdn[l], &cs), r->loss[0], 0, 1e-5);
            const size_t D = (size_t)s.gcfg.D, hv = (size_t)s.gcfg.H * s.gcfg.dv;
            gdn_params ps, pt;
            gdn_params_alloc(&ps, &s.gcfg);
            gdn_params_alloc(&pt, &t.gcfg);
            assert_int_equal(student_get_layer(&s, l, &ps), 0);
            assert_int_equal(student_get_layer(&t, l, &pt), 0);
            assert_memory_equal(ps.wo, pt.wo, D * hv * sizeof(float));
            assert_memory_equal(ps.w_norm, pt.w_norm, (size_t)s.gcfg.dv * sizeof(float));
            if (r->best_step > 0) assert_true(memcmp(ps.wg, pt.wg, hv * D * sizeof(float)) != 0);
            gdn_params_free(&ps);
            gdn_params_free(&pt);
        }
        student_free(&s);
        student_free(&t);
    }
    teacher_capture_free(&cal);
    teacher_capture_free(&held);
    model_free(&m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(adamw_matches_hand_computation),
        cmocka_unit_test(adamw_blocks_any_threads),
        cmocka_unit_test(stage2_aligns_and_keeps_best),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
