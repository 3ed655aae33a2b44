/* Unit tests: the file of GEMM algorithm choices (engine/backend/gemm_choices.c)
 * that GRAFT_CUDA_GEMM_TUNE keeps between runs. No GPU: the algorithms here are
 * made-up 64-byte blobs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/gemm_choices.h"
#include "core/error.h"
#include "core/mapped_file.h"

static void blob(unsigned char *b, int seed) {
    for (int i = 0; i < GEMM_ALGO_BYTES; i++) b[i] = (unsigned char)(seed * 31 + i * 7);
}

static void spit(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A new folder in /tmp (dir holds its name, a "/tmp/graft_test_gemmc_XXXXXX" template) and the
 * path of NAME inside it; drop() removes the folder and all it holds when the test is done. */
static void scratch(char *dir, char *path, size_t n, const char *name) {
    assert_non_null(mkdtemp(dir));
    snprintf(path, n, "%s/%s", dir, name);
}

static void drop(const char *dir) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* The choice kept under KEY is WANT, byte for byte. */
static void expect_choice(gemm_choices *c, const char *key, const unsigned char *want) {
    unsigned char got[GEMM_ALGO_BYTES];
    assert_true(gemm_choices_get(c, key, got));
    assert_memory_equal(got, want, GEMM_ALGO_BYTES);
}

/* Choices put in one run come back, byte for byte, in the next; a missing
 * file (and its missing folders) is an empty table, made on the first put. */
static void round_trip(void **state) {
    (void)state;
    char dir[] = "/tmp/graft_test_gemmc_XXXXXX", path[128];
    scratch(dir, path, sizeof path, "a/b/gemm-choices.json");
    gemm_choices c;
    unsigned char a[GEMM_ALGO_BYTES], b[GEMM_ALGO_BYTES], got[GEMM_ALGO_BYTES];
    blob(a, 1), blob(b, 2);
    assert_int_equal(gemm_choices_open(&c, path), 0);
    assert_false(gemm_choices_get(&c, "dev|lt 1|TN m 8 n 8 k 8", got));
    assert_int_equal(gemm_choices_put(&c, "dev|lt 1|TN m 8 n 8 k 8", a), 0);
    assert_int_equal(gemm_choices_put(&c, "dev|lt 1|NN m 8 n 16 k 8", b), 0);
    assert_int_equal(gemm_choices_put(&c, "dev|lt 1|TN m 8 n 8 k 8", b), 0); /* a new choice replaces */
    gemm_choices_free(&c);
    assert_int_equal(gemm_choices_open(&c, path), 0);
    assert_int_equal(c.n, 2);
    expect_choice(&c, "dev|lt 1|TN m 8 n 8 k 8", b);
    expect_choice(&c, "dev|lt 1|NN m 8 n 16 k 8", b);
    gemm_choices_free(&c);
    /* no path: kept in memory, nothing written */
    assert_int_equal(gemm_choices_open(&c, NULL), 0);
    assert_int_equal(gemm_choices_put(&c, "k", a), 0);
    expect_choice(&c, "k", a);
    gemm_choices_free(&c);
    drop(dir);
}

/* Two runs that share the file (ranks of one job) keep each other's choices:
 * each put merges into the file as it is then. */
static void two_writers_merge(void **state) {
    (void)state;
    char dir[] = "/tmp/graft_test_gemmc_XXXXXX", path[128];
    scratch(dir, path, sizeof path, "c.json");
    gemm_choices r0, r1, back;
    unsigned char a[GEMM_ALGO_BYTES], b[GEMM_ALGO_BYTES];
    blob(a, 3), blob(b, 4);
    assert_int_equal(gemm_choices_open(&r0, path), 0);
    assert_int_equal(gemm_choices_open(&r1, path), 0);
    assert_int_equal(gemm_choices_put(&r0, "rank0 shape", a), 0);
    assert_int_equal(gemm_choices_put(&r1, "rank1 shape", b), 0);
    assert_int_equal(gemm_choices_open(&back, path), 0);
    assert_int_equal(back.n, 2);
    expect_choice(&back, "rank0 shape", a);
    expect_choice(&back, "rank1 shape", b);
    gemm_choices_free(&r0), gemm_choices_free(&r1), gemm_choices_free(&back);
    drop(dir);
}

/* A file that is not a choice file is refused with a line naming it, and a put
 * never overwrites one (the file keeps its bytes). */
