/* A teacher's Stage 1 options in the workbench (src/workbench/stage1_choice.h):
 *   - switching components, the half-life override and its rules;
 *   - the label (Results' init detail) and the command-line flags;
 *   - the choice through method_cli gives the same student settings as the
 *     flags parsed by `graft convert` would (the same option path);
 *   - JSON: round trip and refused values;
 *   - Results rows: the init detail, the headless commands with the flags,
 *     the row's JSON; the session keeps each teacher's choice and the
 *     ablation setting. */
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

#include "cli/common.h"
#include "core/error.h"
#include "student/student.h"
#include "workbench/session.h"
#include "workbench/result_request.h"
#include "workbench/stage1_choice.h"

static stage1_choice make(unsigned parts, bool no_sink, double hl) { return (stage1_choice){.parts = parts, .no_sink = no_sink, .half_life = hl}; }

static void label_of(const stage1_choice *c, const char *want) {
    char buf[64];
    stage1_choice_label(c, buf, sizeof buf);
    assert_string_equal(buf, want);
}

static void flags_of(const stage1_choice *c, const char *want) {
    char buf[128];
    stage1_choice_flags(c, buf, sizeof buf);
    assert_string_equal(buf, want);
}

static void toggles_and_override(void **state) {
    (void)state;
    stage1_choice c;
    stage1_choice_default(&c);
    assert_true(stage1_choice_is_default(&c));
    assert_false(stage1_choice_toggle(&c, STAGE1_BETA));
    assert_int_equal(c.parts, STAGE1_DECAY | STAGE1_SIGMA | STAGE1_GATE);
    assert_false(stage1_choice_is_default(&c));
    assert_false(stage1_choice_toggle(&c, STAGE1_BETA));
    assert_true(stage1_choice_is_default(&c));
    /* the fit cycles reference -> scaled -> gated -> reference; a fit other than the reference is
     * not the default while sigma is on, and does not count without it */
    stage1_choice_next_fit(&c);
    assert_int_equal(c.sigma_fit, SIGMA_FIT_SCALED);
    stage1_choice_next_fit(&c);
    assert_int_equal(c.sigma_fit, SIGMA_FIT_GATED);
    assert_false(stage1_choice_is_default(&c));
    char label[48];
    stage1_choice_label(&c, label, sizeof label);
    assert_string_equal(label, "all, sigma gated");
    stage1_choice_toggle(&c, STAGE1_SIGMA);
    stage1_choice_label(&c, label, sizeof label);
    assert_string_equal(label, "-sigma");
    stage1_choice_toggle(&c, STAGE1_SIGMA);
    stage1_choice_next_fit(&c);
    assert_int_equal(c.sigma_fit, SIGMA_FIT_REFERENCE);
    assert_true(stage1_choice_is_default(&c));
    /* the override: a number of tokens as --half-life; empty / 0 / off clear it */
    assert_int_equal(stage1_choice_set_half_life(&c, "24"), 0);
    assert_true(c.half_life == 24);
    assert_int_equal(stage1_choice_set_half_life(&c, "-1"), -1);
    assert_non_null(strstr(gf_last_error(), "--half-life must be a number of tokens"));
    assert_int_equal(stage1_choice_set_half_life(&c, "12abc"), -1);
    assert_int_equal(stage1_choice_set_half_life(&c, "2e9"), -1);
    assert_true(c.half_life == 24); /* kept after a refusal */
    assert_int_equal(stage1_choice_set_half_life(&c, "off"), 0);
    assert_true(c.half_life == 0);
    assert_int_equal(stage1_choice_set_half_life(&c, "7.5"), 0);
    /* decay off drops the override (it sets the decay); without decay it cannot be set */
    assert_true(stage1_choice_toggle(&c, STAGE1_DECAY));
    assert_true(c.half_life == 0);
    assert_int_equal(stage1_choice_set_half_life(&c, "8"), -1);
    assert_non_null(strstr(gf_last_error(), "switch decay on first"));
    assert_int_equal(stage1_choice_set_half_life(&c, ""), 0);
    /* the distance counts only while the decay reads one */
    stage1_choice a = make(STAGE1_BETA, true, 0), b = make(STAGE1_BETA, false, 0);
    assert_true(stage1_choice_same(&a, &b));
    a.parts = b.parts = STAGE1_ALL;
    assert_false(stage1_choice_same(&a, &b));
    a.half_life = b.half_life = 16;
    assert_true(stage1_choice_same(&a, &b));
}

