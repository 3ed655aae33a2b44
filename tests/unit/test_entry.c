/* Unit tests: the text entry widget, the Teacher screen's keys and drawing,
 * EV_FILE events in app_state, and recent teachers in the session file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workbench/session.h"
#include "workbench/state.h"
#include "core/error.h"
#include "grid.h"
#include "keys.h"
#include "theme.h"
#include "ui.h"
#include "widgets/entry.h"

static const theme utf8_256 = {true, DEPTH_256, 0};

static void type(entry *e, const char *s) {
    for (; *s; s++) assert_int_equal(entry_key(e, (unsigned char)*s), ENTRY_EDITED);
}

static void entry_edits(void **state) {
    (void)state;
    entry e;
    entry_clear(&e);
    type(&e, "org/nme");
    assert_int_equal(entry_key(&e, UK_LEFT), ENTRY_EDITED);
    assert_int_equal(entry_key(&e, UK_LEFT), ENTRY_EDITED);
    type(&e, "a");
    assert_string_equal(e.text, "org/name");
    assert_int_equal(e.cursor, 6);
    entry_key(&e, UK_END);
    type(&e, "@v1");
    entry_key(&e, UK_HOME);
    assert_int_equal(e.cursor, 0);
    entry_key(&e, UK_BACKSPACE); /* at the start: nothing to delete */
    assert_string_equal(e.text, "org/name@v1");
    entry_key(&e, UK_RIGHT);
    entry_key(&e, UK_BACKSPACE);
    assert_string_equal(e.text, "rg/name@v1");
    entry_key(&e, UK_END);
    entry_key(&e, UK_RIGHT); /* past the end: stays */
    assert_int_equal(e.cursor, e.len);
    entry_key(&e, UK_BACKSPACE);
    entry_key(&e, UK_BACKSPACE);
    assert_string_equal(e.text, "rg/name@");
    /* Ctrl-U: from the start to the cursor; Ctrl-K: from the cursor to the end */
    for (int i = 0; i < 3; i++) entry_key(&e, UK_LEFT);
    entry_key(&e, 21);
    assert_string_equal(e.text, "me@");
    assert_int_equal(e.cursor, 0);
    entry_key(&e, UK_RIGHT);
    entry_key(&e, 11);
    assert_string_equal(e.text, "m");
    assert_int_equal(entry_key(&e, UK_ENTER), ENTRY_SUBMIT);
    assert_int_equal(entry_key(&e, UK_ESC), ENTRY_CANCEL);
    /* keys that are not editing keys are left to the caller; control bytes are swallowed */
    assert_int_equal(entry_key(&e, UK_UP), ENTRY_IGNORED);
    assert_int_equal(entry_key(&e, UK_F1), ENTRY_IGNORED);
    assert_int_equal(entry_key(&e, 3), ENTRY_EDITED);
    assert_string_equal(e.text, "m");
}

static void entry_utf8(void **state) {
    (void)state;
    entry e;
    entry_clear(&e);
    /* "é" as curses delivers it: two bytes, one key each; then a code point */
    type(&e, "caf\xc3\xa9");
    assert_int_equal(entry_key(&e, 0x3B1), ENTRY_EDITED); /* alpha, a code point above 0xFF */
    assert_string_equal(e.text, "caf\xc3\xa9\xce\xb1");
    entry_key(&e, UK_LEFT); /* over the two bytes of alpha */
    assert_int_equal(e.cursor, 5);
    entry_key(&e, UK_LEFT); /* over é */
    assert_int_equal(e.cursor, 3);
    entry_key(&e, UK_RIGHT);
    entry_key(&e, UK_BACKSPACE); /* deletes é whole */
    assert_string_equal(e.text, "caf\xce\xb1");
    entry_key(&e, UK_END);
    entry_key(&e, UK_BACKSPACE);
    assert_string_equal(e.text, "caf");
}

