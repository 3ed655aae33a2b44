/* Calibrate and Align: their state fed through job events, the screens as
 * text grids, and Stage 2's per-step observer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "align/stage2.h"
#include "calibrate/capture.h"
#include "core/error.h"
#include "grid.h"
#include "keys.h"
#include "formats/model_load.h"
#include "convert/build.h"
#include "theme.h"
#include "ui.h"
#include "wb_test_util.h"

static const theme utf8_256 = {true, DEPTH_256, 0};
static const theme ascii_mono = {false, DEPTH_MONO, 0};

static char *row(grid *g, int y) {
    static char buf[2048];
    grid_row_text(g, y, buf, sizeof buf);
    return buf;
}
static int find_row(grid *g, const char *needle) {
    for (int y = 0; y < g->h; y++)
        if (strstr(row(g, y), needle)) return y;
    return -1;
}
static bool has(grid *g, const char *needle) { return find_row(g, needle) >= 0; }

static ui_prefs prefs;
static job_runner jr;
static int job_id; /* the running job the events come from */

/* A current teacher of 5 layers x 8 heads and a running job for it. */
static teacher_state *setup_teacher(app_state *st, const char *job) {
    app_state_init(st);
    ui_prefs_default(&prefs);
    teacher_state *t = app_teacher(st, "/m/five");
    snprintf(t->name, sizeof t->name, "five");
    teacher_state_set_shape(t, 5, 8);
    app_switch(st, t);
    assert_int_equal(job_runner_init(&jr), 0);
    job_id = wbt_start(st, &jr, job, t);
    assert_true(job_id > 0);
    return t;
}

static void teardown_teacher(app_state *st) {
    if (st->job.active) wbt_finish(st, &jr);
    job_runner_free(&jr);
    app_state_free(st);
}

/* Synthetic Stage 1 numbers for layer l: field f of head h = (f + 1) + h / 100. */
static double synth(int f, int h) { return (f + 1) + h / 100.0; }

static void feed_calibrated_parts(app_state *st, int l, unsigned parts) {
    const teacher_state *t = app_cur(st);
    for (int h = 0; h < t->n_heads; h++) {
        wb_event e = {.kind = WB_CALIB_HEAD};
        e.u.calib_head.layer = l;
        e.u.calib_head.head = h;
        for (int f = 0; f < CAL_COUNT; f++) e.u.calib_head.v[f] = synth(f, h);
        assert_true(wbt_apply(st, job_id, &e));
    }
    wb_event b = {.kind = WB_HEAD_VALUE};
    snprintf(b.u.head_value.init, sizeof b.u.head_value.init, "taylor-only");
    b.u.head_value.metric = MET_BETA;
    b.u.head_value.layer = l;
    b.u.head_value.head = 0;
    b.u.head_value.value = 0.61;
    assert_true(wbt_apply(st, job_id, &b));
    wb_event d = {.kind = WB_CALIB_LAYER};
    d.u.calib_layer.layer = l;
    d.u.calib_layer.alpha = 0.001727;
    d.u.calib_layer.parts = parts;
    assert_true(wbt_apply(st, job_id, &d));
}

static void feed_calibrated(app_state *st, int l) { feed_calibrated_parts(st, l, STAGE1_ALL); }