static void labels_and_flags(void **state) {
    (void)state;
    stage1_choice c = make(STAGE1_ALL, false, 0);
    label_of(&c, "all");
    flags_of(&c, "");
    c = make(STAGE1_NONE, false, 0);
    label_of(&c, "none");
    flags_of(&c, " --stage1 none");
    c = make(STAGE1_ALL & ~STAGE1_BETA, false, 0);
    label_of(&c, "-beta");
    flags_of(&c, " --stage1 decay,sigma,gate");
    c = make(STAGE1_DECAY | STAGE1_SIGMA, true, 0);
    label_of(&c, "decay,sigma (no-sink)");
    flags_of(&c, " --stage1 decay,sigma --distance no-sink");
    c = make(STAGE1_ALL, true, 32);
    label_of(&c, "all (half-life 32)"); /* the override wins over the distance */
    flags_of(&c, " --half-life 32");
    c = make(STAGE1_GATE, true, 0); /* no decay: the distance does nothing and is not said */
    label_of(&c, "gate");
    flags_of(&c, " --stage1 gate");
}

/* The choice through method_cli equals the flags parsed as the command line does. */
static void same_settings_as_the_flags(void **state) {
    (void)state;
    const stage1_choice cases[] = {make(STAGE1_ALL, false, 0), make(STAGE1_NONE, false, 0),
                                   make(STAGE1_DECAY | STAGE1_GATE, true, 0), make(STAGE1_ALL & ~STAGE1_SIGMA, false, 0.1 + 0.2)};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        method_cli mo;
        method_cli_default(&mo);
        stage1_cli_text text;
        stage1_choice_to_cli(&cases[i], &mo, &text);
        student_settings got, want;
        assert_int_equal(method_cli_settings(&mo, 1, INIT_TAYLOR_CALIBRATE, &got), 0);
        /* the flags, split into argv form and parsed the command line's way */
        char flags[128];
        stage1_choice_flags(&cases[i], flags, sizeof flags);
        method_cli m2;
        method_cli_default(&m2);
        char *save = NULL, *tok = strtok_r(flags, " ", &save);
        while (tok) {
            char *val = strtok_r(NULL, " ", &save);
            assert_non_null(val);
            if (!strcmp(tok, "--stage1")) m2.stage1 = val;
            else if (!strcmp(tok, "--distance")) m2.distance = val;
            else if (!strcmp(tok, "--half-life")) m2.half_life = val;
            else fail_msg("unexpected flag %s", tok);
            tok = strtok_r(NULL, " ", &save);
        }
        assert_int_equal(method_cli_settings(&m2, 1, INIT_TAYLOR_CALIBRATE, &want), 0);
        assert_int_equal(got.stage1, want.stage1);
        assert_int_equal(got.distance, want.distance);
        assert_true(got.half_life == want.half_life); /* %.17g: the same double */
        assert_int_equal(got.stage1, cases[i].parts);
    }
}

