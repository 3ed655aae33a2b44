/* Layer selection: k rounding, uniform spacing, strategy parsing, ar and ga-s2 ranking. */
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
#include "core/error.h"
#include "formats/model_load.h"
#include "select/select.h"
#include "convert/build.h"

static void keep_count_rounds_half_up_and_checks_range(void **state) {
    (void)state;
    int k;
    assert_int_equal(keep_count(0.25, 28, &k), 0);
    assert_int_equal(k, 7);
    assert_int_equal(keep_count(0.5, 5, &k), 0);
    assert_int_equal(k, 3); /* 2.5 -> 3 */
    assert_int_equal(keep_count(0.25, 5, &k), 0);
    assert_int_equal(k, 1);
    assert_int_equal(keep_count(0.75, 5, &k), 0);
    assert_int_equal(k, 4);
    assert_int_equal(keep_count(0.1, 4, &k), 0);
    assert_int_equal(k, 0);
    double bad[] = {0, 1, -0.2, 1.5, NAN};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(keep_count(bad[i], 28, &k), -1);
        assert_non_null(strstr(gf_last_error(), "(0, 1)"));
    }
}

static void uniform_spacing(void **state) {
    (void)state;
    int kept[32];
    select_uniform(28, 7, kept);
    for (int i = 0; i < 7; i++) assert_int_equal(kept[i], 4 * i);
    select_uniform(5, 3, kept);
    assert_int_equal(kept[0], 0);
    assert_int_equal(kept[1], 1);
    assert_int_equal(kept[2], 3);
    select_uniform(28, 14, kept);
    for (int i = 0; i < 14; i++) assert_int_equal(kept[i], 2 * i);
}

static void parse_strategies(void **state) {
    (void)state;
    strategy_spec s;
    assert_int_equal(strategy_parse("uniform", 5, &s), 0);
    assert_int_equal(s.kind, STRATEGY_UNIFORM);
    assert_int_equal(strategy_parse("ga-s2", 5, &s), 0);
    assert_int_equal(s.kind, STRATEGY_GA_S2);
    assert_int_equal(strategy_parse("manual:3,0", 5, &s), 0);
    assert_int_equal(s.n_manual, 2);
    assert_int_equal(strategy_parse("manual:0,5", 5, &s), -1);
    assert_non_null(strstr(gf_last_error(), "out of range"));
    assert_int_equal(strategy_parse("manual:1,1", 5, &s), -1);
    assert_int_equal(strategy_parse("manual:1,", 5, &s), -1);
    assert_int_equal(strategy_parse("manual:x", 5, &s), -1);
    assert_int_equal(strategy_parse("greedy", 5, &s), -1);
    assert_non_null(strstr(gf_last_error(), "unknown strategy 'greedy'"));
    char buf[64];
    assert_int_equal(strategy_parse("manual:0,3", 0, &s), 0);
    strategy_text(&s, buf, sizeof buf);
    assert_string_equal(buf, "manual:0,3");
}

static void ar_and_ga_rank_by_scores(void **state) {
    (void)state;
    const char *root = getenv("GRAFT_ROOT");
    char p[4096];
    snprintf(p, sizeof p, "%s/tests/fixtures/hf/llama", root ? root : ".");
    model m;
    assert_int_equal(model_load(&m, p, NULL), 0);
    int ids[48];
    for (int i = 0; i < 48; i++) ids[i] = (i * 37 + 11) % m.cfg.vocab_size;
    strategy_spec sp;
    strategy_parse("ar", 3, &sp);
    layer_selection sel;
    assert_int_equal(select_layers(&sel, &sp, 2, &m, NULL, ids, 48, 24, NULL), 0);
    assert_int_equal(sel.k, 2);
    for (int l = 0; l < 3; l++) assert_true(isfinite(sel.score[l]) && sel.score[l] > 1);
    /* the dropped layer has the lowest score */
    int dropped = 3 - sel.kept[0] - sel.kept[1];
    for (int i = 0; i < 2; i++) assert_true(sel.score[dropped] <= sel.score[sel.kept[i]]);
    assert_true(sel.kept[0] < sel.kept[1]);
    layer_selection_free(&sel);

    student s;
    student_settings set;
    student_settings_default(&set);
    set.init = INIT_RANDOM;
    assert_int_equal(student_init_empty(&s, &m, &set), 0);
    bool all[3] = {true, true, true};
    assert_int_equal(student_build_layers(&s, all, NULL, NULL, NULL), 0);
    strategy_parse("ga-s2", 3, &sp);
    assert_int_equal(select_layers(&sel, &sp, 1, &m, &s, ids, 48, 24, NULL), 0);
    for (int l = 0; l < 3; l++) assert_true(sel.score[sel.kept[0]] <= sel.score[l]);
    assert_int_equal(student_n_gdn(&s), 0);
    layer_selection_free(&sel);
    /* ga-s2 without a student is refused */
    assert_int_equal(select_layers(&sel, &sp, 1, &m, NULL, ids, 48, 24, NULL), -1);
    student_free(&s);
    model_free(&m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(keep_count_rounds_half_up_and_checks_range),
        cmocka_unit_test(uniform_spacing),
        cmocka_unit_test(parse_strategies),
        cmocka_unit_test(ar_and_ga_rank_by_scores),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
