/* Unit tests: strmap, int_vec, the shared BPE merge loop, the option parser, counts from the
 * environment. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>

#include "method/args.h"
#include "core/atomic_file.h"
#include "core/env.h"
#include "core/error.h"
#include "core/strmap.h"
#include "core/vec.h"
#include "tokenizer/bpe_merge.h"

static void strmap_roundtrip(void **state) {
    (void)state;
    strmap m;
    strmap_init(&m, 4);
    char key[32];
    for (int i = 0; i < 5000; i++) {
        int n = snprintf(key, sizeof key, "k%d", i);
        strmap_put(&m, key, (size_t)n, i);
    }
    for (int i = 0; i < 5000; i++) {
        int n = snprintf(key, sizeof key, "k%d", i);
        assert_int_equal(strmap_get(&m, key, (size_t)n), i);
    }
    assert_int_equal(strmap_get(&m, "absent", 6), -1);
    strmap_put(&m, "k7", 2, 70);
    assert_int_equal(strmap_get(&m, "k7", 2), 70);
    /* keys with embedded NUL bytes are distinct */
    strmap_put(&m, "a\0b", 3, 1);
    assert_int_equal(strmap_get(&m, "a\0c", 3), -1);
    assert_int_equal(strmap_get(&m, "a\0b", 3), 1);
    strmap_free(&m);
}

/* Pairs merge into id a*10+b with priority from a table; checks leftmost ties. */
static bool toy_pair(void *ctx, int a, int b, double *priority, int *merged) {
    (void)ctx;
    if (a == 1 && b == 1) { *priority = 1; *merged = 11; return true; }
    if (a == 11 && b == 2) { *priority = 5; *merged = 112; return true; }
    return false;
}

static void bpe_leftmost_and_priority(void **state) {
    (void)state;
    /* 1 1 1 2: (1,1) at 0 and 1 tie; leftmost merges -> 11 1 2; then none of
     * (11,1), (1,2) merge. A non-leftmost choice would give 1 11 2 -> 1 112. */
    int ids[] = {1, 1, 1, 2};
    bpe_sym s[4];
    for (int i = 0; i < 4; i++) s[i] = (bpe_sym){ids[i], i - 1, i + 1 < 4 ? i + 1 : -1};
    bpe_merge(s, 4, toy_pair, NULL);
    int out[4], n = 0;
    for (int i = 0; i >= 0; i = s[i].next) out[n++] = s[i].id;
    assert_int_equal(n, 3);
    assert_int_equal(out[0], 11);
    assert_int_equal(out[1], 1);
    assert_int_equal(out[2], 2);
    /* 1 1 2: 11 2 then 112 */
    bpe_sym t[3];
    int ids2[] = {1, 1, 2};
    for (int i = 0; i < 3; i++) t[i] = (bpe_sym){ids2[i], i - 1, i + 1 < 3 ? i + 1 : -1};
    bpe_merge(t, 3, toy_pair, NULL);
    assert_int_equal(t[0].id, 112);
    assert_int_equal(t[0].next, -1);
}

static void args_errors(void **state) {
    (void)state;
    int n = 0;
    bool json = false;
    const char *text = NULL;
    opt_spec specs[] = {{"n", OPT_INT, &n, "count"}, {"json", OPT_FLAG, &json, "json"},
                        {"text", OPT_STR, &text, "file"}};
    const char *pos[2];
    int np;
    char *ok[] = {"cmd", "model", "-n", "16", "--json", "--text=f.txt"};
    assert_int_equal(args_parse(6, ok, specs, 3, pos, 2, &np), 0);
    assert_int_equal(n, 16);
    assert_true(json);
    assert_string_equal(text, "f.txt");
    assert_int_equal(np, 1);
    char *bad_int[] = {"cmd", "-n", "x"};
    assert_int_equal(args_parse(3, bad_int, specs, 3, pos, 2, &np), -1);
    assert_non_null(strstr(gf_last_error(), "integer"));
    char *unknown[] = {"cmd", "--bogus"};
    assert_int_equal(args_parse(2, unknown, specs, 3, pos, 2, &np), -1);
    assert_non_null(strstr(gf_last_error(), "unknown option --bogus"));
    char *missing[] = {"cmd", "--text"};
    assert_int_equal(args_parse(2, missing, specs, 3, pos, 2, &np), -1);
}