static void entry_limits(void **state) {
    (void)state;
    entry e;
    entry_clear(&e);
    for (int i = 0; i < ENTRY_MAX + 20; i++) entry_key(&e, 'x');
    assert_int_equal(e.len, ENTRY_MAX - 1);
    assert_int_equal((int)strlen(e.text), ENTRY_MAX - 1);
    /* entry_set never cuts a UTF-8 sequence */
    char big[ENTRY_MAX + 4];
    memset(big, 'a', sizeof big);
    memcpy(big + ENTRY_MAX - 3, "\xc3\xa9\xc3\xa9", 4);
    big[ENTRY_MAX + 3] = 0;
    entry_set(&e, big);
    assert_true(e.len <= ENTRY_MAX - 1);
    assert_int_equal(utf8_seq_len(e.text + e.len - 2), 2);
    assert_int_equal(e.cursor, e.len);
}

static char *row(grid *g, int y) {
    static char buf[2048];
    grid_row_text(g, y, buf, sizeof buf);
    return buf;
}

static void entry_draws_and_scrolls(void **state) {
    (void)state;
    grid g;
    grid_init(&g, 20, 1);
    entry e;
    entry_set(&e, "karpathy/tinyllamas");
    entry_draw(&g, 0, 0, 20, "open: ", &e, true, STYLE_PLAIN);
    /* 14 columns for text: 13 characters and the cursor cell at the end; the start scrolls away */
    assert_string_equal(row(&g, 0), "open: hy/tinyllamas");
    assert_true(grid_at(&g, 6 + 13, 0)->attr & ATTR_REVERSE);
    assert_false(grid_at(&g, 7, 0)->attr & ATTR_REVERSE);
    grid_clear(&g);
    entry_key(&e, UK_HOME);
    entry_draw(&g, 0, 0, 20, "open: ", &e, true, STYLE_PLAIN);
    assert_string_equal(row(&g, 0), "open: karpathy/tinyl");
    assert_true(grid_at(&g, 6, 0)->attr & ATTR_REVERSE);
    grid_free(&g);
}

/* Ctrl-W deletes the word before the cursor (and the spaces after it); Ctrl-A / Ctrl-E jump. */
static void entry_word_keys(void **state) {
    (void)state;
    entry e;
    entry_clear(&e);
    type(&e, "Once upon  a time");
    entry_key(&e, 23);
    assert_string_equal(e.text, "Once upon  a ");
    entry_key(&e, 23);
    assert_string_equal(e.text, "Once upon  ");
    entry_key(&e, 1); /* ^A */
    assert_int_equal(e.cursor, 0);
    entry_key(&e, 23); /* at the start: nothing */
    assert_string_equal(e.text, "Once upon  ");
    entry_key(&e, 5); /* ^E */
    entry_key(&e, 23);
    assert_string_equal(e.text, "Once ");
    entry_key(&e, 21); /* ^U at the end: all of it */
    assert_string_equal(e.text, "");
    assert_int_equal(e.cursor, 0);
}

/* Wide glyphs take two columns: the cursor cell lands after them, and scrolling keeps whole glyphs. */
static void entry_wide_glyphs(void **state) {
    (void)state;
    grid g;
    grid_init(&g, 12, 1);
    entry e;
    entry_clear(&e);
    type(&e, "\xe4\xb8\xad\xe6\x96\x87x"); /* two CJK glyphs (2 columns each), then x */
    entry_draw(&g, 0, 0, 12, "p: ", &e, true, STYLE_PLAIN);
    assert_string_equal(row(&g, 0), "p: \xe4\xb8\xad\xe6\x96\x87x");
    assert_true(grid_at(&g, 3 + 5, 0)->attr & ATTR_REVERSE); /* 2 + 2 + 1 columns, then the cursor */
    grid_clear(&g);
    for (int i = 0; i < 4; i++) type(&e, "\xe4\xb8\xad"); /* 13 columns of text in a 9-column field */
    entry_draw(&g, 0, 0, 12, "p: ", &e, true, STYLE_PLAIN);
    int cx = -1;
    for (int x = 0; x < 12; x++)
        if (grid_at(&g, x, 0)->attr & ATTR_REVERSE) cx = x;
    assert_int_equal(cx, 11); /* the cursor at the field's last column, the start scrolled away whole */
    assert_int_equal(utf8_width(row(&g, 0)), 11);
    grid_free(&g);
}

