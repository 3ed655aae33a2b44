/* Unit tests: files read whole or mapped (engine/core/mapped_file.h) are
 * regular files of a bounded size: a FIFO (with no writer: the open must not
 * block), a character device and a folder are refused at once with the path
 * and what it is; a file larger than the bound is refused before reading. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "core/mapped_file.h"

static char dir[64];

static int setup(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/graft_inputs_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void expect_refused(const char *path, const char *what) {
    size_t len = 7;
    assert_null(read_file_bounded(path, 1 << 20, &len));
    assert_int_equal(len, 7); /* untouched */
    assert_non_null(strstr(gf_last_error(), path));
    if (!strstr(gf_last_error(), what)) fail_msg("'%s' lacks '%s'", gf_last_error(), what);
    mapped_file mf;
    assert_int_equal(mapped_file_open(&mf, path), -1);
    if (!strstr(gf_last_error(), what)) fail_msg("'%s' lacks '%s'", gf_last_error(), what);
}

static void special_files_refused(void **state) {
    (void)state;
    char fifo[128];
    snprintf(fifo, sizeof fifo, "%s/text.txt", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    expect_refused(fifo, "is a FIFO, not a regular file");
    expect_refused("/dev/zero", "is a character device, not a regular file");
    expect_refused(dir, "is a folder, not a regular file");
    char missing[128];
    snprintf(missing, sizeof missing, "%s/missing.txt", dir);
    expect_refused(missing, "No such file");
}

static void size_bound(void **state) {
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/ten.txt", dir);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs("0123456789", f);
    fclose(f);
    size_t len = 0;
    char *t = read_file_bounded(path, 10, &len);
    assert_non_null(t);
    assert_int_equal(len, 10);
    assert_string_equal(t, "0123456789");
    free(t);
    assert_null(read_file_bounded(path, 9, &len));
    assert_non_null(strstr(gf_last_error(), "is 10 bytes, more than the 9"));
    t = read_text_file(path, &len); /* the default bound */
    assert_non_null(t);
    free(t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(special_files_refused),
        cmocka_unit_test(size_bound),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