static void foreign_files_refused(void **state) {
    (void)state;
    char dir[] = "/tmp/graft_test_gemmc_XXXXXX", path[128];
    scratch(dir, path, sizeof path, "c.json");
    char hex_ok[2 * GEMM_ALGO_BYTES + 1];
    memset(hex_ok, 'a', sizeof hex_ok - 1), hex_ok[sizeof hex_ok - 1] = 0;
    char bad_hex[512], bad_ver[512], bad_val[512];
    snprintf(bad_hex, sizeof bad_hex,
             "{\"format\": \"graft-gemm-choices\", \"version\": 1, \"choices\": {\"k\": \"%.127sz\"}}", hex_ok);
    snprintf(bad_ver, sizeof bad_ver, "{\"format\": \"graft-gemm-choices\", \"version\": 2, \"choices\": {}}");
    snprintf(bad_val, sizeof bad_val, "{\"format\": \"graft-gemm-choices\", \"version\": 1, \"choices\": {\"k\": 7}}");
    const char *const bad[] = {"not json", "{\"choices\": {}}", "[1, 2]", bad_hex, bad_ver, bad_val, ""};
    const char *const says[] = {"not a graft GEMM choice file", "not a graft GEMM choice file",
                                "not a graft GEMM choice file", "is not 64 hex bytes", "version 2",
                                "is not 64 hex bytes", "not a graft GEMM choice file"};
    unsigned char a[GEMM_ALGO_BYTES];
    blob(a, 5);
    for (int i = 0; i < 7; i++) {
        gemm_choices c;
        spit(path, bad[i]);
        assert_int_equal(gemm_choices_open(&c, path), -1);
        assert_non_null(strstr(gf_last_error(), path));
        assert_non_null(strstr(gf_last_error(), says[i]));
        gemm_choices_free(&c);
    }
    /* a good file that turns foreign while a run holds it: the put fails, the file stays */
    gemm_choices c;
    unlink(path);
    assert_int_equal(gemm_choices_open(&c, path), 0);
    spit(path, "someone else's file");
    assert_int_equal(gemm_choices_put(&c, "k", a), -1);
    assert_non_null(strstr(gf_last_error(), "not a graft GEMM choice file"));
    char *text = read_text_file(path, NULL);
    assert_string_equal(text, "someone else's file");
    free(text);
    unsigned char got[GEMM_ALGO_BYTES];
    assert_true(gemm_choices_get(&c, "k", got)); /* still used in this run */
    assert_null(c.path);                         /* and written no more: later puts succeed in memory */
    assert_int_equal(gemm_choices_put(&c, "k2", a), 0);
    text = read_text_file(path, NULL);
    assert_string_equal(text, "someone else's file");
    free(text);
    gemm_choices_free(&c);
    drop(dir);
}

typedef struct {
    gemm_choices *c;
    int thread;
    int failed;
} writer;

static void *write_many(void *p) {
    writer *w = p;
    unsigned char a[GEMM_ALGO_BYTES];
    char key[64];
    for (int i = 0; i < 25; i++) {
        blob(a, w->thread * 100 + i);
        snprintf(key, sizeof key, "thread %d shape %d", w->thread, i);
        if (gemm_choices_put(w->c, key, a) != 0) w->failed++;
    }
    return NULL;
}

/* The backend's task threads share one table: 4 x 25 puts at once all land,
 * in memory and in the file. */
static void threads_share_one_table(void **state) {
    (void)state;
    char dir[] = "/tmp/graft_test_gemmc_XXXXXX", path[128];
    scratch(dir, path, sizeof path, "c.json");
    gemm_choices c, back;
    assert_int_equal(gemm_choices_open(&c, path), 0);
    pthread_t t[4];
    writer w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (writer){&c, i, 0};
        assert_int_equal(pthread_create(&t[i], NULL, write_many, &w[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(w[i].failed, 0);
    }
    assert_int_equal(c.n, 100);
    assert_int_equal(gemm_choices_open(&back, path), 0);
    assert_int_equal(back.n, 100);
    unsigned char want[GEMM_ALGO_BYTES];
    blob(want, 3 * 100 + 24);
    expect_choice(&back, "thread 3 shape 24", want);
    gemm_choices_free(&c), gemm_choices_free(&back);
    drop(dir);
}

static void default_path(void **state) {
    (void)state;
    setenv("XDG_CACHE_HOME", "/x/cache", 1);
    setenv("HOME", "/h", 1);
    char *p = gemm_choices_default_path();
    assert_string_equal(p, "/x/cache/graft/gemm-choices.json");
    free(p);
    unsetenv("XDG_CACHE_HOME");
    p = gemm_choices_default_path();
    assert_string_equal(p, "/h/.cache/graft/gemm-choices.json");
    free(p);
    unsetenv("HOME");
    assert_null(gemm_choices_default_path());
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip),
        cmocka_unit_test(two_writers_merge),
        cmocka_unit_test(foreign_files_refused),
        cmocka_unit_test(threads_share_one_table),
        cmocka_unit_test(default_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
