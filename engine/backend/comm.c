/* The communicator: launch detection, opening the transport that fits the
 * backend, and the NULL (world size 1) no-ops. */
#include "backend/comm_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

/* A non-negative integer from the environment, or -1. */
static int env_int(const char *name) {
    const char *s = getenv(name);
    if (!s || !*s) return -1;
    char *end;
    long v = strtol(s, &end, 10);
    return *end || v < 0 || v > 1 << 24 ? -1 : (int)v;
}

void comm_world_env(gf_world *w) {
    w->size = 1, w->rank = 0, w->local_rank = 0, w->launched = false;
    /* Open MPI's mpirun (and its prterun) */
    int size = env_int("OMPI_COMM_WORLD_SIZE"), rank = env_int("OMPI_COMM_WORLD_RANK");
    int local = env_int("OMPI_COMM_WORLD_LOCAL_RANK");
    if (size < 1) { /* PMI-2 launchers (srun --mpi=pmi2, hydra) */
        size = env_int("PMI_SIZE"), rank = env_int("PMI_RANK");
        if (local < 0) local = env_int("MPI_LOCALRANKID");
    }
    if (local < 0) local = env_int("SLURM_LOCALID");
    if (size >= 1) {
        w->launched = true;
        w->size = size;
        w->rank = rank >= 0 ? rank : -1;
    } else if (env_int("PMIX_RANK") >= 0) { /* PMIx without a size in the environment: MPI will say */
        w->launched = true;
        w->size = 0;
        w->rank = env_int("PMIX_RANK");
    }
    w->local_rank = local >= 0 ? local : 0;
}

static double timeout_from_env(void) {
    const char *s = getenv("GRAFT_COMM_TIMEOUT");
    double t = s && *s ? atof(s) : 0;
    return t > 0 ? t : 1800.0;
}

int comm_open(gf_comm **out, gf_backend *be, const gf_comm_opts *o) {
    *out = NULL;
    const bool force = o && o->force;
    gf_world w;
    comm_world_env(&w);
    int rank = 0, size = 1;
    if (w.launched && w.size != 1) {
        if (comm_mpi_start(&rank, &size) != 0) return -1;
        if (size == 1) comm_mpi_finish();
    }
    if (size == 1 && !force) return 0;
    gf_comm *c = calloc(1, sizeof *c);
    if (!c) return gf_fail("out of memory opening the communicator");
    c->rank = rank, c->size = size, c->local_rank = w.local_rank;
    c->mpi = size > 1;
    c->be = be;
    c->timeout_s = timeout_from_env();
    const char *transport = "mpi";
    if (be_is_host(be)) {
        c->dev = &comm_mpi_host_ops;
    } else {
#ifdef GRAFT_WITH_NCCL
        /* NVLink multicast stays off on shared machines unless the user chose */
        setenv("NCCL_NVLS_ENABLE", "0", 0);
        unsigned char id[GF_NCCL_ID_BYTES];
        memset(id, 0, sizeof id);
        int rc = rank == 0 ? cuda_comm_unique_id(id) : 0;
        if (c->mpi) { /* every rank learns whether rank 0 made the id, then the id */
            double ok = rc == 0 ? 1 : 0;
            if (comm_mpi_broadcast_host(&ok, sizeof ok, 0) != 0) rc = -1;
            else if (ok != 1) rc = rank == 0 ? -1 : gf_fail("rank 0 could not start NCCL");
            if (rc == 0 && comm_mpi_broadcast_host(id, sizeof id, 0) != 0) rc = -1;
        }
        if (rc == 0) rc = cuda_comm_open(c, id);
        if (rc != 0) {
            if (c->mpi) comm_mpi_finish();
            free(c);
            return -1;
        }
        transport = "nccl";
#else
        if (c->mpi) comm_mpi_finish();
        free(c);
        return gf_fail("%s: graft was built without NCCL, so a CUDA backend cannot join a job of %d ranks",
                       be_name(be), size);
#endif
    }
    snprintf(c->name, sizeof c->name, "%s: %d rank%s", transport, size, size == 1 ? "" : "s");
    *out = c;
    return 0;
}

void comm_close(gf_comm *c) {
    if (!c) return;
    if (c->dev && c->dev->close) c->dev->close(c);
    if (c->mpi) comm_mpi_finish();
    free(c);
}

int comm_rank(const gf_comm *c) { return c ? c->rank : 0; }
int comm_size(const gf_comm *c) { return c ? c->size : 1; }
const char *comm_name(const gf_comm *c) { return c ? c->name : "none"; }

int comm_allreduce(gf_comm *c, gf_buf buf, size_t n, gf_reduce op) {
    if (!c || !n) return 0;
    if (buf.dtype == GF_BF16 && op == GF_REDUCE_MAX && be_is_host(c->be))
        return gf_fail("allreduce: max of bf16 buffers is not supported");
    return c->dev->allreduce(c, buf, n, op);
}

int comm_broadcast(gf_comm *c, gf_buf buf, size_t n, int root) {
    if (!c || !n) return 0;
    if (root < 0 || root >= c->size) return gf_fail("broadcast from rank %d of %d", root, c->size);
    return c->dev->broadcast(c, buf, n, root);
}

int comm_allreduce_host(gf_comm *c, double *x, size_t n, gf_reduce op) {
    if (!c || !c->mpi || !n) return 0;
    return comm_mpi_allreduce_host(x, n, op);
}

int comm_broadcast_host(gf_comm *c, void *p, size_t bytes, int root) {
    if (!c || !c->mpi || !bytes) return 0;
    if (root < 0 || root >= c->size) return gf_fail("broadcast from rank %d of %d", root, c->size);
    return comm_mpi_broadcast_host(p, bytes, root);
}

int comm_barrier(gf_comm *c) { return c && c->mpi ? comm_mpi_barrier() : 0; }

void comm_abort(gf_comm *c, int status) {
    if (!c) return;
    if (c->dev && c->dev->abort) c->dev->abort(c);
    if (c->mpi) comm_mpi_abort(status);
}

void comm_share(const gf_comm *c, long n, long *lo, long *hi) {
    const long size = comm_size(c), r = comm_rank(c), q = n / size, extra = n % size;
    *lo = r * q + (r < extra ? r : extra);
    *hi = *lo + q + (r < extra ? 1 : 0);
}
