/* --device names reaching the backend (engine/backend/backend.c be_open):
 * in this build (with or without CUDA, and whether or not a GPU is here)
 * every failure is one line naming the cause; and the same dispatch compiled
 * as a build without the CUDA backend (test_device_nocuda.c) says so. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "backend/backend.h"
#include "core/error.h"

static void must_fail(const char *dev, const char *want) {
    gf_backend *be = (gf_backend *)1;
    const gf_backend_opts o = {dev, 0, false};
    assert_int_equal(be_open(&be, &o), -1);
    assert_null(be);
    const char *e = gf_last_error();
    if (!strstr(e, want)) fail_msg("--device %s: '%s' lacks '%s'", dev, e, want);
    assert_null(strchr(e, '\n'));
}

static void bad_names(void **s) {
    (void)s;
    const char *bad[] = {"gpu", "cuda:", "cuda:x", "cuda:-1", "cuda:01x", "cuda:1024", "cuda:99999", "CUDA", "cpu:0", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) must_fail(bad[i], "unknown device");
}

static void cuda_here(void **s) {
    (void)s;
    int n = -1;
    const int rc = be_cuda_device_count(&n);
#ifdef GRAFT_WITH_CUDA
    assert_int_equal(rc, 0);
    assert_true(n >= 0);
    if (n == 0) { /* no driver or no GPU: the open says which */
        gf_backend *be;
        const gf_backend_opts o = {"cuda", 0, false};
        assert_int_equal(be_open(&be, &o), -1);
        const char *e = gf_last_error();
        assert_true(strstr(e, "no NVIDIA driver") || strstr(e, "no GPU") || strstr(e, "driver supports CUDA") ||
                    strstr(e, "no usable GPU"));
        must_fail("cuda:3", "cuda");
    } else { /* one past the last GPU */
        char dev[16];
        snprintf(dev, sizeof dev, "cuda:%d", n);
        must_fail(dev, "no such GPU");
    }
#else
    assert_int_equal(rc, -1);
    assert_non_null(strstr(gf_last_error(), "built without the CUDA backend"));
    must_fail("cuda", "built without the CUDA backend");
    must_fail("cuda:0", "built without the CUDA backend");
#endif
}

static void cpu_opens(void **s) {
    (void)s;
    gf_backend *be;
    const gf_backend_opts o = {"cpu", 1, false};
    assert_int_equal(be_open(&be, &o), 0);
    assert_true(be_is_host(be));
    assert_non_null(strstr(be_name(be), "cpu"));
    be_close(be);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(bad_names), cmocka_unit_test(cuda_here), cmocka_unit_test(cpu_opens)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
