/* Unit tests: the table of numeric option ranges (src/cli/opt_limits.h):
 * every row refuses NaN and the infinities, its bounds are in or out as the
 * row says, a refusal names the option and its range; the option parser
 * applies the table; the --ctx and --threads checks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "method/args.h"
#include "method/opt_limits.h"
#include "core/error.h"

static void every_row_refuses_non_finite_and_outside(void **state) {
    (void)state;
    int n;
    const opt_limit *t = opt_limits_table(&n);
    assert_true(n > 20);
    for (int i = 0; i < n; i++) {
        const opt_limit *l = &t[i];
        assert_true(l->lo < l->hi);
        opt_limits_command(l->cmd); /* a command's own row wins there */
        assert_ptr_equal(opt_limit_find(l->name), l);
        assert_int_equal(opt_check(l->name, NAN), -1);
        assert_int_equal(opt_check(l->name, -NAN), -1);
        assert_int_equal(opt_check(l->name, INFINITY), -1);
        assert_int_equal(opt_check(l->name, -INFINITY), -1);
        /* the bounds: in unless open; a step past them: out */
        assert_int_equal(opt_check(l->name, l->lo), l->lo_open ? -1 : 0);
        assert_int_equal(opt_check(l->name, l->hi), l->hi_open ? -1 : 0);
        assert_int_equal(opt_check(l->name, l->lo - 1), -1);
        assert_int_equal(opt_check(l->name, l->hi * 2 + 1), -1);
        assert_int_equal(opt_check(l->name, (l->lo + l->hi) / 2), 0);
        /* the message names the option, both bounds and the value */
        assert_int_equal(opt_check(l->name, NAN), -1);
        char want[64];
        snprintf(want, sizeof want, "--%s must be in ", l->name);
        assert_non_null(strstr(gf_last_error(), want));
        assert_non_null(strstr(gf_last_error(), "got nan"));
    }
    opt_limits_command(NULL);
}

static void command_rows_win_there_only(void **state) {
    (void)state;
    opt_limits_command("recall");
    assert_int_equal(opt_check("batch", 0), 0); /* recall: 0 picks the batch */
    opt_limits_command("train");
    assert_int_equal(opt_check("batch", 0), -1);
    assert_non_null(strstr(gf_last_error(), "--batch must be in [1, 65536]"));
    opt_limits_command(NULL);
    assert_int_equal(opt_check("batch", 0), -1);
}

static void no_row_still_needs_a_finite_number(void **state) {
    (void)state;
    assert_null(opt_limit_find("no-such-option"));
    assert_int_equal(opt_check("no-such-option", 3.5), 0);
    assert_int_equal(opt_check("no-such-option", NAN), -1);
    assert_non_null(strstr(gf_last_error(), "--no-such-option must be a finite number"));
}

static void message_shows_the_range(void **state) {
    (void)state;
    assert_int_equal(opt_check("clip", -1), -1);
    assert_string_equal(gf_last_error(), "--clip must be in [0, 1000000] (0: off), got -1");
    assert_int_equal(opt_check("keep", 1), -1);
    assert_string_equal(gf_last_error(), "--keep must be in (0, 1), got 1");
}

static void parser_applies_the_table(void **state) {
    (void)state;
    double clip = 1, keep = 0.5;
    int ctx = 256;
    long tokens = 10;
    const opt_spec specs[] = {{"clip", OPT_DOUBLE, &clip, ""},
                              {"keep", OPT_DOUBLE, &keep, ""},
                              {"ctx", OPT_INT, &ctx, ""},
                              {"tokens", OPT_LONG, &tokens, ""},
                              {"free", OPT_DOUBLE, &clip, ""}};
    const char *pos[1];
    int np;
    struct { const char *a, *b, *want; } bad[] = {
        {"--clip", "nan", "--clip must be in [0, 1000000]"},
        {"--clip", "-inf", "got -inf"},
        {"--clip", "1e999", "got inf"},
        {"--keep", "0", "--keep must be in (0, 1)"},
        {"--ctx", "0", "--ctx must be in [2, 1048576]"},
        {"--ctx", "4294967297", "--ctx must be in [2"},
        {"--tokens", "99999999999999999999999", "--tokens must be in [1"},
        {"--free", "inf", "--free must be a finite number"},
        {"--ctx", "12x", "--ctx needs an integer, got '12x'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *argv[] = {"cmd", (char *)bad[i].a, (char *)bad[i].b, NULL};
        assert_int_equal(args_parse(3, argv, specs, 5, pos, 1, &np), -1);
        if (!strstr(gf_last_error(), bad[i].want)) fail_msg("%s %s: '%s'", bad[i].a, bad[i].b, gf_last_error());
    }
    char *ok[] = {"cmd", "--clip=0", "--keep", "0.25", "--ctx", "2", "--tokens", "1", NULL};
    assert_int_equal(args_parse(8, ok, specs, 5, pos, 1, &np), 0);
    assert_true(clip == 0 && keep == 0.25 && ctx == 2 && tokens == 1);
}

static void ctx_against_positions(void **state) {
    (void)state;
    assert_int_equal(opt_check_ctx(512, 512, false), 0);
    assert_int_equal(opt_check_ctx(513, 512, false), -1);
    assert_non_null(strstr(gf_last_error(), "--ctx 513 is beyond the model's 512 positions"));
    assert_non_null(strstr(gf_last_error(), "--" OPT_EXTRAPOLATE_NAME));
    assert_int_equal(opt_check_ctx(513, 512, true), 0);
    assert_int_equal(opt_check_ctx(4096, 0, false), 0); /* no maximum known */
    assert_int_equal(opt_check_ctx(0, 512, true), -1);
}

static void threads_capped_at_processors(void **state) {
    (void)state;
    const int n = opt_threads_available();
    assert_true(n >= 1);
    bool capped;
    assert_int_equal(opt_threads_cap(n, &capped), n);
    assert_false(capped);
    assert_int_equal(opt_threads_cap(n + 1, &capped), n);
    assert_true(capped);
    assert_int_equal(opt_threads_cap(0, &capped), 0); /* 0: every core, as the backend reads it */
    assert_false(capped);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_row_refuses_non_finite_and_outside),
        cmocka_unit_test(no_row_still_needs_a_finite_number),
        cmocka_unit_test(command_rows_win_there_only),
        cmocka_unit_test(message_shows_the_range),
        cmocka_unit_test(parser_applies_the_table),
        cmocka_unit_test(ctx_against_positions),
        cmocka_unit_test(threads_capped_at_processors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
