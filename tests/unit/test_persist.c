/* Unit tests: settings and session files (XDG paths, atomic writes, corrupt input). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app_state.h"
#include "core/error.h"
#include "persist/persist.h"
#include "theme.h"

static char dir[256];

static int setup(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/graft_persist_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void xdg_paths(void **state) {
    (void)state;
    setenv("XDG_CONFIG_HOME", "/x/cfg", 1);
    char *p = persist_path("XDG_CONFIG_HOME", ".config", "config.json");
    assert_string_equal(p, "/x/cfg/graft/config.json");
    free(p);
    unsetenv("XDG_CONFIG_HOME");
    setenv("HOME", "/home/u", 1);
    p = persist_path("XDG_CONFIG_HOME", ".config", "config.json");
    assert_string_equal(p, "/home/u/.config/graft/config.json");
    free(p);
    setenv("XDG_STATE_HOME", "relative/not/allowed", 1); /* the spec ignores relative paths */
    p = persist_path("XDG_STATE_HOME", ".local/state", "session.json");
    assert_string_equal(p, "/home/u/.local/state/graft/session.json");
    free(p);
    unsetenv("XDG_STATE_HOME");
}

static void settings_roundtrip(void **state) {
    (void)state;
    char path[400];
    snprintf(path, sizeof path, "%s/a/b/graft/config.json", dir); /* folders are created */
    app_state st;
    app_state_init(&st);
    st.palette = palette_find("magma");
    st.refresh_hz = 12;
    assert_int_equal(settings_write(&st, path), 0);
    app_state back;
    app_state_init(&back);
    assert_int_equal(settings_read(&back, path), 0);
    assert_int_equal(back.palette, palette_find("magma"));
    assert_int_equal(back.refresh_hz, 12);
    /* no temp files are left behind */
    char folder[400];
    snprintf(folder, sizeof folder, "%s/a/b/graft", dir);
    DIR *d = opendir(folder);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.') n++;
    closedir(d);
    assert_int_equal(n, 1);
    app_state_free(&st);
    app_state_free(&back);
}

static void settings_missing_and_corrupt(void **state) {
    (void)state;
    char path[400];
    snprintf(path, sizeof path, "%s/none.json", dir);
    app_state st;
    app_state_init(&st);
    assert_int_equal(settings_read(&st, path), 0); /* missing: defaults */
    assert_int_equal(st.refresh_hz, 30);
    snprintf(path, sizeof path, "%s/bad.json", dir);
    write_file(path, "{\"palette\": \"viridis\", \"refresh_hz\": ");
    assert_int_equal(settings_read(&st, path), -1);
    assert_non_null(strstr(gf_last_error(), "not valid JSON"));
    assert_null(strchr(gf_last_error(), '\n'));
    assert_int_equal(st.refresh_hz, 30);
    write_file(path, "[1, 2]");
    assert_int_equal(settings_read(&st, path), -1);
    write_file(path, "{\"palette\": \"neon\", \"refresh_hz\": 500}");
    assert_int_equal(settings_read(&st, path), -1);
    assert_int_equal(st.palette, 0);
    assert_int_equal(st.refresh_hz, 30);
    write_file(path, "");
    assert_int_equal(settings_read(&st, path), -1);
    /* through the XDG path the problem becomes a log warning */
    char cfg[400];
    snprintf(cfg, sizeof cfg, "%s/xdg", dir);
    setenv("XDG_CONFIG_HOME", cfg, 1);
    snprintf(path, sizeof path, "%s/xdg/graft", dir);
    mkdir(cfg, 0755);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/xdg/graft/config.json", dir);
    write_file(path, "\x01\x02 garbage");
    persist_load_settings(&st);
    assert_int_equal(st.n_log, 1);
    assert_non_null(strstr(app_state_log_line(&st, 0), "warning"));
    unsetenv("XDG_CONFIG_HOME");
    app_state_free(&st);
}

