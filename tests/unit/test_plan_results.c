/* Unit tests: the Plan and Results screens rendered headless as text grids,
 * their keys, the plan arithmetic, streamed result rows and the session. */
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

#include "app_state.h"
#include "keys.h"
#include "persist/persist.h"
#include "select/kv_cost.h"
#include "ui.h"

static const theme utf8_256 = {true, DEPTH_256, 0};
static const theme ascii_mono = {false, DEPTH_MONO, 0};

static char *row(grid *g, int y) {
    static char buf[4096];
    grid_row_text(g, y, buf, sizeof buf);
    return buf;
}

static int find_row(grid *g, const char *needle) {
    for (int y = 0; y < g->h; y++)
        if (strstr(row(g, y), needle)) return y;
    return -1;
}

/* A 28-layer teacher with 12 heads, 2 KV heads of 128 dims, bf16 (2 bytes). */
static void qwen_like(app_state *st) {
    app_state_init(st);
    app_state_set_shape(st, 28, 12);
    st->kv_heads = 2, st->head_dim = 128, st->kv_bytes = 2;
    snprintf(st->teacher, sizeof st->teacher, "test-teacher");
}

static void render(ui *u, grid *g, int w, int h) {
    grid_resize(g, w, h);
    ui_render(u, g);
}

static void plan_default_and_cost(void **state) {
    (void)state;
    app_state st;
    qwen_like(&st);
    ui u;
    ui_init(&u, &st, NULL, utf8_256);
    ui_select_screen(&u, "plan");
    grid g;
    grid_init(&g, 200, 60);
    render(&u, &g, 200, 60);
    /* default: uniform 50 % -> 14 of 28 (layers 0, 2, 4, ...) */
    assert_string_equal(st.strategy, "uniform");
    assert_true(find_row(&g, "strategy [uniform]") >= 0);
    assert_true(find_row(&g, "keep 50% (14 of 28)") >= 0);
    for (int l = 0; l < 28; l++) assert_int_equal(st.kept[l], l % 2 == 0);
    /* 2 * 2 * 128 * 2 bytes * 32768 = 32 MB per layer: 896 MB -> 448 MB + 14 GDN states of 12*128*128*4 = 768 KB each */
    kv_cost c = kv_cost_compute(28, 14, 12, 2, 128, 2, KV_COST_TOKENS);
    assert_true(fabs(c.kv_per_layer - 32.0 * 1024 * 1024) < 1e-6);
    assert_true(fabs(c.gdn_state_per_layer - 768.0 * 1024) < 1e-6);
    assert_true(find_row(&g, "14 of 28 layers keep attention \u00b7 KV cache at 32k tokens: 896 MB \u2192 458 MB (GDN state 10.5 MB)") >= 0);
    /* every layer has a line at 200x60 and no "more" line */
    assert_true(find_row(&g, "   27 \u25a1 GDN") >= 0);
    assert_int_equal(find_row(&g, "more)"), -1);
    grid_free(&g);
    app_state_free(&st);
}

static void plan_keys(void **state) {
    (void)state;
    app_state st;
    qwen_like(&st);
    ui u;
    ui_init(&u, &st, NULL, utf8_256);
    ui_select_screen(&u, "2");
    grid g;
    grid_init(&g, 80, 24);
    render(&u, &g, 80, 24);
    ui_key(&u, 'r'); /* 50 -> 75 % */
    assert_true(fabs(st.keep_ratio - 0.75) < 1e-12);
    assert_int_equal(app_state_keep_count(&st), 21);
    ui_key(&u, 'r'); /* wraps to 25 % */
    assert_true(fabs(st.keep_ratio - 0.25) < 1e-12);
    /* typed: = 1 0 Enter -> 10 % of 28 = round(2.8) = 3 layers: 0, 9, 18 */
    ui_key(&u, '=');
    ui_key(&u, '1');
    ui_key(&u, '0');
    render(&u, &g, 80, 24);
    assert_true(find_row(&g, "keep: 10_ %") >= 0);
    ui_key(&u, UK_ENTER);
    assert_false(u.plan_edit);
    assert_int_equal(app_state_keep_count(&st), 3);
    int n = 0;
    for (int l = 0; l < 28; l++) n += st.kept[l];
    assert_int_equal(n, 3);
    assert_true(st.kept[0] && st.kept[9] && st.kept[18]);
    /* a bad value is refused with a message, the ratio unchanged */
    ui_key(&u, '=');
    ui_key(&u, '1');
    ui_key(&u, '5');
    ui_key(&u, '0');
    ui_key(&u, UK_ENTER);
    assert_true(fabs(st.keep_ratio - 0.10) < 1e-12);
    assert_non_null(strstr(u.status, "must be in"));
    /* Esc leaves typing without a change; screen keys stay swallowed while typing */
    ui_key(&u, '=');
    ui_key(&u, '3');
    assert_int_equal(u.screen, SCR_PLAN);
    ui_key(&u, UK_ESC);
    assert_false(u.plan_edit);
    assert_true(fabs(st.keep_ratio - 0.10) < 1e-12);
    /* strategy cycle: ar without scores keeps the last plan and says so */
    ui_key(&u, 's');
    assert_string_equal(st.strategy, "ar");
    render(&u, &g, 80, 24);
    assert_true(find_row(&g, "ar scores not computed yet") >= 0);
    /* cursor and space: manual */
    ui_key(&u, UK_DOWN);
    ui_key(&u, ' ');
    assert_string_equal(st.strategy, "manual");
    assert_true(st.kept[1]);
    render(&u, &g, 80, 24);
    assert_true(find_row(&g, "[manual]") >= 0);
    assert_true(find_row(&g, "4/28 layers attention") >= 0); /* the short cost line at 80 columns */
    /* Enter on manual needs no job */
    ui_key(&u, UK_ENTER);
    assert_non_null(strstr(u.status, "manual plan: 4 of 28"));
    /* scrolling: the cursor stays visible at 80x24 */
    for (int i = 0; i < 26; i++) ui_key(&u, UK_DOWN);
    render(&u, &g, 80, 24);
    assert_int_equal(u.plan_cursor, 27);
    assert_true(find_row(&g, ">    27 ") >= 0);
    assert_true(find_row(&g, "of 28 (") >= 0);
    grid_free(&g);
    app_state_free(&st);
}

