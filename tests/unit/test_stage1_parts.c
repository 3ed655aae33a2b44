/* Stage 1 piece by piece (student_settings.stage1, .distance, .half_life) on
 * the qwen2 fixture (2 layers, 5 query heads over 1 KV head, q/k/v biases kept
 * so that the value scale also touches bv), 2 x 40 random tokens:
 *   - the four components applied one call at a time, each on what the
 *     previous left, equal all four in one call, bit for bit;
 *   - no component equals the init without Stage 1 (taylor-only -> random,
 *     taylor-calibrate -> align-only, Stage 2 included), bit for bit;
 *   - each single component changes its own tensors and no other;
 *   - --half-life N gives every head the idle half-life N (tolerance 1e-6
 *     relative: dt_bias is stored as float32, ~6e-8 relative, and softplus
 *     keeps that order; a wrong formula is off by far more);
 *   - --distance no-sink feeds the decay the no-sink statistic;
 *   - the component-set parser;
 *   - a set cancel flag stops Stage 1 inside a layer with "cancelled"
 *     (every component set, so the checks between components are reached);
 *   - the `gated` value-scale fit (SIGMA_FIT_GATED), against float64:
 *     - a student with all four components under `gated` equals the one with
 *     decay, beta and gate only, bit for bit, except Wg's rows of each head h,
 *     which are the latter's times (float)sigma*_h exactly (Wv, bv untouched);
 *     - sigma_raw_h = sum(tc_h . n_h) / sum(n_h . n_h), n_h the gated norm output
 *     RMSNorm(o_h) * w_norm * silu(Wg x)_h of the decay+beta+gate layer, run in
 *     float64 (engine/gdn/gdn_ref.h); tolerance 1e-4 relative: graft runs the
 *     core in float32 (chunked), ~1e-6 relative on these sizes; fitting on the
 *     core output instead of n_h, or before the gate, moves sigma by far more
 *     than 1e-2 relative here;
 *     - sigma*_h is sigma_raw_h clamped to [0.1, 10], exactly;
 *     - the name parses and prints as "gated". */
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
#include "formats/model_load.h"
#include "convert/build.h"
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
    rng_seed2(&r, 5, 0);
    for (int i = 0; i < SEQS * SEQ_T; i++) ids[i] = 3 + (int)(rng_uniform(&r) * (M.cfg.vocab_size - 3));
    return teacher_capture_run(&CAL, &M, ids, SEQS, SEQ_T, 1, NULL);
}

static int teardown(void **state) {
    (void)state;
    teacher_capture_free(&CAL);
    model_free(&M);
    return 0;
}

/* A student of both layers under init / components / override (Stage 2: 3 steps). */
static void build(student *s, student_init init, unsigned parts, double half_life, decay_distance_mode dist) {
    student_settings set;
    student_settings_default(&set);
    set.init = init;
    set.stage1 = parts;
    set.half_life = half_life;
    set.distance = dist;
    set.qkv_bias = 1;
    set.chunk = 16;
    set.steps = 3;
    assert_int_equal(student_init_empty(s, &M, &set), 0);
    bool all[2] = {true, true};
    assert_int_equal(student_build_layers(s, all, &CAL, NULL, NULL), 0);
}

static void same_params(const student *a, const student *b) {
    for (int l = 0; l < a->L; l++) {
        const gdn_params *pa = SL(a, l), *pb = SL(b, l);
        assert_int_equal(pa->n, pb->n);
        if (memcmp(pa->block, pb->block, pa->n * sizeof(float)) != 0) fail_msg("layer %d: parameters differ", l);
    }
}

static void one_call_at_a_time_equals_all(void **state) {
    (void)state;
    student all, step;
    build(&all, INIT_TAYLOR_ONLY, STAGE1_ALL, 0, DECAY_DISTANCE_ALL);
    build(&step, INIT_RANDOM, STAGE1_ALL, 0, DECAY_DISTANCE_ALL); /* the default init, no Stage 1 */
    for (int l = 0; l < step.L; l++)
        for (int i = 0; i < 4; i++) {
            step.set.stage1 = 1u << i;
            gdn_params p; /* the layer's host copy, back into the student after the call */
            gdn_params_alloc(&p, &step.gcfg);
            assert_int_equal(student_get_layer(&step, l, &p), 0);
            assert_int_equal(stage1_apply(&step, l, &p, &CAL, &step.rep[l].s1, NULL), 0);
            assert_int_equal(student_put_layer(&step, l, &p), 0);
            gdn_params_free(&p);
            assert_int_equal(step.rep[l].s1.parts, 1u << i);
        }
    same_params(&all, &step);
    student_free(&all);
    student_free(&step);
}