static void settings_key_overrides(void **state) {
    (void)state;
    char path[400];
    snprintf(path, sizeof path, "%s/keys.json", dir);
    write_file(path, "{\"keys\": {\"metric\": \"x\", \"log_scale\": \"L\"}}");
    app_state st;
    app_state_init(&st);
    assert_int_equal(settings_read(&st, path), 0);
    assert_int_equal(keymap_translate(&st.keys, 'x'), 'm');
    assert_int_equal(keymap_translate(&st.keys, 'L'), 'l');
    assert_int_equal(keymap_translate(&st.keys, 'm'), 'm');
    char buf[2];
    assert_string_equal(keymap_show(&st.keys, "m", buf), "x");
    assert_string_equal(keymap_show(&st.keys, "q", buf), "q");
    /* written back and read again */
    assert_int_equal(settings_write(&st, path), 0);
    app_state back;
    app_state_init(&back);
    assert_int_equal(settings_read(&back, path), 0);
    assert_int_equal(keymap_translate(&back.keys, 'x'), 'm');
    /* bad bindings: errors, the good ones still apply */
    write_file(path, "{\"keys\": {\"metric\": \"xy\", \"fly\": \"f\", \"quit\": \"3\", \"init\": \"j\"}}");
    app_state bad;
    app_state_init(&bad);
    assert_int_equal(settings_read(&bad, path), -1);
    assert_non_null(strstr(gf_last_error(), path));
    assert_int_equal(keymap_translate(&bad.keys, 'j'), 'i');
    assert_int_equal(keymap_translate(&bad.keys, '3'), '3');
    app_state_free(&st);
    app_state_free(&back);
    app_state_free(&bad);
}

static void session_roundtrip_and_corrupt(void **state) {
    (void)state;
    char path[400];
    snprintf(path, sizeof path, "%s/state/graft/session.json", dir);
    app_state st;
    app_state_init(&st);
    snprintf(st.teacher, sizeof st.teacher, "Qwen/Qwen2.5-0.5B @main");
    snprintf(st.strategy, sizeof st.strategy, "ga-s2");
    snprintf(st.corpus, sizeof st.corpus, "tiny \"quoted\" corpus.txt");
    st.keep_ratio = 0.25;
    const char *hdr[] = {"init", "ppl"};
    const char *row[] = {"taylor-calibrate", "18.9"};
    app_state_set_result_header(&st, hdr, 2);
    app_state_add_result(&st, row, 2);
    assert_int_equal(session_write(&st, path), 0);
    app_state back;
    app_state_init(&back);
    assert_int_equal(session_read(&back, path), 0);
    assert_string_equal(back.teacher, st.teacher);
    assert_string_equal(back.strategy, "ga-s2");
    assert_string_equal(back.corpus, st.corpus);
    assert_true(back.keep_ratio == 0.25);
    assert_int_equal(back.n_results, 1);
    assert_int_equal(back.n_result_cols, 2);
    assert_string_equal(back.results[0].cells[0], "taylor-calibrate");
    assert_string_equal(back.result_header[1], "ppl");
    app_state_free(&back);
    /* wrong types: an error, and the state stays usable */
    write_file(path, "{\"teacher\": 42, \"keep_ratio\": 7, \"results\": {\"header\": 1}}");
    app_state_init(&back);
    assert_int_equal(session_read(&back, path), -1);
    assert_string_equal(back.teacher, "");
    assert_true(back.keep_ratio < 0);
    app_state_free(&back);
    /* truncated file */
    write_file(path, "{\"teacher\": \"x\", \"results\": {\"header\": [\"a\"], \"rows\": [[\"b\"");
    app_state_init(&back);
    assert_int_equal(session_read(&back, path), -1);
    app_state_free(&back);
    app_state_free(&st);
}

static void write_fails_cleanly(void **state) {
    (void)state;
    app_state st;
    app_state_init(&st);
    /* a file where a folder should be */
    char path[400], blocker[400];
    snprintf(blocker, sizeof blocker, "%s/blocker", dir);
    write_file(blocker, "x");
    snprintf(path, sizeof path, "%s/blocker/graft/config.json", dir);
    assert_int_equal(settings_write(&st, path), -1);
    assert_non_null(strstr(gf_last_error(), "blocker"));
    app_state_free(&st);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(xdg_paths),
        cmocka_unit_test_setup_teardown(settings_roundtrip, setup, teardown),
        cmocka_unit_test_setup_teardown(settings_missing_and_corrupt, setup, teardown),
        cmocka_unit_test_setup_teardown(settings_key_overrides, setup, teardown),
        cmocka_unit_test_setup_teardown(session_roundtrip_and_corrupt, setup, teardown),
        cmocka_unit_test_setup_teardown(write_fails_cleanly, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
