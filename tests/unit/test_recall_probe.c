/* Unit tests: recall through recovery made inspectable. The probe's points
 * (engine/eval/recall_probe.h: cells copied, the accuracy is the sum of
 * correct over the sum of n), the race's per-run cells as JSON
 * (train_cli_recall_cells_json: each run's points in order), and a
 * measurement on stories260K through train_opts.measure whose samples go to
 * the --recall-dump writer with the run, step and tokens. */
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

#include "core/error.h"
#include "eval/recall_probe.h"
#include "model_util.h"
#include "method/reports.h"
#include "method/train_cli.h"

static model teacher;

static recall_cell cell(recall_task t, double depth, int n, double correct) {
    return (recall_cell){.task = t, .length = 512, .depth = depth, .n = n, .correct = correct};
}

static void test_points(void **state) {
    (void)state;
    recall_probe p = {0};
    recall_cell cells[3] = {cell(RECALL_NIAH_NUMBER, 10, 2, 1), cell(RECALL_MULTIVALUE, 50, 2, 0.5),
                            cell(RECALL_MULTIKEY, 90, 3, 3)};
    p.run = 1;
    assert_int_equal(recall_probe_add(&p, 8, 1024, cells, 3), 0);
    cells[0].correct = 2; /* the point keeps its own copy */
    p.run = 0;
    assert_int_equal(recall_probe_add(&p, 16, 2048, cells, 0), 0);
    assert_int_equal(p.n_points, 2);
    const recall_probe_point *a = &p.points[0];
    assert_int_equal(a->run, 1);
    assert_int_equal(a->step, 8);
    assert_int_equal(a->tokens, 1024);
    assert_int_equal(a->n_cells, 3);
    assert_true(a->cells[0].correct == 1);
    assert_int_equal(a->cells[2].task, RECALL_MULTIKEY);
    /* (1 + 0.5 + 3) / (2 + 2 + 3), a share of answers counting as a share */
    const double acc = recall_probe_point_accuracy(a);
    assert_true(isfinite(acc) && fabs(acc - 4.5 / 7) < 1e-15); /* two sums of small exact binary fractions */
    assert_true(isnan(recall_probe_point_accuracy(&p.points[1]))); /* no sample: no accuracy */
    recall_probe_free(&p);
    assert_int_equal(p.n_points, 0);
    assert_null(p.points);
}

/* sum of correct / sum of n over one [tokens, [cells]] point of the JSON */
static double json_point_accuracy(const cJSON *point, double *tokens) {
    *tokens = cJSON_GetArrayItem(point, 0)->valuedouble;
    double c = 0, n = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, cJSON_GetArrayItem(point, 1)) {
        c += cJSON_GetObjectItem(x, "correct")->valuedouble;
        n += cJSON_GetObjectItem(x, "n")->valuedouble;
        assert_non_null(cJSON_GetObjectItem(x, "task"));
        assert_non_null(cJSON_GetObjectItem(x, "length"));
        assert_non_null(cJSON_GetObjectItem(x, "depth"));
    }
    return n > 0 ? c / n : NAN;
}

static void test_cells_json_per_run(void **state) {
    (void)state;
    train_cli tc;
    train_cli_default(&tc);
    const recall_cell r0a[2] = {cell(RECALL_PASSKEY, 0, 2, 0), cell(RECALL_PASSKEY, 100, 2, 1)};
    const recall_cell r1a[1] = {cell(RECALL_VT, 50, 4, 3)};
    const recall_cell r0b[2] = {cell(RECALL_PASSKEY, 0, 2, 2), cell(RECALL_PASSKEY, 100, 2, 2)};
    /* run 0 measures twice, run 1 once in between (race_run does not interleave; the grouping must not depend on it) */
    train_cli_recall_run(&tc, 0, "random");
    assert_int_equal(recall_probe_add(&tc.probe, 4, 512, r0a, 2), 0);
    train_cli_recall_run(&tc, 1, "taylor-calibrate");
    assert_int_equal(recall_probe_add(&tc.probe, 4, 512, r1a, 1), 0);
    train_cli_recall_run(&tc, 0, "random");
    assert_int_equal(recall_probe_add(&tc.probe, 8, 1024, r0b, 2), 0);
    cJSON *j0 = train_cli_recall_cells_json(&tc, 0), *j1 = train_cli_recall_cells_json(&tc, 1),
          *j2 = train_cli_recall_cells_json(&tc, 2);
    assert_int_equal(cJSON_GetArraySize(j0), 2);
    assert_int_equal(cJSON_GetArraySize(j1), 1);
    assert_int_equal(cJSON_GetArraySize(j2), 0);
    double tokens;
    assert_true(fabs(json_point_accuracy(cJSON_GetArrayItem(j0, 0), &tokens) - 0.25) < 1e-15);
    assert_true(tokens == 512);
    assert_true(fabs(json_point_accuracy(cJSON_GetArrayItem(j0, 1), &tokens) - 1.0) < 1e-15);
    assert_true(tokens == 1024);
    assert_true(fabs(json_point_accuracy(cJSON_GetArrayItem(j1, 0), &tokens) - 0.75) < 1e-15);
    const cJSON *c = cJSON_GetArrayItem(cJSON_GetArrayItem(cJSON_GetArrayItem(j1, 0), 1), 0);
    assert_string_equal(cJSON_GetObjectItem(c, "task")->valuestring, "vt");
    cJSON_Delete(j0);
    cJSON_Delete(j1);
    cJSON_Delete(j2);
    assert_int_equal(train_cli_recall_close(&tc), 0);
    assert_int_equal(tc.probe.n_points, 0);
}