static void calibrate_screen_shows_stage1_per_head(void **state) {
    (void)state;
    app_state st;
    teacher_state *t = setup_teacher(&st, "calibrate");
    ui u;
    ui_init(&u, &st, NULL, &prefs, utf8_256);
    ui_select_screen(&u, "calibrate");
    grid g;
    grid_init(&g, 100, 30);
    ui_render(&u, &g);
    /* nothing yet: the plan (uniform 50 %: layers 0, 1, 3 keep attention) and what is missing */
    assert_true(has(&g, "0 of 2 converted layers calibrated"));
    assert_true(has(&g, "plan: uniform 50%"));
    assert_true(has(&g, "0 attn  1 attn  2 pending  3 attn  4 pending"));
    assert_true(has(&g, "not available yet: Taylor-Calibrate results (Stage 1)"));
    assert_true(has(&g, "space next layer"));

    feed_calibrated(&st, 2);
    ui_render(&u, &g);
    assert_true(has(&g, "1 of 2 converted layers calibrated"));
    assert_true(has(&g, "2 done<"));
    assert_true(has(&g, "4 pending"));
    /* a row per quantity, a column per head: beta* is field CAL_BETA */
    char want[128], num[16];
    int y = find_row(&g, "beta*");
    assert_true(y > 0);
    for (int h = 0; h < 8; h++) {
        snprintf(num, sizeof num, " %.4g", synth(CAL_BETA, h));
        assert_non_null(strstr(row(&g, y), num));
    }
    y = find_row(&g, "sigma raw");
    snprintf(want, sizeof want, "%.4g", synth(CAL_SIGMA_RAW, 7));
    assert_non_null(strstr(row(&g, y), want));
    assert_true(has(&g, "t1/2 idle"));
    assert_true(has(&g, "gate  alpha*    0.001727   (one per layer: Wg = alpha* Wv)"));
    /* every group of numbers under its component, the teacher statistics first */
    assert_true(has(&g, " stats d_h "));
    assert_true(has(&g, "       d no-sink "));
    assert_true(has(&g, " decay d used "));
    assert_true(has(&g, " beta  beta* "));
    assert_true(has(&g, " sigma sigma raw "));
    assert_false(has(&g, " off "));
    assert_true(has(&g, "Stage 1 components:  d [x] decay  b [x] beta  s [x] sigma  g [x] gate"));
    assert_true(has(&g, "decay from d_h (all keys)"));
    assert_true(has(&g, "head 7"));
    /* the Stats X-ray got the prefixed stat */
    int ti = teacher_init_index(t, "taylor-only");
    assert_float_equal(teacher_metric(t, ti, MET_BETA)[2 * 8 + 0], 0.61, 1e-12);

    /* 80x24: not every head fits; right arrows scroll to head 7 */
    grid_free(&g);
    grid_init(&g, 80, 24);
    ui_render(&u, &g);
    assert_true(has(&g, "heads 0-5 of 8"));
    assert_false(has(&g, "head 7"));
    for (int i = 0; i < 7; i++) ui_key(&u, UK_RIGHT);
    ui_render(&u, &g);
    assert_true(has(&g, "head 7"));
    assert_true(has(&g, "heads 2-7 of 8"));
    assert_true(has(&g, "gate  alpha*")); /* rows of lower priority gave way to the last one */
    assert_true(find_row(&g, "q quit") == 23);

    /* a second layer; up/down switch which one is shown */
    feed_calibrated(&st, 4);
    ui_render(&u, &g);
    assert_true(has(&g, "2 of 2 converted layers calibrated"));
    assert_true(has(&g, "4 done<"));
    ui_key(&u, UK_UP);
    ui_render(&u, &g);
    assert_true(has(&g, "2 done<"));
    /* a plan from the Plan screen wins over the default */
    bool kept[5] = {true, false, true, true, true};
    teacher_set_kept(t, kept);
    ui_render(&u, &g);
    assert_true(has(&g, "of 1 converted layers"));
    assert_true(has(&g, "1 pending"));
    grid_free(&g);
    teardown_teacher(&st);
}

static void type_text(ui *u, const char *text) {
    for (const char *p = text; *p; p++) ui_key(u, (unsigned char)*p);
}

/* The Stage 1 options on Calibrate: d b s g n h change the teacher's choice,
 * the screen says which numbers are stale, and a layer computed without a
 * component shows it as off. */