/* At the limit: a character that does not fit goes whole, and `full` says so for the caller. */
static void entry_full_is_visible(void **state) {
    (void)state;
    entry e;
    entry_clear(&e);
    for (int i = 0; i < ENTRY_MAX - 2; i++) entry_key(&e, 'x'); /* one byte of room left */
    assert_false(e.full);
    type(&e, "\xc3\xa9"); /* é needs two: refused whole, continuation byte included */
    assert_int_equal(e.len, ENTRY_MAX - 2);
    assert_true(e.full);
    entry_key(&e, 'y'); /* one byte still fits */
    assert_int_equal(e.len, ENTRY_MAX - 1);
    assert_false(e.full);
    entry_key(&e, 'z');
    assert_true(e.full);
    assert_int_equal((int)strlen(e.text), ENTRY_MAX - 1);
    entry_key(&e, UK_BACKSPACE);
    assert_false(e.full);
}

/* ---- the Teacher screen in the frame ---- */

static const char *opened;
static int open_calls;
static int fake_open(app_state *st, job_runner *jr, const char *arg) {
    (void)jr;
    open_calls++;
    static char buf[512];
    snprintf(buf, sizeof buf, "%s", arg);
    opened = buf;
    if (!strcmp(arg, "busy")) return gf_fail("job 'stats' is still running");
    snprintf(st->opening, sizeof st->opening, "%s", arg); /* as the workbench's load does */
    return 0;
}

static bool screen_has(ui *u, grid *g, const char *text) {
    ui_render(u, g);
    char *t = grid_to_text(g, NULL);
    bool found = strstr(t, text) != NULL;
    free(t);
    return found;
}

static void teacher_screen_typing(void **state) {
    (void)state;
    app_state st;
    app_state_init(&st);
    st.open_teacher = fake_open;
    job_runner jr; /* never started: the screen only passes it on */
    memset(&jr, 0, sizeof jr);
    ui_prefs prefs;
    ui_prefs_default(&prefs);
    ui u;
    ui_init(&u, &st, &jr, &prefs, utf8_256);
    grid g;
    grid_init(&g, 100, 30);
    ui_key(&u, '1');
    assert_int_equal(u.screen, SCR_TEACHER);
    ui_key(&u, 'o');
    assert_true(u.typing);
    /* q, digits, ? and p are text while typing: no quit, no screen switch, no help */
    const char *s = "q1?p/x";
    for (const char *p = s; *p; p++) assert_true(ui_key(&u, (unsigned char)*p));
    assert_false(u.quit);
    assert_false(u.help);
    assert_int_equal(u.screen, SCR_TEACHER);
    assert_string_equal(u.v.teacher.open_entry.text, "q1?p/x");
    assert_true(screen_has(&u, &g, "open: q1?p/x"));
    assert_true(screen_has(&u, &g, "Esc cancel"));
    ui_key(&u, UK_ESC);
    assert_false(u.typing);
    assert_int_equal(open_calls, 0);
    /* type and submit: blanks around are dropped */
    ui_key(&u, 'o');
    for (const char *p = "  org/m@v:a.bin "; *p; p++) ui_key(&u, (unsigned char)*p);
    ui_key(&u, UK_ENTER);
    assert_false(u.typing);
    assert_int_equal(open_calls, 1);
    assert_string_equal(opened, "org/m@v:a.bin");
    assert_true(screen_has(&u, &g, "opening org/m@v:a.bin"));
    /* an empty entry opens nothing; a refused open shows its error */
    ui_key(&u, 'o');
    ui_key(&u, UK_ENTER);
    assert_int_equal(open_calls, 1);
    ui_key(&u, 'o');
    for (const char *p = "busy"; *p; p++) ui_key(&u, (unsigned char)*p);
    ui_key(&u, UK_ENTER);
    assert_int_equal(open_calls, 2);
    assert_true(screen_has(&u, &g, "job 'stats' is still running"));
    /* out of the entry, keys are the frame's again */
    ui_key(&u, '3');
    assert_int_equal(u.screen, SCR_STATS);
    grid_free(&g);
    app_state_free(&st);
}

