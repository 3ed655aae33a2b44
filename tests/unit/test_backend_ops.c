/* The backend tables: every op of backend_impl.h's list is set in the CPU
 * table and, in a build with the CUDA backend, in the CUDA one (checked
 * without a GPU: the table is data), and a backend opened on the CPU carries
 * the CPU table. The tables are expanded from the list, so a missing
 * implementation fails the link; this test catches an entry left NULL. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "backend/backend_impl.h"

/* How many entries of t are NULL; prints each one's name. */
static int unset_ops(const gf_backend_ops *t, const char *backend) {
    int unset = 0;
#define COUNT_UNSET(ret, name, params)                                                                               \
    if (!t->name) {                                                                                                    \
        fprintf(stderr, "%s table: op %s is not set\n", backend, #name);                                             \
        unset++;                                                                                                       \
    }
    GF_BACKEND_OPS(COUNT_UNSET)
#undef COUNT_UNSET
    return unset;
}

static void test_cpu_table_complete(void **state) {
    (void)state;
    assert_int_equal(unset_ops(&cpu_ops, "cpu"), 0);
}

static void test_cuda_table_complete(void **state) {
    (void)state;
#ifdef GRAFT_WITH_CUDA
    assert_int_equal(unset_ops(&cuda_ops, "cuda"), 0);
#else
    skip();
#endif
}

/* The check itself can fail: a table with one entry cleared is caught. */
static void test_unset_entry_is_caught(void **state) {
    (void)state;
    gf_backend_ops t = cpu_ops;
    t.gdn_prep_backward = NULL;
    assert_int_equal(unset_ops(&t, "planted"), 1);
}

/* The table type holds the list's entries and nothing else. */
static void test_table_is_the_list(void **state) {
    (void)state;
    size_t n = 0;
#define COUNT_OP(ret, name, params) n++;
    GF_BACKEND_OPS(COUNT_OP)
#undef COUNT_OP
    assert_int_equal(sizeof(gf_backend_ops), n * sizeof(void (*)(void)));
}

static void test_cpu_backend_uses_cpu_table(void **state) {
    (void)state;
    gf_backend *be = NULL;
    gf_backend_opts o = {"cpu", 1, false};
    assert_int_equal(be_open(&be, &o), 0);
    assert_ptr_equal(be->ops, &cpu_ops);
    be_close(be);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_table_complete),
        cmocka_unit_test(test_cuda_table_complete),
        cmocka_unit_test(test_unset_entry_is_caught),
        cmocka_unit_test(test_table_is_the_list),
        cmocka_unit_test(test_cpu_backend_uses_cpu_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
