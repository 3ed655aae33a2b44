/* The workbench's half-life view: a hand-made measurement taken into a
 * teacher's view (flagged order, head lookup, log2 ratio), the student Stats'
 * h picks from the Results rows, the histogram column of a half-life, and the
 * Stats screen drawing the head's histogram with its marks and the flagged
 * list, and jumping with f. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "grid.h"
#include "screens/halflife_panel.h"
#include "theme.h"
#include "ui.h"
#include "workbench/halflife_jobs.h"

static const theme utf8_256 = {true, DEPTH_256, 0};

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

/* Layer 2 and 4 GDN, 2 heads each: (2,0) fine, (2,1) too long by 3.0, (4,0) too short by 1.5, (4,1) fine. */
static void make_result(halflife_result *r) {
    memset(r, 0, sizeof *r);
    r->ctx = 256, r->seqs = 4, r->tokens = 1024, r->n_heads = 4;
    r->heads = gf_calloc(4, sizeof *r->heads);
    const double p50[4] = {8, 64, 0.5, 4}, target[4] = {8, 4, 4, NAN};
    for (int i = 0; i < 4; i++) {
        halflife_head *h = &r->heads[i];
        h->layer = i < 2 ? 2 : 4, h->head = i % 2, h->ctx = 256;
        h->idle = 10, h->p10 = p50[i] / 2, h->p50 = p50[i], h->p90 = p50[i] * 2, h->target = target[i];
        h->hist[halflife_hist_col(p50[i])] = 1024;
    }
    r->heads[1].flags = HL_FLAG_TOO_LONG, r->heads[1].severity = 3.0;
    snprintf(r->heads[1].reason, sizeof r->heads[1].reason, "too long: test");
    r->heads[2].flags = HL_FLAG_TOO_SHORT, r->heads[2].severity = 1.5;
    snprintf(r->heads[2].reason, sizeof r->heads[2].reason, "too short: test");
}

static void view_take_order_and_ratio(void **state) {
    (void)state;
    halflife_view v;
    halflife_view_init(&v);
    halflife_result r;
    make_result(&r);
    halflife_view_take(&v, &r);
    assert_null(r.heads); /* moved */
    assert_true(v.have);
    assert_int_equal(v.n_flagged, 2);
    assert_int_equal(v.r.heads[v.flagged[0]].layer, 2); /* severity 3.0 first */
    assert_int_equal(v.r.heads[v.flagged[0]].head, 1);
    assert_int_equal(v.r.heads[v.flagged[1]].layer, 4);
    assert_null(halflife_view_head(&v, 0, 0)); /* an attention layer */
    const halflife_head *h = halflife_view_head(&v, 2, 1);
    assert_non_null(h);
    /* log2(64 / 4) = 4 exactly in binary floating point */
    assert_true(halflife_log2_ratio(h) == 4.0);
    assert_true(isnan(halflife_log2_ratio(halflife_view_head(&v, 4, 1)))); /* no target */
    halflife_head inf = *h;
    inf.p50 = INFINITY;
    assert_true(isnan(halflife_log2_ratio(&inf)));
    halflife_view_free(&v);
}

static void hist_columns(void **state) {
    (void)state;
    /* 30 bins over log10 -1 .. 5: 5 per decade */
    assert_int_equal(halflife_hist_col(0.1), 0);
    assert_int_equal(halflife_hist_col(1.0), 5);
    assert_int_equal(halflife_hist_col(10.0), 10);
    assert_int_equal(halflife_hist_col(1e-3), 0);  /* below: the first bin */
    assert_int_equal(halflife_hist_col(1e9), 29);  /* above: the last */
    assert_int_equal(halflife_hist_col(INFINITY), -1);
    assert_int_equal(halflife_hist_col(NAN), -1);
    assert_int_equal(halflife_hist_col(0), -1);
}

static void pick_student_from_rows(void **state) {
    (void)state;
    teacher_state *t = teacher_state_new("/m/x");
    halflife_view_request q;
    assert_false(halflife_pick_student(t, -1, &q));
    const char *folders[3] = {"/s/a", "", "/s/c"}, *inits[3] = {"random", "taylor-only", "taylor-calibrate"};
    for (int i = 0; i < 3; i++) {
        result_row r;
        result_row_init(&r);
        snprintf(r.student, sizeof r.student, "%s", folders[i]);
        snprintf(r.init, sizeof r.init, "%s", inits[i]);
        teacher_add_result(t, &r);
    }
    assert_true(halflife_pick_student(t, -1, &q)); /* the newest with a folder */
    assert_string_equal(q.student, "/s/c");
    assert_string_equal(q.init, "taylor-calibrate");
    assert_true(halflife_pick_student(t, t->results[0].seq, &q)); /* the selected row */
    assert_string_equal(q.student, "/s/a");
    assert_string_equal(q.init, "random");
    assert_true(halflife_pick_student(t, t->results[1].seq, &q)); /* selected, no folder: the newest */
    assert_string_equal(q.student, "/s/c");
    teacher_state_free(t);
}