static void teacher_screen_recent(void **state) {
    (void)state;
    app_state st;
    app_state_init(&st);
    st.open_teacher = fake_open;
    job_runner jr;
    memset(&jr, 0, sizeof jr);
    app_add_recent(&st, "a/one", "/cache/one");
    app_add_recent(&st, "b/two", "/cache/two");
    app_add_recent(&st, "c/three", "");
    ui_prefs prefs;
    ui_prefs_default(&prefs);
    ui u;
    ui_init(&u, &st, &jr, &prefs, utf8_256);
    ui_select_screen(&u, "teacher");
    grid g;
    grid_init(&g, 100, 30);
    assert_true(screen_has(&u, &g, "Recent teachers"));
    assert_true(screen_has(&u, &g, "\u2192 c/three"));
    ui_key(&u, UK_DOWN);
    ui_key(&u, UK_DOWN);
    ui_key(&u, UK_DOWN); /* stops at the last */
    assert_int_equal(u.v.teacher.recent_cur, 2);
    assert_true(screen_has(&u, &g, "\u2192 a/one"));
    assert_true(screen_has(&u, &g, "/cache/one"));
    ui_key(&u, UK_UP);
    open_calls = 0;
    ui_key(&u, UK_ENTER);
    assert_int_equal(open_calls, 1);
    assert_string_equal(opened, "b/two");
    grid_free(&g);
    app_state_free(&st);
}

/* ---- app_state: recent list and EV_FILE ---- */

static void recent_order_and_cap(void **state) {
    (void)state;
    app_state st;
    app_state_init(&st);
    char arg[32], path[32];
    for (int i = 0; i < APP_MAX_RECENT + 3; i++) {
        snprintf(arg, sizeof arg, "org/m%d", i);
        snprintf(path, sizeof path, "/p/%d", i);
        app_add_recent(&st, arg, path);
    }
    assert_int_equal(st.n_recent, APP_MAX_RECENT);
    snprintf(arg, sizeof arg, "org/m%d", APP_MAX_RECENT + 2);
    assert_string_equal(st.recent[0].arg, arg);
    /* reopening moves it up without a duplicate, keeping its path when none is given */
    app_add_recent(&st, "org/m5", "");
    assert_int_equal(st.n_recent, APP_MAX_RECENT);
    assert_string_equal(st.recent[0].arg, "org/m5");
    assert_string_equal(st.recent[0].path, "/p/5");
    int seen = 0;
    for (int i = 0; i < st.n_recent; i++) seen += !strcmp(st.recent[i].arg, "org/m5");
    assert_int_equal(seen, 1);
    app_add_recent(&st, "", "/x"); /* ignored */
    assert_string_equal(st.recent[0].arg, "org/m5");
    app_state_free(&st);
}

static event file_ev(const char *name, file_state s, double done, double total, long long all_done) {
    event ev = {.kind = EV_FILE, .done = done, .total = total, .rate = 2e6, .eta_s = 3};
    snprintf(ev.job_name, sizeof ev.job_name, "load");
    snprintf(ev.text, sizeof ev.text, "%s", name);
    ev.file.state = s;
    ev.file.all_done = all_done;
    ev.file.all_total = 3000000;
    ev.file.files_done = s == FILE_DONE || s == FILE_CACHED;
    ev.file.files_total = 2;
    return ev;
}

