/* The CPU SwiGLU and its backward (engine/backend/cpu/cpu_dense.c: libmvec's
 * vector expf, in blocks of 4096 elements, a block's tail padded to a whole
 * vector) against a double reference over gates from -88 to 88, on lengths that
 * leave every tail from 0 to 7 and span blocks; an element's bits do not depend
 * on where it sits (the same values one place later) nor on the threads
 * (1 against 2). Tolerance: libmvec's expf is within 4 ulp (glibc's manual),
 * then a division, a multiplication or two, each half an ulp: 1e-6 relative
 * (8 ulp of float) plus 1e-30 absolute where silu(g) underflows toward 0; for
 * dgate relative to |d u s| (1 + |g (1 - s)|), the size of its terms, since
 * 1 + g (1 - s) cancels near g = -1.28 in any float evaluation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "be_util.h"

#define TOL_REL 1e-6
#define TOL_ABS 1e-30

static void fill(float *g, float *u, float *d, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++) {
        unsigned h = (unsigned)(i * 2654435761u) ^ seed;
        g[i] = -88.0f + 176.0f * (float)((h >> 8) & 0xffff) / 65535.0f; /* expf(-g) finite in float */
        u[i] = (float)((h >> 4) & 0xff) / 64.0f - 2.0f;
        d[i] = (float)(h & 0xff) / 128.0f - 1.0f;
    }
    if (n > 2) g[0] = 0.0f, g[1] = 1e-20f, g[2] = -1e-20f;
}

static void close_to(const char *what, size_t i, double got, double want, double scale) {
    if (!isfinite(got) || fabs(got - want) > TOL_REL * scale + TOL_ABS) {
        print_error("%s[%zu]: %.9g, reference %.9g\n", what, i, got, want);
        fail();
    }
}

/* out (and dgate, dup) for the n elements at g, u, d */
static void run(size_t n, const float *g, const float *u, const float *d, float *o, float *dg, float *du) {
    gf_backend *be = be_default();
    gf_buf G = tb_f32(g, n), U = tb_f32(u, n), D = tb_f32(d, n), O = tb_f32(NULL, n), DG = tb_f32(NULL, n),
           DU = tb_f32(NULL, n);
    be_swiglu(be, O, G, U, n);
    be_swiglu_backward(be, DG, DU, D, G, U, n);
    tb_get(o, O, n), tb_get(dg, DG, n), tb_get(du, DU, n);
    tb_free(&G), tb_free(&U), tb_free(&D), tb_free(&O), tb_free(&DG), tb_free(&DU);
}

static void test_against_double(void **state) {
    (void)state;
    const size_t lens[] = {1, 7, 8, 9, 15, 4096, 4099, 70000 + 5}; /* 70005 > the parallel threshold */
    for (size_t k = 0; k < sizeof lens / sizeof *lens; k++) {
        const size_t n = lens[k];
        float *b = malloc(6 * n * sizeof *b), *g = b, *u = b + n, *d = b + 2 * n, *o = b + 3 * n, *dg = b + 4 * n,
              *du = b + 5 * n;
        fill(g, u, d, n, (unsigned)n);
        run(n, g, u, d, o, dg, du);
        for (size_t i = 0; i < n; i++) {
            const double x = g[i], s = 1.0 / (1.0 + exp(-x)), silu = x * s;
            close_to("swiglu", i, o[i], silu * u[i], fabs(silu * u[i]));
            close_to("dup", i, du[i], d[i] * silu, fabs(d[i] * silu));
            close_to("dgate", i, dg[i], d[i] * u[i] * s * (1.0 + x * (1.0 - s)),
                     fabs(d[i] * u[i] * s) * (1.0 + fabs(x * (1.0 - s))));
        }
        free(b);
    }
}

static void test_bits_independent_of_place_and_threads(void **state) {
    (void)state;
    const size_t n = 2 * 4096 + 13; /* two whole blocks and a tail of 13 (one vector and 5) */
    float *a = malloc(12 * (n + 1) * sizeof *a);
    float *g = a, *u = g + n + 1, *d = u + n + 1, *o1 = d + n + 1, *dg1 = o1 + n + 1, *du1 = dg1 + n + 1;
    float *o2 = du1 + n + 1, *dg2 = o2 + n + 1, *du2 = dg2 + n + 1, *o3 = du2 + n + 1, *dg3 = o3 + n + 1,
          *du3 = dg3 + n + 1;
    fill(g + 1, u + 1, d + 1, n, 7u);
    g[0] = u[0] = d[0] = 0.5f;
    be_set_threads(be_default(), 1);
    run(n, g + 1, u + 1, d + 1, o1, dg1, du1);
    run(n + 1, g, u, d, o2, dg2, du2); /* each element one place later: other lanes, another tail */
    be_set_threads(be_default(), 2);
    run(n, g + 1, u + 1, d + 1, o3, dg3, du3);
    be_set_threads(be_default(), 0);
    assert_memory_equal(o1, o2 + 1, n * sizeof *o1);
    assert_memory_equal(dg1, dg2 + 1, n * sizeof *dg1);
    assert_memory_equal(du1, du2 + 1, n * sizeof *du1);
    assert_memory_equal(o1, o3, n * sizeof *o1);
    assert_memory_equal(dg1, dg3, n * sizeof *dg1);
    assert_memory_equal(du1, du3, n * sizeof *du1);
    /* each of the first 512 alone (a tail of one): libmvec's vector expf and the scalar expf differ
     * in the last bit for about half of all inputs, so a tail that took the scalar one shows here */
    for (size_t i = 0; i < 512; i++) {
        float o, dg, du;
        run(1, g + 1 + i, u + 1 + i, d + 1 + i, &o, &dg, &du);
        if (memcmp(&o, o1 + i, sizeof o) || memcmp(&dg, dg1 + i, sizeof dg) || memcmp(&du, du1 + i, sizeof du)) {
            print_error("element %zu alone: %.9g %.9g %.9g, in the array %.9g %.9g %.9g\n", i, o, dg, du, o1[i], dg1[i],
                        du1[i]);
            fail();
        }
    }
    free(a);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_double),
        cmocka_unit_test(test_bits_independent_of_place_and_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