static void none_equals_no_stage1(void **state) {
    (void)state;
    student a, b;
    build(&a, INIT_TAYLOR_ONLY, STAGE1_NONE, 0, DECAY_DISTANCE_ALL);
    build(&b, INIT_RANDOM, STAGE1_ALL, 0, DECAY_DISTANCE_ALL);
    same_params(&a, &b);
    assert_false(a.rep[0].has_stage1);
    student_free(&a);
    student_free(&b);
    build(&a, INIT_TAYLOR_CALIBRATE, STAGE1_NONE, 0, DECAY_DISTANCE_ALL);
    build(&b, INIT_ALIGN_ONLY, STAGE1_ALL, 0, DECAY_DISTANCE_ALL);
    same_params(&a, &b);
    for (int l = 0; l < a.L; l++) {
        assert_true(a.rep[l].has_stage2);
        assert_int_equal(a.rep[l].s2.best_step, b.rep[l].s2.best_step);
        assert_memory_equal(a.rep[l].s2.loss, b.rep[l].s2.loss, (size_t)(a.rep[l].s2.steps + 1) * sizeof(float));
    }
    student_free(&a);
    student_free(&b);
}

/* the tensors of each component: decay {A_log, dt_bias}, beta {Wb}, sigma {Wv, bv}, gate {Wg} */
typedef struct {
    const char *name;
    size_t off, n;  /* in floats from block */
    unsigned owner;
} tensor_span;

static int spans(const student *s, int l, tensor_span *out) {
    const gdn_params *p = SL(s, l); /* offsets only */
    const gdn_config *c = &s->gcfg;
    const size_t HD = (size_t)c->H * c->D, HVD = (size_t)c->H * c->dv * c->D, HK = (size_t)c->H * c->dk;
    int k = 0;
#define SPAN(nm, ptr, cnt, own) out[k++] = (tensor_span){nm, (size_t)((ptr) - p->block), cnt, own}
    SPAN("wq", p->wq, HK * c->D, 0);
    SPAN("wk", p->wk, HK * c->D, 0);
    SPAN("wv", p->wv, HVD, STAGE1_SIGMA);
    SPAN("wg", p->wg, HVD, STAGE1_GATE);
    SPAN("wa", p->wa, HD, 0);
    SPAN("wb", p->wb, HD, STAGE1_BETA);
    SPAN("bq", p->bq, HK, 0);
    SPAN("bk", p->bk, HK, 0);
    SPAN("bv", p->bv, (size_t)c->H * c->dv, STAGE1_SIGMA);
    SPAN("a_log", p->a_log, (size_t)c->H, STAGE1_DECAY);
    SPAN("dt_bias", p->dt_bias, (size_t)c->H, STAGE1_DECAY);
    SPAN("w_norm", p->w_norm, (size_t)c->dv, 0);
    SPAN("wo", p->wo, (size_t)c->D * c->H * c->dv, 0);
#undef SPAN
    return k;
}

static void single_component_touches_only_its_tensors(void **state) {
    (void)state;
    student base;
    build(&base, INIT_RANDOM, STAGE1_ALL, 0, DECAY_DISTANCE_ALL);
    assert_non_null(SL(&base, 0)->bv); /* the fixture keeps q/k/v biases: sigma scales bv too */
    for (int i = 0; i < 4; i++) {
        const unsigned part = 1u << i;
        student one;
        build(&one, INIT_TAYLOR_ONLY, part, 0, DECAY_DISTANCE_ALL);
        for (int l = 0; l < one.L; l++) {
            tensor_span sp[16];
            const int n = spans(&one, l, sp);
            const gdn_params *po = SL(&one, l), *pb = SL(&base, l);
            size_t covered = 0;
            for (int t = 0; t < n; t++) {
                covered += sp[t].n;
                const bool same = memcmp(po->block + sp[t].off, pb->block + sp[t].off, sp[t].n * sizeof(float)) == 0;
                if (sp[t].owner == part && same)
                    fail_msg("component %s left its tensor %s unchanged (layer %d)", stage1_part_names[i], sp[t].name, l);
                if (sp[t].owner != part && !same)
                    fail_msg("component %s changed %s (layer %d), not its own", stage1_part_names[i], sp[t].name, l);
            }
            assert_int_equal(covered, po->n); /* every float of the block was checked */
            /* the report: its own values set, the others NaN */
            const stage1_result *r = &one.rep[l].s1;
            assert_int_equal(isnan(r->dt_bias[0]), part != STAGE1_DECAY);
            assert_int_equal(isnan(r->beta_star[0]), part != STAGE1_BETA);
            assert_int_equal(isnan(r->sigma_star[0]), part != STAGE1_SIGMA);
            assert_int_equal(isnan(r->alpha_star), part != STAGE1_GATE);
            assert_true(isfinite(r->dist[0]) && isfinite(r->dist_nosink[0]) && isfinite(r->sink[0]));
        }
        student_free(&one);
    }
    student_free(&base);
}

static void half_life_override(void **state) {
    (void)state;
    const double Ns[] = {0.75, 7.0, 64.0, 4096.0}; /* beyond the statistic's clamp on both sides too */
    for (size_t q = 0; q < sizeof Ns / sizeof *Ns; q++) {
        student s;
        build(&s, INIT_TAYLOR_ONLY, STAGE1_ALL, Ns[q], DECAY_DISTANCE_ALL);
        for (int l = 0; l < s.L; l++) {
            const gdn_params *pl = SL(&s, l);
            for (int h = 0; h < s.gcfg.H; h++) {
                const double hl = s.rep[l].half_life[h];
                if (!isfinite(hl) || fabs(hl - Ns[q]) > 1e-6 * Ns[q])
                    fail_msg("--half-life %g: layer %d head %d has half-life %.9g", Ns[q], l, h, hl);
                assert_true(pl->a_log[h] == 0.0f);
                assert_true(s.rep[l].s1.decay_dist[h] == Ns[q]);
            }
        }
        student_free(&s);
    }
}