static event stat_event(const char *label, int layer, double v) {
    event e = {0};
    e.kind = EV_STAT;
    snprintf(e.label, sizeof e.label, "%s", label);
    e.layer = layer;
    e.value = v;
    return e;
}

static void plan_scores_rank(void **state) {
    (void)state;
    app_state st;
    app_state_init(&st);
    app_state_set_shape(&st, 6, 4);
    snprintf(st.strategy, sizeof st.strategy, "ar");
    st.keep_ratio = 0.5; /* k = 3 */
    app_state_plan_recompute(&st);
    const double ar[6] = {9, 5, 7, 7, 3, 8};   /* highest: 0 (9), 5 (8), then 2 before 3 (tie) */
    const double ga[6] = {4, 2, 6, 2, 1, 9};   /* lowest: 4 (1), 1 (2), 3 (2) */
    for (int l = 0; l < 6; l++) {
        event e = stat_event("plan/ar", l, ar[l]);
        assert_true(app_state_apply_event(&st, &e));
    }
    bool want_ar[6] = {1, 0, 1, 0, 0, 1};
    for (int l = 0; l < 6; l++) assert_int_equal(st.kept[l], want_ar[l]);
    for (int l = 0; l < 6; l++) {
        event e = stat_event("plan/ga-s2", l, ga[l]);
        app_state_apply_event(&st, &e);
    }
    /* ga-s2 scores arrived while ar is chosen: the plan stays ar's */
    for (int l = 0; l < 6; l++) assert_int_equal(st.kept[l], want_ar[l]);
    snprintf(st.strategy, sizeof st.strategy, "ga-s2");
    app_state_plan_recompute(&st);
    bool want_ga[6] = {0, 1, 0, 1, 1, 0};
    for (int l = 0; l < 6; l++) assert_int_equal(st.kept[l], want_ga[l]);
    /* both columns drawn, the chosen strategy's values shown */
    ui u;
    ui_init(&u, &st, NULL, ascii_mono);
    ui_select_screen(&u, "plan");
    grid g;
    grid_init(&g, 100, 30);
    ui_render(&u, &g);
    int y = find_row(&g, "    5 o GDN");
    assert_true(y >= 0);
    assert_non_null(strstr(row(&g, y), "8"));
    assert_non_null(strstr(row(&g, y), "9"));
    assert_non_null(strstr(row(&g, y), "#"));
    grid_free(&g);
    app_state_free(&st);
}

static event row_event(const char *text) {
    event e = {0};
    e.kind = EV_LOG;
    snprintf(e.job_name, sizeof e.job_name, "evaluate");
    snprintf(e.text, sizeof e.text, "%s", text);
    return e;
}

