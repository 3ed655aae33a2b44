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
        cmocka_unit_test(stage2_aligns_and_keeps_best),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