static void no_sink_distance_sets_the_decay(void **state) {
    (void)state;
    student s;
    build(&s, INIT_TAYLOR_ONLY, STAGE1_DECAY, 0, DECAY_DISTANCE_NO_SINK);
    int differs = 0;
    for (int l = 0; l < s.L; l++)
        for (int h = 0; h < s.gcfg.H; h++) {
            const stage1_result *r = &s.rep[l].s1;
            assert_true(r->decay_dist[h] == r->dist_nosink[h]);
            const double g = fmin(fmax(log(2.0) / r->dist_nosink[h], 1e-3), 5.0);
            assert_true(r->target_g[h] == g);
            differs += fabs(r->dist_nosink[h] - r->dist[h]) > 1e-3;
        }
    assert_true(differs > 0); /* the fixture's heads do put attention on the first key */
    student_free(&s);
}

static void cancel_inside_stage1(void **state) {
    (void)state;
    student s;
    build(&s, INIT_RANDOM, STAGE1_ALL, 0, DECAY_DISTANCE_ALL);
    atomic_int flag = 1;
    progress_sink pr = {.cancel = &flag};
    gdn_params p; /* layer 0's host copy */
    gdn_params_alloc(&p, &s.gcfg);
    assert_int_equal(student_get_layer(&s, 0, &p), 0);
    for (unsigned parts = 1; parts <= STAGE1_ALL; parts++) {
        s.set.stage1 = parts;
        assert_int_equal(stage1_apply(&s, 0, &p, &CAL, &s.rep[0].s1, &pr), -1);
        assert_string_equal(gf_last_error(), "cancelled");
    }
    /* through the builder too: no layer gets a Stage 1 result */
    student t;
    student_settings set;
    student_settings_default(&set);
    set.init = INIT_TAYLOR_ONLY;
    assert_int_equal(student_init_empty(&t, &M, &set), 0);
    bool all[2] = {true, true};
    assert_int_equal(student_build_layers(&t, all, &CAL, NULL, &pr), -1);
    assert_string_equal(gf_last_error(), "cancelled");
    assert_false(t.rep[0].has_stage1);
    flag = 0; /* and without a cancel it runs */
    s.set.stage1 = STAGE1_ALL;
    assert_int_equal(stage1_apply(&s, 0, &p, &CAL, &s.rep[0].s1, &pr), 0);
    gdn_params_free(&p);
    student_free(&t);
    student_free(&s);
}

static void parse_component_sets(void **state) {
    (void)state;
    unsigned p;
    assert_int_equal(stage1_parts_parse("gate,decay", &p), 0);
    assert_int_equal(p, STAGE1_GATE | STAGE1_DECAY);
    assert_int_equal(stage1_parts_parse("none", &p), 0);
    assert_int_equal(p, STAGE1_NONE);
    assert_int_equal(stage1_parts_parse("all", &p), 0);
    assert_int_equal(p, STAGE1_ALL);
    assert_int_equal(stage1_parts_parse("decay,beta,sigma,gate", &p), 0);
    assert_int_equal(p, STAGE1_ALL);
    assert_int_equal(stage1_parts_parse("decay,", &p), -1);
    assert_int_equal(stage1_parts_parse("decay,decay", &p), -1);
    assert_int_equal(stage1_parts_parse("alpha", &p), -1);
    assert_int_equal(stage1_parts_parse("", &p), -1);
    char buf[64];
    assert_string_equal(stage1_parts_name(STAGE1_BETA | STAGE1_GATE, buf, sizeof buf), "beta,gate");
    assert_string_equal(stage1_parts_name(STAGE1_NONE, buf, sizeof buf), "none");
}

/* A taylor-only student of both layers (no Stage 2) with these components and fit. */
static void build_fit(student *s, unsigned parts, sigma_fit_mode fit) {
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

static void gated_fit_name(void **state) {
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
    build_fit(&base, STAGE1_DECAY | STAGE1_BETA | STAGE1_GATE, SIGMA_FIT_REFERENCE);
    build_fit(&g, STAGE1_ALL, SIGMA_FIT_GATED);
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
        cmocka_unit_test(one_call_at_a_time_equals_all),
        cmocka_unit_test(none_equals_no_stage1),
        cmocka_unit_test(single_component_touches_only_its_tensors),
        cmocka_unit_test(half_life_override),
        cmocka_unit_test(no_sink_distance_sets_the_decay),
        cmocka_unit_test(parse_component_sets),
        cmocka_unit_test(cancel_inside_stage1),
        cmocka_unit_test(gated_fit_name),
        cmocka_unit_test(gated_fit_against_float64),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
