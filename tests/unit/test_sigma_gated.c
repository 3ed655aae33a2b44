/* Stage 1's `gated` value-scale fit (student_settings.sigma_fit = SIGMA_FIT_GATED)
 * on the qwen2 fixture (2 layers, 5 query heads over 1 KV head, head dim 8),
 * 2 x 40 random tokens, against a float64 recomputation:
 *   - a student with all four components under `gated` equals the one with
 *     decay, beta and gate only, bit for bit, except Wg's rows of each head h,
 *     which are the latter's times (float)sigma*_h exactly (Wv, bv untouched);
 *   - sigma_raw_h = sum(tc_h . n_h) / sum(n_h . n_h), n_h the gated norm output
 *     RMSNorm(o_h) * w_norm * silu(Wg x)_h of the decay+beta+gate layer, run in
 *     float64 (engine/gdn/gdn_ref.h); tolerance 1e-4 relative: graft runs the
 *     core in float32 (chunked), ~1e-6 relative on these sizes; fitting on the
 *     core output instead of n_h, or before the gate, moves sigma by far more
 *     than 1e-2 relative here;
 *   - sigma*_h is sigma_raw_h clamped to [0.1, 10], exactly;
 *   - the name parses and prints as "gated". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate/capture.h"
#include "calibrate/stage1.h"
#include "core/error.h"
#include "core/rng.h"
#include "gdn/gdn_ref.h"
#include "convert/build.h"
#include "formats/model_load.h"
#include "host_weights.h"

enum { SEQS = 2, SEQ_T = 40 };

static model M;
static teacher_capture CAL;

static int setup(void **state) {
    (void)state;
    const char *root = getenv("GRAFT_ROOT");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/fixtures/hf/qwen2", root ? root : ".");
    if (model_load(&M, path, NULL) != 0) return -1;
    int ids[SEQS * SEQ_T];
    rng64 r;
    rng_seed2(&r, 7, 0);
    for (int i = 0; i < SEQS * SEQ_T; i++) ids[i] = 3 + (int)(rng_uniform(&r) * (M.cfg.vocab_size - 3));
    return teacher_capture_run(&CAL, &M, ids, SEQS, SEQ_T, 1, NULL);
}

static int teardown(void **state) {
    (void)state;
    teacher_capture_free(&CAL);
    model_free(&M);
    return 0;
}

/* A taylor-only student of both layers (no Stage 2) with these components and fit. */
static void build(student *s, unsigned parts, sigma_fit_mode fit) {
    student_settings set;
    student_settings_default(&set);
    set.init = INIT_TAYLOR_ONLY;
    set.stage1 = parts;
    set.sigma_fit = fit;
    set.chunk = 16;
    set.seed = 3;
    assert_int_equal(student_init_empty(s, &M, &set), 0);
    bool all[2] = {true, true};
    assert_int_equal(student_build_layers(s, all, &CAL, NULL, NULL), 0);
}

static void names(void **state) {
    (void)state;
    sigma_fit_mode m;
    assert_int_equal(sigma_fit_parse("gated", &m), 0);
    assert_int_equal(m, SIGMA_FIT_GATED);
    assert_string_equal(sigma_fit_name(SIGMA_FIT_GATED), "gated");
    assert_int_equal(sigma_fit_parse("gate", &m), -1);
}

static void gated_fit_against_float64(void **state) {
    (void)state;
    student base, g;
    build(&base, STAGE1_DECAY | STAGE1_BETA | STAGE1_GATE, SIGMA_FIT_REFERENCE);
    build(&g, STAGE1_ALL, SIGMA_FIT_GATED);
    const gdn_config *c = &g.gcfg;
    const int H = c->H, dv = c->dv, D = c->D;
    const size_t N = capture_rows(&CAL), HVD = (size_t)H * dv * D;
    int moved = 0;
    for (int l = 0; l < g.L; l++) {
        const gdn_params *pb = SL(&base, l), *pg = SL(&g, l);
        const stage1_result *r = &g.rep[l].s1;
        /* every tensor but Wg bit for bit; Wg row-scaled per head */
        const size_t wg_at = (size_t)(pb->wg - pb->block);
        assert_memory_equal(pg->block, pb->block, wg_at * sizeof(float));
        assert_memory_equal(pg->block + wg_at + HVD, pb->block + wg_at + HVD, (pb->n - wg_at - HVD) * sizeof(float));
        for (int h = 0; h < H; h++) {
            const float f = (float)r->sigma_star[h];
            for (size_t i = 0; i < (size_t)dv * D; i++) {
                const size_t at = (size_t)h * dv * D + i;
                if (pg->wg[at] != pb->wg[at] * f)
                    fail_msg("layer %d head %d: Wg[%zu] %.9g, want %.9g x %.9g", l, h, i, pg->wg[at], pb->wg[at], f);
            }
        }
        /* float64: the decay+beta+gate layer's gated norm output, then the per-head least squares */
        gdn_params_f64 p64;
        gdn_params_alloc_f64(&p64, c);
        for (size_t i = 0; i < pb->n; i++) p64.block[i] = pb->block[i];
        gdn_cache_f64 cache;
        gdn_cache_alloc_f64(&cache, c, CAL.n_seqs, CAL.T);
        const float *xf = capture_xn(&CAL, l), *tc = capture_heads(&CAL, l);
        double *x = malloc(N * D * sizeof *x), *y = malloc(N * D * sizeof *y);
        for (size_t i = 0; i < N * D; i++) x[i] = xf[i];
        gdn_forward_f64(c, &p64, &cache, x, y);
        for (int h = 0; h < H; h++) {
            double num = 0, den = 0;
            for (size_t n = 0; n < N; n++)
                for (int j = 0; j < dv; j++) {
                    const size_t at = (n * H + h) * dv + j;
                    num += tc[at] * cache.z[at];
                    den += cache.z[at] * cache.z[at];
                }
            const double want = num / den;
            if (!(isfinite(r->sigma_raw[h]) && fabs(r->sigma_raw[h] - want) <= 1e-4 * fabs(want)))
                fail_msg("layer %d head %d: gated sigma %.9g, float64 %.9g", l, h, r->sigma_raw[h], want);
            const double clamped = want < 0.1 ? 0.1 : want > 10 ? 10 : want;
            if (!(fabs(r->sigma_star[h] - clamped) <= 1e-4 * clamped))
                fail_msg("layer %d head %d: sigma* %.9g, want %.9g", l, h, r->sigma_star[h], clamped);
            assert_true(r->sigma_star[h] == fmin(10.0, fmax(0.1, r->sigma_raw[h])));
            moved += fabs(r->sigma_star[h] - 1.0) > 1e-2;
        }
        free(x), free(y);
        gdn_cache_free_f64(&cache);
        gdn_params_free_f64(&p64);
        assert_true(isfinite(r->alpha_star)); /* the gate ran, before the fit */
    }
    assert_true(moved > 0); /* the fit changed the student on this fixture */
    student_free(&base);
    student_free(&g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names),
        cmocka_unit_test(gated_fit_against_float64),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
