/* rng_fill_normal against rng_normal called in order: the same bits for every
 * count (odd, even, past the threaded threshold), from a fresh generator and
 * from one holding a spare, at several thread counts, and the generator left
 * where the calls would leave it (its next uniform and normal agree). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <omp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"

static void same_as_calls(size_t n, bool spare_first, int threads) {
    rng64 a, b;
    rng_seed2(&a, 42, n);
    b = a;
    if (spare_first) { /* both hold the second value of a drawn pair */
        (void)rng_normal(&a);
        (void)rng_normal(&b);
    }
    float *want = malloc((n ? n : 1) * sizeof *want), *got = malloc((n ? n : 1) * sizeof *got);
    for (size_t i = 0; i < n; i++) want[i] = (float)(0.02 * rng_normal(&a));
    omp_set_num_threads(threads);
    rng_fill_normal(&b, got, n, 0.02);
    assert_memory_equal(want, got, n * sizeof *got);
    /* the state after: a spare held or not, and the same words next */
    assert_int_equal(a.has_spare, b.has_spare);
    const double na = rng_normal(&a), nb = rng_normal(&b);
    assert_memory_equal(&na, &nb, sizeof na);
    assert_true(rng_next(&a) == rng_next(&b));
    free(want);
    free(got);
}

static void test_fill_matches_calls(void **state) {
    (void)state;
    const size_t counts[] = {0, 1, 2, 3, 1000, 131072, 131073, 300001}; /* 65536 pairs and more: threaded */
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        for (int spare = 0; spare < 2; spare++)
            for (int threads = 1; threads <= 3; threads += 2) same_as_calls(counts[i], spare, threads);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_fill_matches_calls)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