static int entries_in(const char *dir) {
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) n += e->d_name[0] != '.';
    if (d) closedir(d);
    return n;
}

static void read_back(const char *path, char *buf, size_t cap) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = 0;
    fclose(f);
}

/* A file is replaced whole or not at all, and no temporary file stays. */
static void atomic_file_whole_or_nothing(void **state) {
    (void)state;
    char dir[] = "/tmp/graft_test_atomic_XXXXXX", path[64], buf[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/f.txt", dir);
    assert_int_equal(atomic_write(path, "first", 5), 0);
    read_back(path, buf, sizeof buf);
    assert_string_equal(buf, "first");
    atomic_file a;
    assert_int_equal(atomic_file_open(&a, path), 0);
    fputs("half of a second vers", a.f);
    assert_int_equal(entries_in(dir), 2); /* the file and its temporary sibling */
    atomic_file_discard(&a);              /* given up: the old content stays */
    read_back(path, buf, sizeof buf);
    assert_string_equal(buf, "first");
    assert_int_equal(entries_in(dir), 1);
    assert_int_equal(atomic_file_open(&a, path), 0);
    fputs("second", a.f);
    assert_int_equal(atomic_file_finish(&a), 0);
    read_back(path, buf, sizeof buf);
    assert_string_equal(buf, "first"); /* finished, not yet committed */
    assert_int_equal(atomic_file_commit(&a), 0);
    read_back(path, buf, sizeof buf);
    assert_string_equal(buf, "second");
    assert_int_equal(entries_in(dir), 1);
    /* a folder that does not exist: one line naming the file */
    char bad[96];
    snprintf(bad, sizeof bad, "%s/missing/f.txt", dir);
    assert_int_equal(atomic_write(bad, "x", 1), -1);
    assert_non_null(strstr(gf_last_error(), bad));
    /* a full device: the write fails at finish, the temporary file is gone */
    if (access("/dev/full", W_OK) == 0) {
        FILE *full = fopen("/dev/full", "wb");
        assert_non_null(full);
        atomic_file f = {.f = full, .path = strdup("/dev/full"), .tmp = strdup("/nonexistent/tmp")};
        fputs("data", full);
        assert_int_equal(atomic_file_finish(&f), -1);
        assert_non_null(strstr(gf_last_error(), "No space left"));
    }
    unlink(path);
    rmdir(dir);
}

static void vec_grows(void **state) {
    (void)state;
    int_vec v = {0};
    for (int i = 0; i < 1000; i++) int_vec_push(&v, i);
    assert_int_equal(v.len, 1000);
    assert_int_equal(v.data[999], 999);
    int_vec_free(&v);
}

/* gf_env_count: unset or empty keeps the default; digits only, 1 to max; anything else fails with
 * one line naming the variable and leaves the value alone. */
static void env_count_bounds(void **state) {
    (void)state;
    const char *name = "GRAFT_TEST_ENV_COUNT";
    int v = 4;
    unsetenv(name);
    assert_int_equal(gf_env_count(name, 16, "things", &v), 0);
    assert_int_equal(v, 4);
    setenv(name, "", 1);
    assert_int_equal(gf_env_count(name, 16, "things", &v), 0);
    assert_int_equal(v, 4);
    static const char *const good[] = {"1", "16", "08"};
    static const int want[] = {1, 16, 8};
    for (int i = 0; i < 3; i++) {
        setenv(name, good[i], 1);
        assert_int_equal(gf_env_count(name, 16, "things", &v), 0);
        assert_int_equal(v, want[i]);
    }
    static const char *const bad[] = {"0", "17", "8x", "-1", " 8", "+8", "x", "99999999999999999999"};
    for (int i = 0; i < 8; i++) {
        setenv(name, bad[i], 1);
        v = 4;
        assert_int_equal(gf_env_count(name, 16, "things", &v), -1);
        assert_int_equal(v, 4);
        char want_msg[96];
        snprintf(want_msg, sizeof want_msg, "GRAFT_TEST_ENV_COUNT=%s: a whole number of things, 1 to 16", bad[i]);
        assert_string_equal(gf_last_error(), want_msg);
    }
    unsetenv(name);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(strmap_roundtrip),
        cmocka_unit_test(bpe_leftmost_and_priority),
        cmocka_unit_test(args_errors),
        cmocka_unit_test(vec_grows),
        cmocka_unit_test(atomic_file_whole_or_nothing),
        cmocka_unit_test(env_count_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
