/* The Recover screen rendered headless into a text grid, from synthetic race
 * events of the current teacher: curves, axis labels, target line, progress,
 * checkpoint, outcome; the budget is a setting. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grid.h"
#include "theme.h"
#include "ui.h"
#include "wb_test_util.h"
#include "workbench/recover_jobs.h"

static ui_prefs prefs;

static const theme utf8_256 = {true, DEPTH_256, 0};
static const theme ascii_mono = {false, DEPTH_MONO, 0};

static bool has(const grid *g, const char *needle) {
    char buf[2048];
    for (int y = 0; y < g->h; y++) {
        grid_row_text(g, y, buf, sizeof buf);
        if (strstr(buf, needle)) return true;
    }
    return false;
}

/* rows of the grid holding braille dots (U+2801..U+28FF, first byte E2 A0..A3) */
static int braille_rows(const grid *g) {
    char buf[2048];
    int n = 0;
    for (int y = 0; y < g->h; y++) {
        grid_row_text(g, y, buf, sizeof buf);
        for (const unsigned char *p = (const unsigned char *)buf; p[0] && p[1] && p[2]; p++)
            if (p[0] == 0xE2 && p[1] >= 0xA0 && p[1] <= 0xA3 && !(p[1] == 0xA0 && p[2] == 0x80)) {
                n++;
                break;
            }
    }
    return n;
}

static teacher_state *teacher(app_state *st) {
    app_state_init(st);
    ui_prefs_default(&prefs);
    teacher_state *t = app_teacher(st, "/m/stories");
    snprintf(t->name, sizeof t->name, "stories");
    teacher_state_set_shape(t, 5, 8);
    app_switch(st, t);
    return t;
}

static void fill_race(app_state *st, int id, const char *ckpt) {
    for (int s = 0; s < 2; s++)
        for (int k = 1; k <= 16; k++) {
            wb_event e = {.kind = WB_RACE_POINT};
            snprintf(e.u.race_point.init, sizeof e.u.race_point.init, "%s", s ? "taylor-calibrate" : "random");
            e.u.race_point.tokens = k * 512.0;
            e.u.race_point.loss = 0.3 + (s ? 0.5 : 1.2) * exp(-k / 5.0);
            assert_true(wbt_apply(st, id, &e));
        }
    wb_event c = {.kind = WB_RACE_CHECKPOINT};
    snprintf(c.u.race_checkpoint.init, sizeof c.u.race_checkpoint.init, "random");
    c.u.race_checkpoint.step = 8;
    snprintf(c.u.race_checkpoint.path, sizeof c.u.race_checkpoint.path, "%s", ckpt);
    assert_true(wbt_apply(st, id, &c));
}

static void recover_empty_then_curves(void **state) {
    (void)state;
    app_state st;
    teacher_state *t = teacher(&st);
    ui u;
    ui_init(&u, &st, NULL, &prefs, utf8_256);
    assert_true(ui_select_screen(&u, "6"));
    grid g;
    grid_init(&g, 80, 24);
    ui_render(&u, &g);
    assert_true(has(&g, "not available yet: recovery curves of the race"));
    assert_true(has(&g, "last checkpoint: none yet"));
    assert_int_equal(braille_rows(&g), 0);
    /* the budget keys change the setting */
    st.settings.race_tokens = 4096;
    ui_render(&u, &g);
    assert_true(has(&g, "budget 4096 tokens/init"));
    assert_true(ui_key(&u, '+'));
    ui_render(&u, &g);
    assert_true(has(&g, "budget 8192 tokens/init"));
    assert_int_equal(st.settings.race_tokens, 8192);
    for (int i = 0; i < 10; i++) ui_key(&u, '-');
    ui_render(&u, &g);
    assert_true(has(&g, "budget 512 tokens/init")); /* one step is the floor */
    assert_non_null(strstr(u.status, "512"));

    job_runner jr;
    assert_int_equal(job_runner_init(&jr), 0);
    int id = wbt_start(&st, &jr, "race", t);
    fill_race(&st, id, "/state/graft/race/random.ckpt");
    snprintf(st.job.label, sizeof st.job.label, "taylor-calibrate step 12/16, 812 tokens/s");
    snprintf(st.job.phase, sizeof st.job.phase, "train taylor-calibrate");
    st.job.fraction = 0.875, st.job.eta = 80;
    ui_render(&u, &g);
    assert_true(has(&g, "taylor-calibrate step 12/16, 812 tokens/s   race 88%   eta 1m20s   (c cancels)"));
    assert_true(has(&g, "last checkpoint: random step 8: /state/graft/race/random.ckpt"));
    fill_race(&st, id, "/a/very/long/folder/name/that/goes/on/and/on/state/graft/race/random.ckpt");
    ui_render(&u, &g);
    assert_true(has(&g, "last checkpoint: random step 8: \u2026/graft/race/random.ckpt"));
    assert_true(has(&g, "KL per token"));
    assert_true(has(&g, "tokens"));
    assert_true(has(&g, "random"));
    assert_false(has(&g, "target 0."));
    assert_true(braille_rows(&g) >= 6);
    wbt_finish(&st, &jr);
    job_runner_free(&jr);

    /* the outcome: a flat target line, the ratio line, two Results rows */
    t->race.has_target = true;
    t->race.target = 0.3541;
    snprintf(t->race.reached, sizeof t->race.reached, "target reached: random 8192, taylor-calibrate 3584 -> ratio 2.29");
    ui_render(&u, &g);
    assert_true(has(&g, "target 0.3541"));
    assert_true(has(&g, "target reached: random 8192, taylor-calibrate 3584 -> ratio 2.29"));
    assert_true(has(&g, "Enter: race random vs taylor-calibrate"));

    /* the same at 200x60 and in ASCII */
    grid big;
    grid_init(&big, 200, 60);
    ui_render(&u, &big);
    assert_true(has(&big, "target reached: random 8192, taylor-calibrate 3584 -> ratio 2.29"));
    assert_true(braille_rows(&big) >= 30);
    ui ua;
    ui_init(&ua, &st, NULL, &prefs, ascii_mono);
    ui_select_screen(&ua, "recover");
    ui_render(&ua, &g);
    assert_true(has(&g, "taylor-calibrate"));
    assert_int_equal(braille_rows(&g), 0);
    grid_free(&g);
    grid_free(&big);
    app_state_free(&st);
}

static void recover_help_lists_keys(void **state) {
    (void)state;
    app_state st;
    teacher(&st);
    ui u;
    ui_init(&u, &st, NULL, &prefs, utf8_256);
    ui_select_screen(&u, "recover");
    grid g;
    grid_init(&g, 80, 24);
    ui_key(&u, '?');
    ui_render(&u, &g);
    assert_true(has(&g, "on Recover:"));
    assert_true(has(&g, "double budget"));
    assert_true(has(&g, "halve budget"));
    grid_free(&g);
    app_state_free(&st);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(recover_empty_then_curves),
        cmocka_unit_test(recover_help_lists_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