static void json_round_trip_and_refusals(void **state) {
    (void)state;
    stage1_choice c = make(STAGE1_DECAY | STAGE1_BETA, true, 48.5), back;
    cJSON *j = stage1_choice_json(&c);
    assert_int_equal(stage1_choice_from_json(&back, j, "s.json"), 0);
    assert_int_equal(back.parts, c.parts);
    assert_true(back.no_sink && back.half_life == 48.5);
    cJSON_Delete(j);
    const char *bad[] = {
        "{\"components\": [\"decay\", \"omega\"]}", "{\"components\": \"decay\"}", "{\"components\": [\"all\"]}",
        "{\"distance\": \"far\"}", "{\"half_life\": -2}", "{\"components\": [\"beta\"], \"half_life\": 8}", "[1]",
        "{\"sigma_fit\": \"wide\"}", "{\"sigma_fit\": 2}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cJSON *o = cJSON_Parse(bad[i]);
        assert_non_null(o);
        assert_int_equal(stage1_choice_from_json(&back, o, "s.json"), -1);
        assert_non_null(strstr(gf_last_error(), "s.json: "));
        assert_null(strchr(gf_last_error(), '\n'));
        assert_true(stage1_choice_is_default(&back)); /* the defaults after a refusal */
        cJSON_Delete(o);
    }
    cJSON *o = cJSON_Parse("{\"components\": [], \"half_life\": null}");
    assert_int_equal(stage1_choice_from_json(&back, o, "s.json"), 0);
    assert_int_equal(back.parts, STAGE1_NONE);
    cJSON_Delete(o);
    /* the gated sigma fit: kept, labelled, a flag; it counts only with sigma among the components */
    c = make(STAGE1_ALL, false, 0);
    c.sigma_fit = SIGMA_FIT_GATED;
    j = stage1_choice_json(&c);
    assert_int_equal(stage1_choice_from_json(&back, j, "s.json"), 0);
    cJSON_Delete(j);
    assert_int_equal(back.sigma_fit, SIGMA_FIT_GATED);
    assert_false(stage1_choice_is_default(&back));
    char text[128];
    stage1_choice_label(&back, text, sizeof text);
    assert_string_equal(text, "all, sigma gated");
    stage1_choice_flags(&back, text, sizeof text);
    assert_string_equal(text, " --sigma-fit gated");
    method_cli mo;
    stage1_cli_text t;
    stage1_choice_to_cli(&back, &mo, &t);
    assert_string_equal(mo.sigma_fit, "gated");
    back.parts = STAGE1_ALL & ~STAGE1_SIGMA;
    stage1_choice_label(&back, text, sizeof text);
    assert_string_equal(text, "-sigma");
    stage1_choice_flags(&back, text, sizeof text);
    assert_null(strstr(text, "--sigma-fit"));
    assert_true(stage1_choice_same(&back, &(stage1_choice){.parts = STAGE1_ALL & ~STAGE1_SIGMA}));
}

static result_row row_of(run_kind kind, const char *init) {
    result_row r;
    result_row_init(&r);
    r.kind = kind;
    snprintf(r.strategy, sizeof r.strategy, "uniform");
    r.keep = 0.5;
    snprintf(r.init, sizeof r.init, "%s", init);
    r.stage2_steps = 50;
    snprintf(r.corpus, sizeof r.corpus, "/d/t.txt");
    r.eval_windows = 8;
    r.ctx = 256;
    return r;
}

static void results_rows_carry_the_choice(void **state) {
    (void)state;
    const stage1_choice c = make(STAGE1_ALL & ~STAGE1_BETA, true, 0);
    result_row r = row_of(RUN_ABLATE, "taylor-calibrate");
    result_set_stage1(&r, &c);
    assert_string_equal(r.init_detail, "stage1 -beta (no-sink)");
    char cell[64], cmd[1600];
    result_cell(&r, RC_DETAIL, true, cell, sizeof cell);
    assert_string_equal(cell, "S1 -beta (no-sink)");
    result_command(&r, "/m/t.bin", cmd, sizeof cmd);
    assert_string_equal(cmd, "graft ablate '/m/t.bin' --calib '/d/t.txt' --eval '/d/t.txt' --keep 0.5 --strategy uniform "
                             "--init taylor-calibrate --steps 50 --eval-windows 8 --stage1 decay,sigma,gate "
                             "--distance no-sink --json");
    /* the defaults add nothing to the command, but the column still says "all" */
    result_row d = row_of(RUN_ABLATE, "taylor-calibrate");
    stage1_choice def;
    stage1_choice_default(&def);
    result_set_stage1(&d, &def);
    assert_string_equal(d.init_detail, "stage1 all");
    result_command(&d, "/m/t.bin", cmd, sizeof cmd);
    assert_null(strstr(cmd, "--stage1"));
    /* an evaluated student: its folder records the options (the request named by the row's digest) */
    result_row e = row_of(RUN_EVALUATE, "taylor-only");
    snprintf(e.student, sizeof e.student, "/s/x");
    snprintf(e.digest, sizeof e.digest, "0123456789");
    result_set_stage1(&e, &c);
    result_command(&e, "/m/t.bin", cmd, sizeof cmd);
    assert_string_equal(cmd, "graft eval '/s/x' --text '/d/t.txt' --split --eval-windows 8 --json   # built with "
                             "--stage1 decay,sigma,gate --distance no-sink by request 0123456789");
    /* a race: both rows repeat the race with its options */
    result_row q = row_of(RUN_RACE, "random");
    q.race_tokens = 512, q.race_lr_mixer = 1e-3, q.race_lr_rest = 1e-4;
    q.has_stage1 = true, q.stage1 = make(STAGE1_DECAY, false, 20);
    result_command(&q, "/m/t.bin", cmd, sizeof cmd);
    assert_non_null(strstr(cmd, "--keep 0.5 --stage1 decay --half-life 20 --json"));
    /* the row's JSON keeps the options */
    cJSON *j = result_row_json(&r);
    result_row back;
    assert_int_equal(result_row_from_json(j, &back), 0);
    assert_true(back.has_stage1);
    assert_true(stage1_choice_same(&back.stage1, &c));
    assert_string_equal(back.init_detail, r.init_detail);
    cJSON_Delete(j);
    j = cJSON_Parse("{\"run\": \"ablate\", \"stage1\": {\"components\": [\"x\"]}}");
    assert_int_equal(result_row_from_json(j, &back), -1);
    cJSON_Delete(j);
}

