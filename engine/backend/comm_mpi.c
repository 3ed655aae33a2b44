/* MPI for the communicator: starting and finishing MPI (only when a launcher
 * started more than one rank), host collectives, and the device collectives
 * of host-memory backends (the CPU backend: MPI_Allreduce on its buffers).
 * Built without MPI (GRAFT_WITH_MPI undefined), starting fails with one line
 * and nothing else is reachable. */
#include "backend/comm_impl.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/error.h"

#ifdef GRAFT_WITH_MPI
#include <mpi.h>

static bool started, we_init;

/* One line from an MPI error code. */
static int mpi_fail(const char *what, int code) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(code, msg, &len) != MPI_SUCCESS) snprintf(msg, sizeof msg, "error %d", code);
    return gf_fail("MPI %s: %s", what, msg);
}

int comm_mpi_start(int *rank, int *size) {
    if (!started) {
        int inited = 0;
        MPI_Initialized(&inited);
        if (!inited) {
            int provided = 0;
            /* collectives come from one thread at a time (the command's) */
            int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided);
            if (rc != MPI_SUCCESS) return gf_fail("MPI did not start (error %d)", rc);
            we_init = true;
        }
        /* errors come back as codes and become one line, instead of MPI's abort */
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        started = true;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    return 0;
}

void comm_mpi_finish(void) {
    if (!started) return;
    started = false;
    int fin = 0;
    MPI_Finalized(&fin);
    if (we_init && !fin) MPI_Finalize();
}

static MPI_Op mpi_op(gf_reduce op) { return op == GF_REDUCE_MAX ? MPI_MAX : MPI_SUM; }

/* MPI counts are int: big buffers go in chunks. */
#define CHUNK ((size_t)1 << 30)

static int allreduce_typed(void *p, size_t n, MPI_Datatype t, size_t elem, gf_reduce op) {
    for (size_t off = 0; off < n; off += CHUNK) {
        const int k = (int)(n - off < CHUNK ? n - off : CHUNK);
        int rc = MPI_Allreduce(MPI_IN_PLACE, (char *)p + off * elem, k, t, mpi_op(op), MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS) return mpi_fail("allreduce", rc);
    }
    return 0;
}

int comm_mpi_allreduce_host(double *x, size_t n, gf_reduce op) {
    if (allreduce_typed(x, n, MPI_DOUBLE, sizeof *x, op) != 0) return -1;
    if (op == GF_REDUCE_MEAN) {
        int size = 1;
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        for (size_t i = 0; i < n; i++) x[i] /= size;
    }
    return 0;
}

int comm_mpi_broadcast_host(void *p, size_t bytes, int root) {
    for (size_t off = 0; off < bytes; off += CHUNK) {
        const int k = (int)(bytes - off < CHUNK ? bytes - off : CHUNK);
        int rc = MPI_Bcast((char *)p + off, k, MPI_BYTE, root, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS) return mpi_fail("broadcast", rc);
    }
    return 0;
}

int comm_mpi_barrier(void) {
    int rc = MPI_Barrier(MPI_COMM_WORLD);
    return rc == MPI_SUCCESS ? 0 : mpi_fail("barrier", rc);
}

void comm_mpi_abort(int status) {
    fflush(stdout);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, status ? status : 1);
}

/* ---- CPU backend buffers (host memory) */

static int host_allreduce(gf_comm *c, gf_buf buf, size_t n, gf_reduce op) {
    if (c->size == 1) return 0; /* a forced one-rank communicator: the values are the result */
    switch (buf.dtype) {
    case GF_F32: {
        if (allreduce_typed(buf.ptr, n, MPI_FLOAT, sizeof(float), op) != 0) return -1;
        if (op == GF_REDUCE_MEAN)
            for (size_t i = 0; i < n; i++) ((float *)buf.ptr)[i] /= (float)c->size;
        return 0;
    }
    case GF_F64: return comm_mpi_allreduce_host(buf.ptr, n, op);
    case GF_I32:
        if (op == GF_REDUCE_MEAN) return gf_fail("allreduce: the mean of i32 values is not an integer");
        return allreduce_typed(buf.ptr, n, MPI_INT32_T, sizeof(int32_t), op);
    case GF_BF16: break;
    }
    return gf_fail("allreduce: %s buffers are not reduced on the CPU backend", gf_dtype_name(buf.dtype));
}

static int host_broadcast(gf_comm *c, gf_buf buf, size_t n, int root) {
    if (c->size == 1) return 0;
    return comm_mpi_broadcast_host(buf.ptr, n * gf_dtype_size(buf.dtype), root);
}

const gf_comm_dev_ops comm_mpi_host_ops = {host_allreduce, host_broadcast, NULL, NULL};

#else /* built without MPI */

int comm_mpi_start(int *rank, int *size) {
    *rank = 0, *size = 1;
    return gf_fail("this process was launched as one of several ranks, and graft was built without MPI "
                   "(install libopenmpi-dev and rebuild)");
}
void comm_mpi_finish(void) {}
int comm_mpi_allreduce_host(double *x, size_t n, gf_reduce op) { return gf_fail("graft was built without MPI"); }
int comm_mpi_broadcast_host(void *p, size_t bytes, int root) { return gf_fail("graft was built without MPI"); }
int comm_mpi_barrier(void) { return gf_fail("graft was built without MPI"); }
void comm_mpi_abort(int status) {
    fflush(stdout);
    fflush(stderr);
    exit(status ? status : 1);
}

static int host_allreduce(gf_comm *c, gf_buf buf, size_t n, gf_reduce op) {
    return c->size == 1 ? 0 : gf_fail("graft was built without MPI");
}
static int host_broadcast(gf_comm *c, gf_buf buf, size_t n, int root) {
    return c->size == 1 ? 0 : gf_fail("graft was built without MPI");
}
const gf_comm_dev_ops comm_mpi_host_ops = {host_allreduce, host_broadcast, NULL, NULL};

#endif
