/* Unit tests: the communicator at world size 1 (backend/comm.h). Several
 * ranks are checked by tests/integration/mpi_*.sh under mpirun.
 *   - launch detection reads Open MPI's, PMI's and PMIx's variables, and a
 *     process not launched (or launched with -np 1) has no communicator;
 *   - every operation on no communicator leaves the values as they are;
 *   - a forced one-rank communicator on the CPU backend does the same
 *     (no MPI involved: the check that one rank through the transport equals none);
 *   - comm_share splits n items into contiguous shares covering [0, n) once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/comm.h"
#include "backend/comm_impl.h" /* comm_share on hand-made ranks */
#include "core/error.h"

static const char *const launch_vars[] = {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
                                          "PMI_SIZE", "PMI_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID", "PMIX_RANK"};

static void clear_launch(void) {
    for (size_t i = 0; i < sizeof launch_vars / sizeof *launch_vars; i++) unsetenv(launch_vars[i]);
}

static void world_env(void **state) {
    (void)state;
    clear_launch();
    gf_world w;
    comm_world_env(&w);
    assert_false(w.launched);
    assert_int_equal(w.size, 1);
    assert_int_equal(w.rank, 0);

    setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
    setenv("OMPI_COMM_WORLD_RANK", "3", 1);
    setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1);
    comm_world_env(&w);
    assert_true(w.launched);
    assert_int_equal(w.size, 4);
    assert_int_equal(w.rank, 3);
    assert_int_equal(w.local_rank, 1);

    clear_launch();
    setenv("PMI_SIZE", "2", 1);
    setenv("PMI_RANK", "1", 1);
    setenv("SLURM_LOCALID", "0", 1);
    comm_world_env(&w);
    assert_true(w.launched);
    assert_int_equal(w.size, 2);
    assert_int_equal(w.rank, 1);
    assert_int_equal(w.local_rank, 0);

    clear_launch();
    setenv("PMIX_RANK", "5", 1); /* size known only once MPI starts */
    comm_world_env(&w);
    assert_true(w.launched);
    assert_int_equal(w.size, 0);
    assert_int_equal(w.rank, 5);

    clear_launch();
    setenv("OMPI_COMM_WORLD_SIZE", "banana", 1); /* not a number: not launched */
    comm_world_env(&w);
    assert_false(w.launched);
    clear_launch();
}

static void not_launched_is_no_comm(void **state) {
    (void)state;
    clear_launch();
    setenv("OMPI_COMM_WORLD_SIZE", "1", 1); /* mpirun -np 1: still no MPI */
    gf_backend *be = be_default();
    gf_comm *c = (gf_comm *)1;
    assert_int_equal(comm_open(&c, be, NULL), 0);
    assert_null(c);
    assert_null(be_comm(be));
    assert_int_equal(comm_size(NULL), 1);
    assert_int_equal(comm_rank(NULL), 0);
    assert_string_equal(comm_name(NULL), "none");
    clear_launch();
}

/* The collectives of c on be leave every value as it was (one rank). */
static void one_rank_keeps_values(gf_comm *c, gf_backend *be) {
    const size_t n = 1000;
    float want[1000], got[1000];
    double dw[7] = {1.5, -2.25, 3e300, -0.0, 1e-310, 42, 7}, dg[7];
    for (size_t i = 0; i < n; i++) want[i] = (float)i * 0.37f - 100.0f;
    gf_buf b, d;
    assert_int_equal(be_alloc(be, &b, n, GF_F32), 0);
    assert_int_equal(be_alloc(be, &d, 7, GF_F64), 0);
    const gf_reduce ops[3] = {GF_REDUCE_SUM, GF_REDUCE_MEAN, GF_REDUCE_MAX};
    for (int k = 0; k < 3; k++) {
        be_upload(be, b, want, GF_F32, n);
        be_upload(be, d, dw, GF_F64, 7);
        assert_int_equal(comm_allreduce(c, b, n, ops[k]), 0);
        assert_int_equal(comm_allreduce(c, d, 7, ops[k]), 0);
        be_download(be, got, GF_F32, b, n);
        be_download(be, dg, GF_F64, d, 7);
        assert_memory_equal(got, want, sizeof want); /* bit for bit: one rank sums nothing */
        assert_memory_equal(dg, dw, sizeof dw);
        memcpy(dg, dw, sizeof dw);
        assert_int_equal(comm_allreduce_host(c, dg, 7, ops[k]), 0);
        assert_memory_equal(dg, dw, sizeof dw);
    }
    assert_int_equal(comm_broadcast(c, b, n, 0), 0);
    be_download(be, got, GF_F32, b, n);
    assert_memory_equal(got, want, sizeof want);
    char bytes[5] = "abcd";
    assert_int_equal(comm_broadcast_host(c, bytes, 5, 0), 0);
    assert_string_equal(bytes, "abcd");
    assert_int_equal(comm_barrier(c), 0);
    be_free(be, &b);
    be_free(be, &d);
}

static void no_comm_ops_are_noops(void **state) {
    (void)state;
    one_rank_keeps_values(NULL, be_default());
    comm_abort(NULL, 1); /* returns: nothing to end */
}

static void forced_cpu_comm_equals_none(void **state) {
    (void)state;
    clear_launch();
    gf_backend *be = be_default();
    gf_comm *c = NULL;
    const gf_comm_opts o = {.force = true};
    assert_int_equal(comm_open(&c, be, &o), 0);
    assert_non_null(c);
    assert_int_equal(comm_size(c), 1);
    assert_int_equal(comm_rank(c), 0);
    assert_string_equal(comm_name(c), "mpi: 1 rank");
    be_set_comm(be, c);
    assert_ptr_equal(be_comm(be), c);
    one_rank_keeps_values(c, be);
    assert_int_equal(comm_broadcast(c, gf_none(), 1, 1), -1); /* rank 1 of 1 does not exist */
    assert_non_null(strstr(gf_last_error(), "rank 1 of 1"));
    be_set_comm(be, NULL);
    comm_close(c);
}

/* comm_share for every rank of a communicator of `size` (set by hand: it
 * reads only rank and size): shares are contiguous, in rank order, differ by
 * at most one and cover [0, n) exactly once. */
static void shares_cover_once(void **state) {
    (void)state;
    long lo, hi;
    comm_share(NULL, 7, &lo, &hi);
    assert_int_equal(lo, 0);
    assert_int_equal(hi, 7);
    const long ns[] = {0, 1, 5, 7, 8, 100, 101};
    for (int size = 1; size <= 9; size++)
        for (size_t k = 0; k < sizeof ns / sizeof *ns; k++) {
            long next = 0, smallest = ns[k], largest = 0;
            for (int r = 0; r < size; r++) {
                gf_comm c;
                memset(&c, 0, sizeof c);
                c.rank = r, c.size = size;
                comm_share(&c, ns[k], &lo, &hi);
                assert_int_equal(lo, next);
                next = hi;
                if (hi - lo < smallest) smallest = hi - lo;
                if (hi - lo > largest) largest = hi - lo;
            }
            assert_int_equal(next, ns[k]);
            assert_true(largest - smallest <= 1);
        }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(world_env),
        cmocka_unit_test(not_launched_is_no_comm),
        cmocka_unit_test(no_comm_ops_are_noops),
        cmocka_unit_test(forced_cpu_comm_equals_none),
        cmocka_unit_test(shares_cover_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
