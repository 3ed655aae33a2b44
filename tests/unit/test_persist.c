/* Unit tests: the preferences file and the session file (XDG paths, atomic
 * writes, corrupt input; everything computed stored under its teacher). */
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

#include <math.h>

#include "core/error.h"
#include "persist/persist.h"
#include "theme.h"
#include "workbench/json_file.h"
#include "workbench/session.h"

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
    ui_prefs st;
    ui_prefs_default(&st);
    st.palette = palette_find("magma");
    st.refresh_hz = 12;
    assert_int_equal(settings_write(&st, path), 0);
    ui_prefs back;
    ui_prefs_default(&back);
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
}

static void settings_missing_and_corrupt(void **state) {
    (void)state;
    char path[400];
    snprintf(path, sizeof path, "%s/none.json", dir);
    ui_prefs st;
    ui_prefs_default(&st);
    app_state log;
    app_state_init(&log);
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
    persist_load_settings(&st, &log);
    assert_int_equal(log.log.n, 1);
    assert_non_null(strstr(wb_log_get(&log.log, 0)->text, "warning"));
    assert_int_equal(wb_log_get(&log.log, 0)->level, LOG_WARN);
    unsetenv("XDG_CONFIG_HOME");
    app_state_free(&log);
}

static void settings_key_overrides(void **state) {
    (void)state;
    char path[400];
    snprintf(path, sizeof path, "%s/keys.json", dir);
    write_file(path, "{\"keys\": {\"metric\": \"x\", \"log_scale\": \"L\"}}");
    ui_prefs st;
    ui_prefs_default(&st);
    assert_int_equal(settings_read(&st, path), 0);
    assert_int_equal(keymap_translate(&st.keys, 'x'), 'm');
    assert_int_equal(keymap_translate(&st.keys, 'L'), 'l');
    assert_int_equal(keymap_translate(&st.keys, 'm'), 'm');
    char buf[2];
    assert_string_equal(keymap_show(&st.keys, "m", buf), "x");
    assert_string_equal(keymap_show(&st.keys, "q", buf), "q");
    /* written back and read again */
    assert_int_equal(settings_write(&st, path), 0);
    ui_prefs back;
    ui_prefs_default(&back);
    assert_int_equal(settings_read(&back, path), 0);
    assert_int_equal(keymap_translate(&back.keys, 'x'), 'm');
    /* bad bindings: errors, the good ones still apply */
    write_file(path, "{\"keys\": {\"metric\": \"xy\", \"fly\": \"f\", \"quit\": \"3\", \"init\": \"j\"}}");
    ui_prefs bad;
    ui_prefs_default(&bad);
    assert_int_equal(settings_read(&bad, path), -1);
    assert_non_null(strstr(gf_last_error(), path));
    assert_int_equal(keymap_translate(&bad.keys, 'j'), 'i');
    assert_int_equal(keymap_translate(&bad.keys, '3'), '3');
}

static teacher_state *fill_teacher(app_state *st, const char *key, const char *name, int L, double ppl) {
    teacher_state *t = app_teacher(st, key);
    snprintf(t->name, sizeof t->name, "%s", name);
    snprintf(t->arg, sizeof t->arg, "%s", key);
    teacher_state_set_shape(t, L, 4);
    snprintf(t->strategy, sizeof t->strategy, "ar");
    t->keep_ratio = 0.25;
    for (int l = 0; l < L; l++) teacher_set_score(t, 1, l, 10.0 + l);
    t->teacher_ppl = ppl;
    snprintf(t->ppl_corpus, sizeof t->ppl_corpus, "c.txt");
    t->ppl_windows = 8, t->ppl_ctx = 256;
    result_row r;
    result_row_init(&r);
    r.kind = RUN_EVALUATE;
    snprintf(r.teacher, sizeof r.teacher, "%s", name);
    snprintf(r.strategy, sizeof r.strategy, "ar");
    r.keep = 0.25;
    snprintf(r.init, sizeof r.init, "taylor-calibrate");
    r.stage2_steps = 10;
    snprintf(r.corpus, sizeof r.corpus, "c.txt");
    r.eval_windows = 8, r.ctx = 256;
    r.ppl = ppl * 1.5;
    teacher_add_result(t, &r);
    r.kind = RUN_RACE;
    r.race_tokens = 4096, r.tokens_to_target = -1, r.ratio = NAN;
    teacher_add_result(t, &r);
    return t;
}

/* Two teachers and their own plans, scores, perplexities and rows: each comes
 * back under its own key; the current one and the settings too. */