static void test_measure_dumps(void **state) {
    (void)state;
    if (!teacher.tok) skip();
    train_cli tc;
    train_cli_default(&tc);
    tc.recall_every = 4;
    tc.recall_samples = 1;
    tc.recall_lengths = "512"; /* the recall instruction takes ~222 of stories260K's 512 positions */
    char path[] = "/tmp/graft-recall-probe-XXXXXX";
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    tc.recall_dump = path;
    assert_int_equal(train_cli_recall_dump_open(&tc, false), 0);
    assert_int_equal(train_cli_recall(&tc, &teacher), 0);
    train_cli_recall_run(&tc, 1, "small-gate");
    transformer tf;
    assert_int_equal(tf_view(&tf, &teacher, NULL, NULL, NULL), 0);
    double v = NAN;
    assert_int_equal(tc.to.measure(tc.to.mud, &tf, 8, 1024, NULL, &v), 0);
    assert_true(isfinite(v) && v >= 0 && v <= 1);
    assert_int_equal(tc.probe.n_points, 1);
    assert_true(v == recall_probe_point_accuracy(&tc.probe.points[0]));
    assert_int_equal(tc.probe.points[0].n_cells, 2 * 3); /* niah-number, multikey at depths 10, 50, 90 */
    assert_int_equal(train_cli_recall_close(&tc), 0);
    tf_free(&tf);

    /* one line per sample: graft recall's fields and where in training it was measured */
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[1 << 16];
    int lines = 0;
    double score = 0;
    while (fgets(line, sizeof line, f)) {
        assert_non_null(strchr(line, '\n')); /* whole lines */
        cJSON *o = cJSON_Parse(line);
        assert_non_null(o);
        assert_string_equal(cJSON_GetObjectItem(o, "run")->valuestring, "small-gate");
        assert_true(cJSON_GetObjectItem(o, "step")->valuedouble == 8);
        assert_true(cJSON_GetObjectItem(o, "tokens")->valuedouble == 1024);
        assert_true(cJSON_GetObjectItem(o, "length")->valuedouble == 512);
        assert_non_null(cJSON_GetObjectItem(o, "pred"));
        assert_non_null(cJSON_GetObjectItem(o, "answers"));
        score += cJSON_GetObjectItem(o, "score")->valuedouble;
        cJSON_Delete(o);
        lines++;
    }
    fclose(f);
    unlink(path);
    assert_int_equal(lines, 6);
    assert_true(fabs(score / lines - v) < 1e-12); /* one sample per cell: the mean score is the accuracy */
}

static void test_dump_line_without_place(void **state) {
    (void)state;
    if (!teacher.tok) skip();
    /* graft recall --dump: no run, step or tokens */
    const int ids[3] = {1, 2, 3};
    char *answers[1] = {"1234567"};
    const recall_sample s = {.task = RECALL_PASSKEY, .length = 256, .index = 0, .max_new = 24, .depth = 50, .ids = ids,
                             .n_ids = 3, .pred = "1234567", .score = 1, .answers = answers, .n_answers = 1};
    FILE *f = tmpfile();
    assert_non_null(f);
    recall_dump_sample(f, &s, teacher.tok, NULL);
    const recall_dump_at at = {"random", 3, 96};
    recall_dump_sample(f, &s, teacher.tok, &at);
    rewind(f);
    char line[4096];
    assert_non_null(fgets(line, sizeof line, f));
    cJSON *o = cJSON_Parse(line);
    assert_null(cJSON_GetObjectItem(o, "run"));
    assert_null(cJSON_GetObjectItem(o, "step"));
    assert_string_equal(cJSON_GetObjectItem(o, "task")->valuestring, "passkey");
    cJSON_Delete(o);
    assert_non_null(fgets(line, sizeof line, f));
    o = cJSON_Parse(line);
    assert_string_equal(cJSON_GetObjectItem(o, "run")->valuestring, "random");
    assert_true(cJSON_GetObjectItem(o, "tokens")->valuedouble == 96);
    assert_true(cJSON_GetObjectItem(o, "score")->valuedouble == 1);
    cJSON_Delete(o);
    assert_null(fgets(line, sizeof line, f));
    fclose(f);
}

static int setup(void **state) {
    (void)state;
    return stories_load(&teacher) < 0 ? -1 : 0; /* not there: those tests skip */
}

static int teardown(void **state) {
    (void)state;
    if (teacher.tok) model_free(&teacher);
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_points),
        cmocka_unit_test(test_cells_json_per_run),
        cmocka_unit_test(test_measure_dumps),
        cmocka_unit_test(test_dump_line_without_place),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