static void results_rows_fit(void **state) {
    (void)state;
    app_state st;
    qwen_like(&st);
    app_state_plan_recompute(&st);
    /* an old table (another header) gives way to the results table */
    const char *old[] = {"init", "ppl"};
    app_state_set_result_header(&st, old, 2);
    const char *cells[] = {"x", "1"};
    app_state_add_result(&st, cells, 2);
    event sc = {0};
    sc.kind = EV_SCALAR;
    snprintf(sc.label, sizeof sc.label, "teacher_ppl");
    sc.value = 4.9536;
    app_state_apply_event(&st, &sc);
    int logged = st.n_log;
    event e = row_event("result\tuniform\t50%\ttaylor-calibrate\t8.4320\t23.42\t22.44\t61.51\t0,2,4,6,8,10,12,14,16,18,20,22,24,26\t"
                        "/home/someone/.local/share/graft/students/test-teacher-uniform-50-taylor-calibrate");
    assert_true(app_state_apply_event(&st, &e));
    e = row_event("result\tar\t25%\tsmall-gate\t19.1000\t3.10\t2.00\t9.00\t1,5,9,27\t-");
    app_state_apply_event(&st, &e);
    assert_int_equal(st.n_results, 2);
    assert_int_equal(st.n_result_cols, app_n_result_columns);
    assert_string_equal(st.results[0].cells[3], "8.4320");
    assert_int_equal(st.n_log, logged); /* rows are not log lines */
    ui u;
    ui_init(&u, &st, NULL, utf8_256);
    ui_select_screen(&u, "results");
    grid g;
    grid_init(&g, 200, 60);
    ui_render(&u, &g);
    assert_true(find_row(&g, "teacher perplexity 4.9536") >= 0);
    int y = find_row(&g, "taylor-calibrate  8.4320");
    assert_true(y >= 0); /* whole names and the whole path at 200 columns */
    assert_non_null(strstr(row(&g, y), "/home/someone/.local/share/graft/students/test-teacher-uniform-50-taylor-calibrate"));
    grid_resize(&g, 80, 24);
    ui_render(&u, &g);
    y = find_row(&g, "t-calib");
    assert_true(y >= 0); /* abbreviated, the path cut from the left */
    assert_non_null(strstr(row(&g, y), "8.4320"));
    assert_non_null(strstr(row(&g, y), "\u2026"));
    assert_non_null(strstr(row(&g, y), "calibrate"));
    assert_true(find_row(&g, "small-g") >= 0);
    /* i cycles the init evaluate builds */
    assert_string_equal(st.eval_init, "taylor-calibrate");
    ui_key(&u, 'i');
    assert_string_equal(st.eval_init, "random");
    ui_render(&u, &g);
    assert_true(find_row(&g, "init random") >= 0);
    /* a without a workbench says so, never crashes */
    ui_key(&u, 'a');
    assert_non_null(strstr(u.status, "nothing to run"));
    grid_free(&g);
    app_state_free(&st);
}

static void session_keeps_plan(void **state) {
    (void)state;
    char dir[] = "/tmp/graft_plan_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/session.json", dir);
    app_state st;
    qwen_like(&st);
    snprintf(st.strategy, sizeof st.strategy, "manual");
    st.keep_ratio = 0.3;
    app_state_plan_recompute(&st);
    memset(st.kept, 0, 28 * sizeof *st.kept);
    st.kept[3] = st.kept[17] = true;
    event e = stat_event("plan/ar", 4, 12.5);
    app_state_apply_event(&st, &e);
    snprintf(st.eval_init, sizeof st.eval_init, "align-only");
    st.teacher_ppl = 6.25;
    assert_int_equal(session_write(&st, path), 0);
    app_state back;
    app_state_init(&back);
    assert_int_equal(session_read(&back, path), 0);
    assert_string_equal(back.strategy, "manual");
    assert_int_equal(back.n_layers, 28);
    assert_int_equal(back.kv_heads, 2);
    assert_int_equal(back.head_dim, 128);
    assert_int_equal(back.kv_bytes, 2);
    for (int l = 0; l < 28; l++) assert_int_equal(back.kept[l], l == 3 || l == 17);
    assert_non_null(back.plan_score[1]);
    assert_true(fabs(back.plan_score[1][4] - 12.5) < 1e-12);
    assert_true(isnan(back.plan_score[1][0]));
    assert_string_equal(back.eval_init, "align-only");
    assert_true(fabs(back.teacher_ppl - 6.25) < 1e-12);
    /* the teacher's head count learned later keeps the plan; another layer count drops it */
    app_state_set_shape(&back, 28, 7);
    assert_non_null(back.kept);
    app_state_set_shape(&back, 12, 7);
    assert_null(back.kept);
    app_state_free(&back);
    /* a bad plan: a warning, not a crash */
    FILE *f = fopen(path, "w");
    fputs("{\"plan\": {\"layers\": 4, \"kept\": [9]}, \"strategy\": \"bogus\"}", f);
    fclose(f);
    app_state_init(&back);
    assert_int_equal(session_read(&back, path), -1);
    app_state_set_shape(&back, 4, 2);
    app_state_plan_recompute(&back);
    assert_string_equal(back.strategy, "uniform");
    app_state_free(&back);
    app_state_free(&st);
    unlink(path);
    rmdir(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plan_default_and_cost), cmocka_unit_test(plan_keys),
        cmocka_unit_test(plan_scores_rank),      cmocka_unit_test(results_rows_fit),
        cmocka_unit_test(session_keeps_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