static void calibrate_screen_stage1_options(void **state) {
    (void)state;
    app_state st;
    teacher_state *t = setup_teacher(&st, "calibrate");
    ui u;
    ui_init(&u, &st, NULL, &prefs, utf8_256);
    ui_select_screen(&u, "calibrate");
    grid g;
    grid_init(&g, 100, 30);
    feed_calibrated(&st, 2);
    assert_true(stage1_choice_is_default(&t->stage1));
    ui_key(&u, 'b');
    assert_int_equal(t->stage1.parts, STAGE1_DECAY | STAGE1_SIGMA | STAGE1_GATE);
    assert_non_null(strstr(u.status, "beta off; Stage 1 is now -beta"));
    ui_render(&u, &g);
    assert_true(has(&g, "d [x] decay  b [ ] beta  s [x] sigma  g [x] gate"));
    assert_true(has(&g, "numbers below: Stage 1 all; space / Enter re-run with -beta"));
    ui_key(&u, 'b');
    ui_render(&u, &g);
    assert_false(has(&g, "numbers below:")); /* back to the options the numbers were made with */
    /* n: the no-sink distance */
    ui_key(&u, 'n');
    assert_true(t->stage1.no_sink);
    ui_render(&u, &g);
    assert_true(has(&g, "decay from d no-sink (without the first key)"));
    assert_true(has(&g, "re-run with all (no-sink)"));
    /* h: a half-life override typed in; the decay then reads no distance */
    ui_key(&u, 'h');
    assert_true(u.typing);
    type_text(&u, "32");
    ui_key(&u, UK_ENTER);
    assert_false(u.typing);
    assert_true(t->stage1.half_life == 32);
    ui_render(&u, &g);
    assert_true(has(&g, "decay: every head's idle half-life 32 tokens"));
    assert_true(has(&g, "re-run with all (half-life 32)"));
    /* a bad number is refused with the reason, the override kept */
    ui_key(&u, 'h');
    type_text(&u, "-4");
    ui_key(&u, UK_ENTER);
    assert_non_null(strstr(u.status, "--half-life must be a number of tokens"));
    assert_true(t->stage1.half_life == 32);
    /* decay off takes the override with it; h then says why not */
    ui_key(&u, 'd');
    assert_true(t->stage1.half_life == 0);
    assert_non_null(strstr(u.status, "the half-life override went with it"));
    ui_key(&u, 'h');
    assert_false(u.typing);
    assert_non_null(strstr(u.status, "switch decay on first"));
    ui_render(&u, &g);
    assert_true(has(&g, "decay off: A_log and dt_bias stay random"));
    /* a layer calibrated with decay and sigma only: beta and gate show as off, their numbers dim "-" */
    t->method.calib_s1 = t->stage1;
    feed_calibrated_parts(&st, 4, STAGE1_DECAY | STAGE1_SIGMA);
    ui_render(&u, &g);
    int y = find_row(&g, " beta  beta* ");
    assert_true(y > 0);
    assert_non_null(strstr(row(&g, y + 1), " off   logit b* "));
    assert_true(has(&g, "(off: Wg stays at the random init)"));
    assert_false(has(&g, "numbers below:"));
    grid_free(&g);
    teardown_teacher(&st);
}

static void feed_aligned(app_state *st, int l, int steps, bool finish) {
    wb_event b = {.kind = WB_ALIGN_BEGIN};
    b.u.align_begin.layer = l;
    b.u.align_begin.steps = steps;
    assert_true(wbt_apply(st, job_id, &b));
    for (int s = 0; s <= steps; s++) {
        wb_event e = {.kind = WB_ALIGN_STEP};
        e.u.align_step.layer = l;
        e.u.align_step.step = s;
        e.u.align_step.loss = 1.0 / (1 + s);
        e.u.align_step.heldout = 1.2 / (1 + s);
        assert_true(wbt_apply(st, job_id, &e));
    }
    if (!finish) return;
    const double v[AL_COUNT] = {[AL_STEPS] = steps, [AL_BEST_STEP] = steps, [AL_BEST_LOSS] = 1.0 / (1 + steps),
                                [AL_BEST_HELDOUT] = 1.2 / (1 + steps), [AL_WB_BEFORE] = 0.01, [AL_WB_AFTER] = 0.017,
                                [AL_WG_BEFORE] = 0.0001, [AL_WG_AFTER] = 0.0088, [AL_HL_MEAN_BEFORE] = 16.3,
                                [AL_HL_MEDIAN_BEFORE] = 10.8, [AL_HL_MEAN_AFTER] = 16.4,
                                [AL_HL_MEDIAN_AFTER] = 10.4, [AL_DONE] = 1};
    wb_event e = {.kind = WB_ALIGN_LAYER};
    e.u.align_layer.layer = l;
    memcpy(e.u.align_layer.v, v, sizeof v);
    assert_true(wbt_apply(st, job_id, &e));
}

