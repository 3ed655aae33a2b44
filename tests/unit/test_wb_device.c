/* The workbench's device (src/workbench/settings.h, workbench.h, results.h):
 * - the Settings row lists what this machine has (here: the CUDA backend's
 *   count; the other cases through settings_devices_override, as if the
 *   backend had found that many GPUs), parses and cycles through it, refuses
 *   the rest with one line, and comes back from the session file;
 * - a job never runs on another device than the Settings name: wb_ready
 *   refuses while the teacher lives elsewhere;
 * - Results rows record the device, show it and put it in their command. */
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
#include "formats/model_load.h"
#include "workbench/results.h"
#include "workbench/result_request.h"
#include "workbench/settings.h"
#include "workbench/state.h"
#include "workbench/workbench.h"

static int reset(void **s) {
    (void)s;
    settings_devices_override(-1);
    return 0;
}

/* What the CUDA backend reports on this machine decides the list. */
static void this_machine(void **s) {
    (void)s;
    int gpus = 0;
    const int rc = be_cuda_device_count(&gpus);
    const char *const *names;
    const int n = settings_devices(&names);
    assert_int_equal(n, (rc == 0 ? gpus : 0) + 1);
    assert_string_equal(names[0], "cpu");
    wb_settings w;
    settings_default(&w);
    assert_string_equal(settings_device_name(&w), "cpu");
    if (n == 1) {
        assert_true(strlen(settings_no_gpu_reason()) > 0);
        assert_int_equal(settings_parse(&w, SET_DEVICE, "cuda"), -1);
        assert_non_null(strstr(gf_last_error(), "jobs run on the cpu"));
        assert_int_equal(settings_step(&w, SET_DEVICE, 1), -1);
        assert_non_null(strstr(gf_last_error(), "only the cpu"));
        assert_string_equal(settings_device_name(&w), "cpu");
    } else {
        assert_string_equal(settings_no_gpu_reason(), "");
        assert_int_equal(settings_parse(&w, SET_DEVICE, "cuda"), 0);
        assert_string_equal(settings_device_name(&w), "cuda:0");
    }
}

static void two_gpus(void **s) {
    (void)s;
    settings_devices_override(2);
    const char *const *names;
    assert_int_equal(settings_devices(&names), 3);
    assert_string_equal(names[1], "cuda:0");
    assert_string_equal(names[2], "cuda:1");
    wb_settings w;
    settings_default(&w);
    /* right cycles cpu -> cuda:0 -> cuda:1 -> cpu; left goes back */
    const char *want[] = {"cuda:0", "cuda:1", "cpu"};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(settings_step(&w, SET_DEVICE, 1), 0);
        assert_string_equal(settings_device_name(&w), want[i]);
    }
    assert_int_equal(settings_step(&w, SET_DEVICE, -1), 0);
    assert_string_equal(settings_device_name(&w), "cuda:1");
    assert_int_equal(settings_parse(&w, SET_DEVICE, "cuda"), 0);
    assert_string_equal(settings_device_name(&w), "cuda:0");
    assert_int_equal(settings_parse(&w, SET_DEVICE, "cuda:5"), -1);
    assert_string_equal(gf_last_error(), "device cuda:5: no such GPU (cuda:0 .. cuda:1 found)");
    assert_string_equal(settings_device_name(&w), "cuda:0");
    assert_int_equal(settings_parse(&w, SET_DEVICE, "tpu"), -1);
    assert_non_null(strstr(gf_last_error(), "unknown device 'tpu'"));
    char buf[32];
    settings_format(&w, SET_DEVICE, buf, sizeof buf);
    assert_string_equal(buf, "cuda:0");
    /* the session keeps it; a machine without that GPU says so and keeps the cpu */
    assert_int_equal(settings_parse(&w, SET_DEVICE, "cuda:1"), 0);
    cJSON *j = settings_json(&w);
    wb_settings back;
    settings_default(&back);
    assert_int_equal(settings_from_json(&back, j, "session.json"), 0);
    assert_string_equal(settings_device_name(&back), "cuda:1");
    settings_devices_override(0);
    settings_default(&back);
    assert_int_equal(settings_from_json(&back, j, "session.json"), -1);
    assert_non_null(strstr(gf_last_error(), "device cuda:1: no GPU here; jobs run on the cpu"));
    assert_string_equal(settings_device_name(&back), "cpu");
    cJSON_Delete(j);
}