static void file_events_fill_download(void **state) {
    (void)state;
    app_state st;
    app_state_init(&st);
    event ev = file_ev("tok.bin", FILE_CACHED, 1000, 1000, 1000);
    assert_true(app_apply_event(&st, &ev));
    ev = file_ev("model.bin", FILE_ACTIVE, 500000, 2999000, 501000);
    ev.file.files_done = 1;
    app_apply_event(&st, &ev);
    assert_int_equal(st.download.n_files, 2);
    assert_true(st.download.active);
    assert_int_equal(st.download.files[1].state, FILE_ACTIVE);
    assert_int_equal((int)st.download.files[1].done, 500000);
    assert_int_equal((int)st.download.done, 501000);
    ui_prefs prefs;
    ui_prefs_default(&prefs);
    ui u;
    ui_init(&u, &st, NULL, &prefs, utf8_256);
    ui_select_screen(&u, "teacher");
    grid g;
    grid_init(&g, 100, 30);
    assert_true(screen_has(&u, &g, "Files 1/2  501.0 kB / 3.0 MB (opening)"));
    assert_true(screen_has(&u, &g, "2.0 MB/s  eta 3s"));
    assert_true(screen_has(&u, &g, "500.0 kB / 3.0 MB"));
    assert_true(screen_has(&u, &g, "cached    1.0 kB  tok.bin"));
    /* the same file again updates its row */
    ev = file_ev("model.bin", FILE_DONE, 2999000, 2999000, 3000000);
    ev.file.files_done = 2;
    app_apply_event(&st, &ev);
    assert_int_equal(st.download.n_files, 2);
    assert_false(st.download.active);
    assert_true(screen_has(&u, &g, "done      3.0 MB  model.bin"));
    /* the current teacher's own files, once the transient download is gone (a failed open's files
     * never stay: the workbench clears the download on failure) */
    teacher_state *t = app_teacher(&st, "/cache/gguf/m.gguf");
    snprintf(t->name, sizeof t->name, "m.gguf");
    t->n_files = 1;
    snprintf(t->files[0].name, sizeof t->files[0].name, "m.gguf");
    t->files[0].state = FILE_CACHED;
    t->files[0].total = 98400000;
    app_switch(&st, t);
    app_clear_download(&st);
    snprintf(st.teacher_error, sizeof st.teacher_error, "opening org/x: repository org/x not found (HTTP 404)");
    assert_true(screen_has(&u, &g, "error: opening org/x: repository org/x not found (HTTP 404)"));
    assert_true(screen_has(&u, &g, "Files of m.gguf"));
    assert_true(screen_has(&u, &g, "cached   98.4 MB  m.gguf"));
    assert_false(screen_has(&u, &g, "model.bin"));
    assert_false(screen_has(&u, &g, "tok.bin"));
    grid_free(&g);
    app_state_free(&st);
}

/* ---- session.json ---- */

static void session_recent_roundtrip(void **state) {
    (void)state;
    char dir[] = "/tmp/graft_entry_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/session.json", dir);
    app_state a, b;
    app_state_init(&a);
    app_add_recent(&a, "old/one", "/p/1");
    app_add_recent(&a, "new/two", "/p/2");
    assert_int_equal(session_write(&a, path), 0);
    app_state_init(&b);
    assert_int_equal(session_read(&b, path), 0);
    assert_int_equal(b.n_recent, 2);
    assert_string_equal(b.recent[0].arg, "new/two");
    assert_string_equal(b.recent[1].path, "/p/1");
    app_state_free(&b);
    /* an old session (no "recent") still reads; bad entries are skipped */
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"teacher\": \"t\", \"strategy\": \"s\"}", f);
    fclose(f);
    app_state_init(&b);
    assert_int_equal(session_read(&b, path), 0);
    assert_int_equal(b.n_recent, 0);
    assert_null(app_cur(&b));
    app_state_free(&b);
    f = fopen(path, "w");
    fputs("{\"recent\": [{\"arg\": \"ok/one\"}, 5, {\"path\": \"/no-arg\"}]}", f);
    fclose(f);
    app_state_init(&b);
    assert_int_equal(session_read(&b, path), 0);
    assert_int_equal(b.n_recent, 1);
    assert_string_equal(b.recent[0].arg, "ok/one");
    app_state_free(&b);
    f = fopen(path, "w");
    fputs("{\"recent\": \"not a list\"}", f);
    fclose(f);
    app_state_init(&b);
    assert_int_equal(session_read(&b, path), -1);
    assert_non_null(strstr(gf_last_error(), "recent"));
    app_state_free(&b);
    app_state_free(&a);
    unlink(path);
    rmdir(dir);
}