static void align_screen_curves_and_summaries(void **state) {
    (void)state;
    app_state st;
    teacher_state *t = setup_teacher(&st, "align");
    ui u;
    ui_init(&u, &st, NULL, &prefs, utf8_256);
    ui_select_screen(&u, "align");
    grid g;
    grid_init(&g, 100, 30);
    ui_render(&u, &g);
    assert_true(has(&g, "not available yet: alignment losses (Stage 2)"));
    assert_true(has(&g, "Enter runs taylor-calibrate"));
    ui_key(&u, 'a');
    ui_render(&u, &g);
    assert_true(has(&g, "Enter runs align-only"));
    ui_key(&u, 'a');

    feed_aligned(&st, 2, 10, true);
    feed_aligned(&st, 4, 6, false); /* still running */
    /* one point per step: held-out joined to its calibration point */
    assert_int_equal(t->method.align[2].n, 11);
    assert_float_equal(t->method.align[2].held[3], 0.3, 1e-12);
    ui_render(&u, &g);
    int y = find_row(&g, "L2 ");
    assert_true(y > 0);
    const char *r2 = row(&g, y);
    assert_non_null(strstr(r2, "10/10"));
    assert_non_null(strstr(r2, "10/10    10    1.00>0.091")); /* progress, best step, loss first > best */
    assert_non_null(strstr(r2, "x1.70  x88.0"));             /* mean |Wb|, mean |Wg| after / before */
    assert_non_null(strstr(r2, "16.3>16.4   10.8>10.4"));     /* half-life mean, median */
    assert_true(has(&g, "|Wb|   |Wg|   t1/2 mean   median"));
    assert_non_null(strstr(row(&g, find_row(&g, "L4 ")), "6/6"));
    /* small multiples: a chart per layer, braille dots */
    assert_true(has(&g, "layer 2 MSE"));
    assert_true(has(&g, "layer 4 MSE"));
    assert_true(has(&g, "held-out"));
    bool braille = false;
    for (int yy = 0; yy < g.h; yy++) braille |= strstr(row(&g, yy), "\xe2\xa0") || strstr(row(&g, yy), "\xe2\xa1") ||
                                             strstr(row(&g, yy), "\xe2\xa2") || strstr(row(&g, yy), "\xe2\xa3");
    assert_true(braille);
    /* down: one layer large */
    ui_key(&u, UK_DOWN);
    ui_render(&u, &g);
    assert_true(has(&g, "layer 2 MSE"));
    assert_false(has(&g, "layer 4 MSE"));
    ui_key(&u, UK_DOWN);
    ui_key(&u, UK_DOWN); /* past the end: all again */
    ui_render(&u, &g);
    assert_true(has(&g, "layer 4 MSE") && has(&g, "layer 2 MSE"));

    /* a cancelled job says so; ASCII / mono at 80x24 still draws */
    wbt_finish(&st, &jr);
    grid_free(&g);
    grid_init(&g, 80, 24);
    ui u2;
    ui_init(&u2, &st, NULL, &prefs, ascii_mono);
    ui_select_screen(&u2, "5");
    ui_render(&u2, &g);
    assert_true(has(&g, "last run: cancelled"));
    assert_true(has(&g, "layer 2 MSE"));
    assert_true(find_row(&g, "q quit") == 23);
    /* a new run clears the curves */
    method_align_reset(&t->method, t->n_layers);
    ui_render(&u2, &g);
    assert_true(has(&g, "not available yet: alignment losses"));
    grid_free(&g);
    teardown_teacher(&st);
}

/* Events outside the teacher's shape are refused, not written past arrays. */
static void method_state_routes_and_ignores(void **state) {
    (void)state;
    app_state st;
    teacher_state *t = setup_teacher(&st, "calibrate");
    wb_event e = {.kind = WB_CALIB_HEAD};
    e.u.calib_head.layer = 0;
    e.u.calib_head.head = 9; /* head out of range */
    assert_false(wbt_apply(&st, job_id, &e));
    e.u.calib_head.layer = 7; /* no such layer */
    e.u.calib_head.head = 1;
    assert_false(wbt_apply(&st, job_id, &e));
    e.u.calib_head.layer = 0;
    for (int f = 0; f < CAL_COUNT; f++) e.u.calib_head.v[f] = f == CAL_SIGMA ? 2.5 : 1;
    assert_true(wbt_apply(&st, job_id, &e));
    assert_float_equal(t->method.calib[0].v[CAL_SIGMA][1], 2.5, 0);
    assert_true(isnan(t->method.calib[0].v[CAL_SIGMA][0]));
    wb_event a = {.kind = WB_ALIGN_STEP};
    a.u.align_step.layer = 9;
    assert_false(wbt_apply(&st, job_id, &a));
    wb_event h = {.kind = WB_HEAD_VALUE};
    h.u.head_value.layer = 1, h.u.head_value.head = -1;
    assert_false(wbt_apply(&st, job_id, &h));
    teardown_teacher(&st);
    const double v[5] = {3, NAN, 1, 2, 10};
    assert_float_equal(median_of(v, 5), 2.5, 1e-12);
    assert_float_equal(median_of(v, 3), 2, 1e-12);
    assert_true(isnan(median_of(v + 1, 1)));
}

