/* The choice of OpenBLAS kernel set (engine/backend/cpu/blas_kernels.h): a
 * fallback without AVX is replaced on a CPU with AVX2 and FMA, and nothing
 * else is (a set OpenBLAS chose with AVX, a variable the user set, even to
 * "", a CPU without AVX2); the names without AVX are OpenBLAS's SSE sets,
 * case as OpenBLAS prints them or not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdbool.h>
#include <string.h>

#include "backend/cpu/blas_kernels.h"

static void test_fallback_replaced(void **state) {
    (void)state;
    assert_string_equal(blas_kernels_pick("Prescott", NULL, "Cooperlake"), "Cooperlake");
    assert_string_equal(blas_kernels_pick("Nehalem", NULL, "Haswell"), "Haswell");
    assert_string_equal(blas_kernels_pick("core2", NULL, "SkylakeX"), "SkylakeX");
}

static void test_other_choices_stand(void **state) {
    (void)state;
    assert_null(blas_kernels_pick("Haswell", NULL, "Cooperlake"));      /* OpenBLAS's choice has AVX2 */
    assert_null(blas_kernels_pick("Sandybridge", NULL, "Cooperlake"));  /* AVX: a choice OpenBLAS made knowingly */
    assert_null(blas_kernels_pick("Cooperlake", NULL, "Cooperlake"));
    assert_null(blas_kernels_pick("Prescott", "Prescott", "Cooperlake")); /* the user's */
    assert_null(blas_kernels_pick("Prescott", "", "Cooperlake"));       /* set, though empty */
    assert_null(blas_kernels_pick("Prescott", NULL, NULL));             /* a CPU without AVX2 + FMA */
    assert_null(blas_kernels_pick(NULL, NULL, "Haswell"));
}

static void test_sse_names(void **state) {
    (void)state;
    const char *sse[] = {"Prescott", "PRESCOTT", "Core2", "Penryn", "Dunnington", "Nehalem", "Atom", "Opteron", "Barcelona"};
    for (size_t i = 0; i < sizeof sse / sizeof *sse; i++) assert_true(blas_kernels_lack_avx(sse[i]));
    const char *avx[] = {"Sandybridge", "Haswell", "Zen", "SkylakeX", "Cooperlake", "SapphireRapids", "Excavator", ""};
    for (size_t i = 0; i < sizeof avx / sizeof *avx; i++) assert_false(blas_kernels_lack_avx(avx[i]));
}

/* this machine: the name is one OpenBLAS printed, and the CPU's set is one of the three or none */
static void test_this_machine(void **state) {
    (void)state;
    assert_true(strlen(blas_kernels_name()) > 0);
    const char *c = blas_kernels_for_cpu();
    assert_true(!c || !strcmp(c, "Cooperlake") || !strcmp(c, "SkylakeX") || !strcmp(c, "Haswell"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fallback_replaced),
        cmocka_unit_test(test_other_choices_stand),
        cmocka_unit_test(test_sse_names),
        cmocka_unit_test(test_this_machine),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
