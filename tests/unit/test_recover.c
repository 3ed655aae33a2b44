/* The Recover screen rendered headless into a text grid, from synthetic race
 * events: curves, axis labels, target line, progress, checkpoint, outcome. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_state.h"
#include "grid.h"
#include "theme.h"
#include "ui.h"

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

static void fill_race(app_state *st) {
    app_state_log(st, "race: race on corpus.txt: 8192 tokens per init");
    for (int s = 0; s < 2; s++)
        for (int k = 1; k <= 16; k++)
            app_state_add_point(st, s ? "race/taylor-calibrate" : "race/random", k * 512.0,
                                0.3 + (s ? 0.5 : 1.2) * exp(-k / 5.0));
    app_state_add_point(st, "align/other", 1, 1); /* not a race series: not drawn here */
    app_state_log(st, "race: checkpoint random step 8: /state/graft/race/random.ckpt");
}

static void recover_empty_then_curves(void **state) {
    (void)state;
    app_state st;
    app_state_init(&st);
    ui u;
    ui_init(&u, &st, NULL, utf8_256);
    assert_true(ui_select_screen(&u, "6"));
    grid g;
    grid_init(&g, 80, 24);
    ui_render(&u, &g);
    assert_true(has(&g, "not available yet: recovery curves of the race"));
    assert_true(has(&g, "last checkpoint: none yet"));
    assert_int_equal(braille_rows(&g), 0);
    /* the budget keys */
    setenv("GRAFT_RACE_TOKENS", "4096", 1);
    ui_render(&u, &g);
    assert_true(has(&g, "budget 4096 tokens/init"));
    assert_true(ui_key(&u, '+'));
    ui_render(&u, &g);
    assert_true(has(&g, "budget 8192 tokens/init"));
    for (int i = 0; i < 10; i++) ui_key(&u, '-');
    ui_render(&u, &g);
    assert_true(has(&g, "budget 512 tokens/init")); /* one step is the floor */
    unsetenv("GRAFT_RACE_TOKENS");

    fill_race(&st);
    st.job.active = true;
    snprintf(st.job.name, sizeof st.job.name, "race");
    snprintf(st.job.label, sizeof st.job.label, "taylor-calibrate step 12/16, 812 tokens/s");
    st.job.fraction = 0.875, st.job.eta_s = 80;
    ui_render(&u, &g);
    assert_true(has(&g, "taylor-calibrate step 12/16, 812 tokens/s   88%   ETA 1m20s"));
    assert_true(has(&g, "last checkpoint: random step 8: /state/graft/race/random.ckpt"));
    app_state_log(&st, "race: checkpoint random step 8: /a/very/long/folder/name/that/goes/on/and/on/state/graft/race/random.ckpt");
    ui_render(&u, &g);
    assert_true(has(&g, "last checkpoint: random step 8: \u2026/graft/race/random.ckpt"));
    assert_true(has(&g, "KL per token"));
    assert_true(has(&g, "tokens"));
    assert_true(has(&g, "random"));
    assert_false(has(&g, "align/other"));
    assert_false(has(&g, "target 0."));
    assert_true(braille_rows(&g) >= 6);

    /* the outcome: a flat target line and the ratio line */
    st.job.active = false;
    app_state_log(&st, "race: target loss 0.3541 (random at the end of 8192 tokens, trailing mean of 1 steps)");
    app_state_log(&st, "race: target reached: random 8192, taylor-calibrate 3584 -> ratio 2.29");
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
    ui_init(&ua, &st, NULL, ascii_mono);
    ui_select_screen(&ua, "recover");
    ui_render(&ua, &g);
    assert_true(has(&g, "taylor-calibrate"));
    assert_int_equal(braille_rows(&g), 0);

    /* a new race hides the old outcome and checkpoint */
    app_state_log(&st, "race: race on corpus.txt: 512 tokens per init");
    ui_render(&u, &g);
    assert_false(has(&g, "ratio 2.29"));
    assert_true(has(&g, "last checkpoint: none yet"));
    grid_free(&g);
    grid_free(&big);
    app_state_free(&st);
}

static void recover_help_lists_keys(void **state) {
    (void)state;
    app_state st;
    app_state_init(&st);
    ui u;
    ui_init(&u, &st, NULL, utf8_256);
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