/* ---- Stage 2's observer: every step of every layer, from parallel threads ---- */

typedef struct {
    pthread_mutex_t mu;
    int calls[2];
    float loss[2][64], held[2][64];
    int cancel_at;
    atomic_int *cancel;
} recorder;

static void record(void *ud, int layer, int step, double loss, double heldout) {
    recorder *r = ud;
    pthread_mutex_lock(&r->mu);
    if (layer >= 0 && layer < 2 && step >= 0 && step < 64) {
        r->calls[layer]++;
        r->loss[layer][step] = (float)loss;
        r->held[layer][step] = (float)heldout;
    }
    if (r->cancel_at >= 0 && step >= r->cancel_at) atomic_store(r->cancel, 1);
    pthread_mutex_unlock(&r->mu);
}

static void capture(const model *m, teacher_capture *c, int seed, int S, int T) {
    int *ids = malloc((size_t)S * T * sizeof *ids);
    for (int i = 0; i < S * T; i++)
        ids[i] = 3 + (int)((unsigned)(i * 2654435761u + (unsigned)seed * 97u) % (unsigned)(m->cfg.vocab_size - 3));
    assert_int_equal(teacher_capture_run(c, m, ids, S, T, 1, NULL), 0);
    free(ids);
}

static void stage2_observer_sees_every_step(void **state) {
    (void)state;
    const char *root = getenv("GRAFT_ROOT");
    char p[4096];
    snprintf(p, sizeof p, "%s/tests/fixtures/hf/qwen2", root ? root : ".");
    model m;
    assert_int_equal(model_load(&m, p, NULL), 0);
    assert_int_equal(m.cfg.n_layers, 2);
    teacher_capture cal, held;
    capture(&m, &cal, 1, 2, 32);
    capture(&m, &held, 2, 1, 32);
    student_settings set;
    student_settings_default(&set);
    set.init = INIT_TAYLOR_CALIBRATE;
    set.steps = 12;
    bool all[2] = {true, true};
    atomic_int cancel = 0;
    progress_sink pr = {.cancel = &cancel};
    recorder rec = {.mu = PTHREAD_MUTEX_INITIALIZER, .cancel_at = -1, .cancel = &cancel};
    stage2_observer obs = {record, &rec};
    student s;
    assert_int_equal(student_init_empty(&s, &m, &set), 0);
    assert_int_equal(student_build_layers_observed(&s, all, &cal, &held, &pr, &obs), 0);
    for (int l = 0; l < 2; l++) {
        assert_int_equal(rec.calls[l], 13); /* steps + 1 states */
        for (int i = 0; i <= 12; i++) {
            assert_float_equal(rec.loss[l][i], s.rep[l].s2.loss[i], 0);
            assert_float_equal(rec.held[l][i], s.rep[l].s2.heldout[i], 0);
        }
    }
    student_free(&s);
    /* cancelling from the observer stops every layer early with "cancelled" */
    memset(rec.calls, 0, sizeof rec.calls);
    rec.cancel_at = 3;
    set.steps = 50;
    assert_int_equal(student_init_empty(&s, &m, &set), 0);
    assert_int_equal(student_build_layers_observed(&s, all, &cal, &held, &pr, &obs), -1);
    assert_non_null(strstr(gf_last_error(), "cancelled"));
    /* a layer that starts after the cancel stops before its first step (0 calls) */
    assert_true(rec.calls[0] + rec.calls[1] >= 4);
    for (int l = 0; l < 2; l++) assert_true(rec.calls[l] < 51);
    student_free(&s);
    teacher_capture_free(&cal);
    teacher_capture_free(&held);
    model_free(&m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(calibrate_screen_shows_stage1_per_head),
        cmocka_unit_test(calibrate_screen_stage1_options),
        cmocka_unit_test(align_screen_curves_and_summaries),
        cmocka_unit_test(method_state_routes_and_ignores),
        cmocka_unit_test(stage2_observer_sees_every_step),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