static void stats_screen_histogram_and_flagged(void **state) {
    (void)state;
    app_state st;
    app_state_init(&st);
    ui_prefs prefs;
    ui_prefs_default(&prefs);
    teacher_state *t = app_teacher(&st, "/m/five");
    snprintf(t->name, sizeof t->name, "five");
    teacher_state_set_shape(t, 5, 2);
    app_switch(&st, t);
    halflife_result r;
    make_result(&r);
    snprintf(t->hl.ran.init, sizeof t->hl.ran.init, "random");
    halflife_view_take(&t->hl, &r);
    const int init = teacher_init_index(t, "random");
    double *p50 = teacher_metric(t, init, MET_HALFLIFE_DATA);
    for (int i = 0; i < t->hl.r.n_heads; i++) p50[t->hl.r.heads[i].layer * 2 + t->hl.r.heads[i].head] = t->hl.r.heads[i].p50;
    ui u;
    ui_init(&u, &st, NULL, &prefs, utf8_256);
    ui_select_screen(&u, "stats");
    u.v.stats.follow_hl = true;
    grid g;
    grid_init(&g, 120, 40);
    ui_render(&u, &g);
    assert_true(find_row(&g, "half-life p50 on text") >= 0);
    assert_true(find_row(&g, "flagged heads, worst first: 2 (f jumps)") >= 0);
    int y = find_row(&g, "L2 H1  3.0 too_long");
    assert_true(y > 0);
    assert_true(find_row(&g, "L4 H0  1.5 too_short") == y + 1);
    /* f: the cursor on the worst, then the next, then round again */
    ui_key(&u, 'f');
    assert_int_equal(u.v.stats.cur_layer, 2);
    assert_int_equal(u.v.stats.cur_head, 1);
    ui_render(&u, &g);
    /* the head's histogram: one full bar at p50 = 64 tokens (bin 14: 5 bins a decade from 0.1), T at 4 tokens (bin 8), i at 10 (bin 10) */
    y = find_row(&g, "half-life over 1024 tokens (random)");
    assert_true(y > 0);
    char marks[2048], axis[2048];
    snprintf(marks, sizeof marks, "%s", row(&g, y + 7));
    snprintf(axis, sizeof axis, "%s", row(&g, y + 8));
    const char *at = strstr(axis, "0.1  1    10");
    assert_non_null(at);
    const int x0 = (int)(at - axis); /* both rows are plain ASCII up to here (the map is above) */
    assert_int_equal(marks[x0 + 10], 'i');
    assert_int_equal(marks[x0 + 8], 'T');
    assert_int_equal(marks[x0 + 14], '|');
    assert_true(find_row(&g, "too long: test") > 0);
    ui_key(&u, 'f');
    assert_int_equal(u.v.stats.cur_layer, 4);
    assert_int_equal(u.v.stats.cur_head, 0);
    ui_key(&u, 'f');
    assert_int_equal(u.v.stats.cur_layer, 2);
    grid_free(&g);
    app_state_free(&st);
}

/* 4 Calibrate without Stage 1: the fix panel names the Stats cursor's head; a fix's result shows the
 * perplexity change, the folder and both histograms. */
static void calibrate_fix_panel(void **state) {
    (void)state;
    app_state st;
    app_state_init(&st);
    ui_prefs prefs;
    ui_prefs_default(&prefs);
    teacher_state *t = app_teacher(&st, "/m/five");
    teacher_state_set_shape(t, 5, 2);
    app_switch(&st, t);
    ui u;
    ui_init(&u, &st, NULL, &prefs, utf8_256);
    ui_select_screen(&u, "calibrate");
    grid g;
    grid_init(&g, 120, 40);
    ui_render(&u, &g);
    assert_true(find_row(&g, "half-life fix of") < 0); /* nothing measured: no panel */
    ui_key(&u, 'x');
    assert_non_null(strstr(u.status, "h on 3 Stats measures one first"));
    halflife_result r;
    make_result(&r);
    snprintf(t->hl.ran.init, sizeof t->hl.ran.init, "random");
    halflife_view_take(&t->hl, &r);
    u.v.stats.cur_layer = 4, u.v.stats.cur_head = 0;
    ui_render(&u, &g);
    assert_true(find_row(&g, "half-life fix of random: layer 4 head 0 (p50 0.500, target 4.00)") >= 0);
    halflife_fix_result *f = gf_calloc(1, sizeof *f);
    f->fix = (halflife_change){4, 0, 4.0, 0};
    make_result(&f->before);
    make_result(&f->after);
    f->after.heads[2].p50 = 4; /* the fixed head now at its target */
    f->out = (halflife_fix_outcome){10.0, 9.5, 1024};
    snprintf(f->dir, sizeof f->dir, "/s/a-fix-L4H0");
    halflife_view_take_fix(&t->hl, f);
    ui_render(&u, &g);
    assert_true(find_row(&g, "fixed layer 4 head 0 to 4 tokens, Stage 2 of layer 4: perplexity 10.0000 -> 9.5000 (-5.00 %)") >= 0);
    assert_true(find_row(&g, "written to /s/a-fix-L4H0") >= 0);
    const int y = find_row(&g, "before the fix");
    assert_true(y > 0 && strstr(row(&g, y), "after") != NULL);
    assert_true(find_row(&g, "| p50 0.500") > y);
    assert_true(find_row(&g, "| p50 4.00") > y);
    grid_free(&g);
    app_state_free(&st);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(view_take_order_and_ratio),
        cmocka_unit_test(hist_columns),
        cmocka_unit_test(pick_student_from_rows),
        cmocka_unit_test(stats_screen_histogram_and_flagged),
        cmocka_unit_test(calibrate_fix_panel),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