static void session_roundtrip_and_corrupt(void **state) {
    (void)state;
    char path[400];
    snprintf(path, sizeof path, "%s/state/graft/session.json", dir);
    app_state st;
    app_state_init(&st);
    snprintf(st.corpus, sizeof st.corpus, "tiny \"quoted\" corpus.txt");
    teacher_state *a = fill_teacher(&st, "/models/a.bin", "a.bin", 5, 8.1078);
    fill_teacher(&st, "/models/b.gguf", "b.gguf", 30, 11.48);
    app_switch(&st, a);
    st.settings.stage2_steps = 10;
    st.settings.eval_windows = 8;
    assert_int_equal(session_write(&st, path), 0);
    app_state back;
    app_state_init(&back);
    assert_int_equal(session_read(&back, path), 0);
    assert_string_equal(back.corpus, st.corpus);
    assert_int_equal(back.n_teachers, 2);
    assert_non_null(app_cur(&back));
    assert_string_equal(app_cur(&back)->key, "/models/a.bin");
    assert_int_equal(back.settings.stage2_steps, 10);
    assert_int_equal(back.settings.eval_windows, 8);
    const teacher_state *ta = app_find_teacher(&back, "/models/a.bin"), *tb = app_find_teacher(&back, "/models/b.gguf");
    assert_non_null(ta);
    assert_non_null(tb);
    /* each teacher keeps its own numbers: exact, as JSON writes doubles with 17 digits */
    assert_true(ta->teacher_ppl == 8.1078 && tb->teacher_ppl == 11.48);
    assert_int_equal(ta->n_layers, 5);
    assert_int_equal(tb->n_layers, 30);
    assert_string_equal(tb->strategy, "ar");
    assert_true(tb->keep_ratio == 0.25);
    assert_non_null(tb->plan_score[1]);
    assert_true(tb->plan_score[1][29] == 39.0);
    assert_int_equal(teacher_kept_count(tb), 8); /* round(0.25 * 30) = 8, the highest ar scores */
    assert_true(tb->kept[29] && !tb->kept[0]);
    assert_int_equal(ta->n_results, 2);
    assert_int_equal(tb->n_results, 2);
    assert_string_equal(ta->results[0].teacher, "a.bin");
    assert_string_equal(tb->results[0].teacher, "b.gguf");
    assert_int_equal(ta->results[0].stage2_steps, 10);
    assert_int_equal(ta->results[0].eval_windows, 8);
    assert_int_equal(ta->results[1].kind, RUN_RACE); /* race rows survive */
    assert_true(ta->results[1].tokens_to_target == -1);
    assert_true(isnan(ta->results[1].ratio));
    app_state_free(&back);
    /* wrong types: an error, and what could be read stays */
    write_file(path, "{\"teachers\": [{\"key\": \"k\", \"plan\": {\"layers\": -3}, \"results\": [{\"run\": 7}]}],"
                     " \"settings\": {\"stage2_steps\": \"many\", \"eval_windows\": 4}}");
    app_state_init(&back);
    assert_int_equal(session_read(&back, path), -1);
    assert_null(strchr(gf_last_error(), '\n'));
    assert_int_equal(back.n_teachers, 1);
    assert_int_equal(back.settings.stage2_steps, 300); /* the default stays */
    assert_int_equal(back.settings.eval_windows, 4);
    assert_int_equal(app_find_teacher(&back, "k")->n_results, 0);
    app_state_free(&back);
    /* the first format: recent teachers only, and a warning in the log */
    write_file(path, "{\"teacher\": \"x\", \"strategy\": \"ga-s2\", \"results\": {\"header\": [\"a\"], \"rows\": [[\"b\"]]},"
                     " \"recent\": [{\"arg\": \"org/m\", \"path\": \"/p\"}]}");
    app_state_init(&back);
    assert_int_equal(session_read(&back, path), 0);
    assert_int_equal(back.n_teachers, 0);
    assert_int_equal(back.n_recent, 1);
    assert_int_equal(back.log.n, 1);
    assert_non_null(strstr(wb_log_get(&back.log, 0)->text, "first format"));
    app_state_free(&back);
    /* truncated file */
    write_file(path, "{\"teachers\": [{\"key\": \"x\", \"results\": [{\"run\": \"evaluate\"");
    app_state_init(&back);
    assert_int_equal(session_read(&back, path), -1);
    app_state_free(&back);
    app_state_free(&st);
}

static void write_fails_cleanly(void **state) {
    (void)state;
    ui_prefs st;
    ui_prefs_default(&st);
    /* a file where a folder should be */
    char path[400], blocker[400];
    snprintf(blocker, sizeof blocker, "%s/blocker", dir);
    write_file(blocker, "x");
    snprintf(path, sizeof path, "%s/blocker/graft/config.json", dir);
    assert_int_equal(settings_write(&st, path), -1);
    assert_non_null(strstr(gf_last_error(), "blocker"));
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