/* A teacher loaded on the cpu while the Settings say cuda:0: no job starts. */
static void jobs_follow_the_settings(void **s) {
    (void)s;
    const char *root = getenv("GRAFT_ROOT");
    char p[4096];
    snprintf(p, sizeof p, "%s/tests/fixtures/llama2c/tiny_v1.bin", root ? root : ".");
    app_state st;
    app_state_init(&st);
    workbench wb;
    memset(&wb, 0, sizeof wb);
    st.user = &wb;
    gf_backend *be;
    assert_int_equal(be_open(&be, NULL), 0);
    wb.be = be;
    wb.m = calloc(1, sizeof *wb.m);
    const model_load_opts lo = {.be = be};
    if (model_load(wb.m, p, &lo) != 0) fail_msg("%s", gf_last_error());
    teacher_state *t = app_teacher(&st, p);
    snprintf(t->name, sizeof t->name, "tiny_v1.bin");
    t->loaded = true;
    app_switch(&st, t);
    wb.m_key = strdup(p);
    assert_ptr_equal(wb_ready(&wb, &st), t); /* cpu and cpu */
    snprintf(st.settings.device, sizeof st.settings.device, "cuda:0");
    assert_null(wb_ready(&wb, &st));
    assert_string_equal(gf_last_error(),
                        "tiny_v1.bin is loaded on cpu but Settings say cuda:0: reload it there (Enter on 1 Teacher)");
    char dev[32];
    wb_device_of(be, dev, sizeof dev);
    assert_string_equal(dev, "cpu");
    model_free(wb.m);
    free(wb.m);
    free(wb.m_key);
    be_close(be);
    app_state_free(&st);
}

static void rows_record_the_device(void **s) {
    (void)s;
    result_row r;
    result_row_init(&r);
    r.kind = RUN_RACE;
    snprintf(r.teacher, sizeof r.teacher, "stories260K.bin");
    snprintf(r.corpus, sizeof r.corpus, "/data/tinystories.txt");
    r.keep = 0.5, r.ctx = 128, r.race_tokens = 51200, r.race_lr_mixer = 1e-3, r.race_lr_rest = 1e-4;
    char buf[1024];
    result_cell(&r, RC_DEVICE, false, buf, sizeof buf);
    assert_string_equal(buf, "-"); /* rows saved before devices */
    snprintf(r.device, sizeof r.device, "cuda:0");
    result_cell(&r, RC_DEVICE, false, buf, sizeof buf);
    assert_string_equal(buf, "cuda:0");
    result_command(&r, "M", buf, sizeof buf);
    assert_non_null(strstr(buf, " --json --device cuda:0"));
    cJSON *j = result_row_json(&r);
    result_row back;
    assert_int_equal(result_row_from_json(j, &back), 0);
    assert_string_equal(back.device, "cuda:0");
    cJSON_Delete(j);
    snprintf(r.device, sizeof r.device, "cpu"); /* the default device is not spelled out */
    result_command(&r, "M", buf, sizeof buf);
    assert_null(strstr(buf, "--device"));
    assert_string_equal(result_col_get(RC_DEVICE)->header, "device");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(this_machine, reset, reset),
        cmocka_unit_test_setup_teardown(two_gpus, reset, reset),
        cmocka_unit_test_setup_teardown(jobs_follow_the_settings, reset, reset),
        cmocka_unit_test_setup_teardown(rows_record_the_device, reset, reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