static void session_keeps_each_teachers_choice(void **state) {
    (void)state;
    char dir[] = "/tmp/graft_s1_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/session.json", dir);
    app_state st;
    app_state_init(&st);
    teacher_state *a = app_teacher(&st, "/m/a.bin"), *b = app_teacher(&st, "/m/b.gguf");
    teacher_state_set_shape(a, 5, 8);
    teacher_state_set_shape(b, 30, 9);
    a->stage1 = make(STAGE1_DECAY | STAGE1_SIGMA, true, 0);
    b->stage1 = make(STAGE1_ALL, false, 64);
    st.settings.ablate_stage1 = 1;
    app_switch(&st, a);
    assert_int_equal(session_write(&st, path), 0);
    app_state back;
    app_state_init(&back);
    assert_int_equal(session_read(&back, path), 0);
    const teacher_state *ba = app_find_teacher(&back, "/m/a.bin"), *bb = app_find_teacher(&back, "/m/b.gguf");
    assert_non_null(ba);
    assert_non_null(bb);
    assert_true(stage1_choice_same(&ba->stage1, &a->stage1) && ba->stage1.no_sink);
    assert_true(stage1_choice_same(&bb->stage1, &b->stage1));
    assert_int_equal(back.settings.ablate_stage1, 1);
    app_state_free(&back);
    /* a bad choice: an error naming the file, the teacher and its other state kept with the defaults */
    FILE *f = fopen(path, "w");
    fputs("{\"teachers\": [{\"key\": \"k\", \"plan\": {\"layers\": 4}, \"stage1\": {\"distance\": 3}}],"
          " \"settings\": {\"ablation\": \"sideways\"}}", f);
    fclose(f);
    app_state_init(&back);
    assert_int_equal(session_read(&back, path), -1);
    assert_non_null(strstr(gf_last_error(), path));
    const teacher_state *k = app_find_teacher(&back, "k");
    assert_non_null(k);
    assert_int_equal(k->n_layers, 4);
    assert_true(stage1_choice_is_default(&k->stage1));
    assert_int_equal(back.settings.ablate_stage1, 0);
    app_state_free(&back);
    app_state_free(&st);
    unlink(path);
    rmdir(dir);
}

/* the Settings field: inits or Stage 1 components */
static void ablation_setting(void **state) {
    (void)state;
    wb_settings s;
    settings_default(&s);
    char buf[64];
    settings_format(&s, SET_ABLATE_MODE, buf, sizeof buf);
    assert_string_equal(buf, "inits");
    assert_int_equal(settings_step(&s, SET_ABLATE_MODE, 1), 0);
    settings_format(&s, SET_ABLATE_MODE, buf, sizeof buf);
    assert_string_equal(buf, "Stage 1 components");
    assert_int_equal(settings_parse(&s, SET_ABLATE_MODE, buf), 0); /* what it shows parses back */
    assert_int_equal(s.ablate_stage1, 1);
    assert_int_equal(settings_parse(&s, SET_ABLATE_MODE, "inits"), 0);
    assert_int_equal(s.ablate_stage1, 0);
    assert_int_equal(settings_parse(&s, SET_ABLATE_MODE, "both"), -1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(toggles_and_override),
        cmocka_unit_test(labels_and_flags),
        cmocka_unit_test(same_settings_as_the_flags),
        cmocka_unit_test(json_round_trip_and_refusals),
        cmocka_unit_test(results_rows_carry_the_choice),
        cmocka_unit_test(session_keeps_each_teachers_choice),
        cmocka_unit_test(ablation_setting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
