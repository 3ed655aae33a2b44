/* The communicator between the ranks of a data-parallel job: one
 * process per rank, launched by mpirun (one per GPU on a CUDA backend), each
 * with its own backend. graft does not carry its own protocol: device
 * buffers go through NCCL on a CUDA backend and through MPI collectives on
 * the CPU backend (whose buffers are host memory); host values (statistic
 * sums, flags, Stage 2 reports) and NCCL's unique id go through MPI.
 *
 * World size 1 costs nothing: a process not launched by mpirun (or launched
 * with -np 1) has no communicator (NULL), never starts MPI, and every
 * function here is a no-op on NULL (allreduce leaves the values, MEAN
 * included; broadcast leaves the root's). Launch detection reads the
 * launcher's environment (OMPI_COMM_WORLD_SIZE / _RANK / _LOCAL_RANK, PMIX_RANK,
 * PMI_SIZE / PMI_RANK) before anything starts, so a CUDA rank can pick its
 * GPU (the local rank) before the backend opens.
 *
 * Every collective is called by every rank in the same order (MPI's rule);
 * none may be called from a be_run_tasks task. A failed collective returns -1
 * with one line; a dead peer ends the whole job through mpirun, a peer that
 * stops answering ends an NCCL collective after GRAFT_COMM_TIMEOUT seconds
 * (default 1800) with "... timed out ...". NVLink multicast (NVLS) is off
 * (NCCL_NVLS_ENABLE=0) unless the user set NCCL_NVLS_ENABLE. */
#ifndef GRAFT_BACKEND_COMM_H
#define GRAFT_BACKEND_COMM_H

#include <stdbool.h>
#include <stddef.h>

#include "backend/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the launcher's environment says (nothing is started). */
typedef struct {
    int size;        /* ranks in the job; 1 when not launched by mpirun */
    int rank;        /* 0 .. size-1 (-1: launched, rank known only after MPI starts) */
    int local_rank;  /* rank among the ranks of this machine (the GPU a CUDA rank takes) */
    bool launched;   /* an MPI launcher started this process */
} gf_world;

void comm_world_env(gf_world *w);

typedef enum { GF_REDUCE_SUM = 0, GF_REDUCE_MEAN = 1, GF_REDUCE_MAX = 2 } gf_reduce;

typedef struct {
    /* Open the device transport even at world size 1 (a one-rank NCCL
     * communicator needs no MPI): the check that NCCL at world size 1
     * equals no communicator. */
    bool force;
} gf_comm_opts;

/* Joins the job for backend be: *out = NULL at world size 1 (not an error).
 * Otherwise starts MPI (once per process) and, on a CUDA backend, an NCCL
 * communicator on be's device and stream. -1 with one line: graft built
 * without MPI (or without NCCL for a CUDA backend), MPI or NCCL failed. */
int comm_open(gf_comm **out, gf_backend *be, const gf_comm_opts *o);
/* Frees the communicator and finalizes MPI when comm_open started it. */
void comm_close(gf_comm *c);

int comm_rank(const gf_comm *c);          /* 0 for NULL */
int comm_size(const gf_comm *c);          /* 1 for NULL */
const char *comm_name(const gf_comm *c);  /* "mpi: 2 ranks", "nccl: 4 ranks", "none" */

/* buf[n] (F32, F64, BF16 or I32, on the comm's backend) in place, every rank
 * the same result. MEAN divides the sum by the size. */
int comm_allreduce(gf_comm *c, gf_buf buf, size_t n, gf_reduce op);
/* buf[n] of rank `root` to every rank. */
int comm_broadcast(gf_comm *c, gf_buf buf, size_t n, int root);
/* Host values: x[n] doubles in place (statistic sums, losses, flags). */
int comm_allreduce_host(gf_comm *c, double *x, size_t n, gf_reduce op);
/* Host bytes of rank `root` to every rank. */
int comm_broadcast_host(gf_comm *c, void *p, size_t bytes, int root);
int comm_barrier(gf_comm *c);

/* Ends every rank of the job with `status` (after this rank printed why);
 * returns only for NULL. */
void comm_abort(gf_comm *c, int status);

/* The contiguous share of rank r among `n` items: [*lo, *hi). Ranks below
 * n % size take one more. */
void comm_share(const gf_comm *c, long n, long *lo, long *hi);

#ifdef __cplusplus
}
#endif

#endif