/* The job history in the session: outcomes and where a job had got to come back; a job saved
 * while running (the workbench killed outright) comes back interrupted; ids never collide
 * with a live job's. One writer: a second lock on the same session makes it read-only. */
static void session_jobs_and_lock(void **state) {
    (void)state;
    char dir[] = "/tmp/graft_entry_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128], lock[160];
    snprintf(path, sizeof path, "%s/session.json", dir);
    snprintf(lock, sizeof lock, "%s.lock", path);
    app_state a, b, c;
    app_state_init(&a);
    job_record r;
    memset(&r, 0, sizeof r);
    snprintf(r.name, sizeof r.name, "evaluate");
    snprintf(r.teacher, sizeof r.teacher, "stories260K.bin");
    r.outcome = JOB_DONE, r.seconds = 3.5, r.id = 7;
    app_restore_job(&a, &r);
    snprintf(r.name, sizeof r.name, "race");
    snprintf(r.phase, sizeof r.phase, "train taylor-calibrate");
    snprintf(r.label, sizeof r.label, "taylor-calibrate step 12/50, 900 tokens/s");
    snprintf(r.checkpoint, sizeof r.checkpoint, "taylor-calibrate step 10: /x/t.ckpt");
    r.outcome = JOB_RUNNING, r.fraction = 0.62, r.done = 1536, r.total = 6400;
    app_restore_job(&a, &r); /* a running job read back is an interrupted one */
    assert_int_equal(app_job_at(&a, 1)->outcome, JOB_INTERRUPTED);
    assert_true(app_job_at(&a, 0)->id < 0 && app_job_at(&a, 1)->id < 0);
    assert_int_equal(session_lock(&a, path), 0);
    assert_false(a.read_only);
    assert_true(a.lock_fd > 2);
    assert_int_equal(session_write(&a, path), 0);

    app_state_init(&b);
    assert_int_equal(session_lock(&b, path), 0); /* held by a: b is read-only, and knows who holds it */
    assert_true(b.read_only);
    assert_int_equal(b.lock_holder, (long)getpid());
    assert_int_equal(persist_save_session(&b), 0); /* writes nothing */
    assert_int_equal(session_read(&b, path), 0);
    assert_int_equal(b.n_hist, 2);
    const job_record *race = app_last_job(&b, &(teacher_state){.name = "stories260K.bin"}, "race");
    assert_non_null(race);
    assert_int_equal(race->outcome, JOB_INTERRUPTED);
    assert_string_equal(race->checkpoint, "taylor-calibrate step 10: /x/t.ckpt");
    char at[200];
    app_job_progress_text(race, at, sizeof at);
    assert_string_equal(at, "at step 12 of 50 (train taylor-calibrate, 62% of the job)");
    assert_int_equal(app_job_at(&b, 0)->outcome, JOB_DONE);
    app_state_free(&b);

    app_state_free(&a); /* the lock goes with a: the next one writes */
    app_state_init(&c);
    assert_int_equal(session_lock(&c, path), 0);
    assert_false(c.read_only);
    app_state_free(&c);
    /* session names: letters, digits, . _ - and no path */
    assert_int_equal(session_name_check("run-2.b_c"), 0);
    assert_int_equal(session_name_check("../x"), -1);
    assert_int_equal(session_name_check(".hidden"), -1);
    assert_int_equal(session_name_check(""), -1);
    unlink(path);
    unlink(lock);
    rmdir(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(entry_edits),
        cmocka_unit_test(entry_utf8),
        cmocka_unit_test(entry_limits),
        cmocka_unit_test(entry_draws_and_scrolls),
        cmocka_unit_test(entry_word_keys),
        cmocka_unit_test(entry_wide_glyphs),
        cmocka_unit_test(entry_full_is_visible),
        cmocka_unit_test(teacher_screen_typing),
        cmocka_unit_test(teacher_screen_recent),
        cmocka_unit_test(recent_order_and_cap),
        cmocka_unit_test(file_events_fill_download),
        cmocka_unit_test(session_recent_roundtrip),
        cmocka_unit_test(session_jobs_and_lock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
