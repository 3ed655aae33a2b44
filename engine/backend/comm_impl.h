/* Inside the communicator (engine/backend only): the job's ranks, and the
 * transport that moves device buffers (MPI on host buffers for the CPU
 * backend, NCCL on a CUDA device: engine/backend/cuda/cuda_comm.cu). Host
 * values always go through MPI (comm_mpi.c). */
#ifndef GRAFT_BACKEND_COMM_IMPL_H
#define GRAFT_BACKEND_COMM_IMPL_H

#include "backend/backend_impl.h"
#include "backend/comm.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int (*allreduce)(gf_comm *c, gf_buf buf, size_t n, gf_reduce op);
    int (*broadcast)(gf_comm *c, gf_buf buf, size_t n, int root);
    void (*close)(gf_comm *c); /* frees dev_state */
    void (*abort)(gf_comm *c); /* tears the transport down without waiting for peers */
} gf_comm_dev_ops;

struct gf_comm {
    int rank, size, local_rank;
    bool mpi;                       /* host collectives through MPI (world size > 1) */
    gf_backend *be;
    const gf_comm_dev_ops *dev;
    void *dev_state;
    double timeout_s;               /* NCCL: longest wait for one collective */
    char name[64];
};

/* ---- MPI (comm_mpi.c; stubs that fail when graft is built without MPI) */
/* Starts MPI once per process; rank and size of the world. */
int comm_mpi_start(int *rank, int *size);
void comm_mpi_finish(void);
int comm_mpi_allreduce_host(double *x, size_t n, gf_reduce op);
int comm_mpi_broadcast_host(void *p, size_t bytes, int root);
int comm_mpi_barrier(void);
void comm_mpi_abort(int status);
/* Device collectives for host-memory backends (the CPU backend). */
extern const gf_comm_dev_ops comm_mpi_host_ops;

/* ---- NCCL (engine/backend/cuda/cuda_comm.cu, with GRAFT_WITH_NCCL) */
#ifdef GRAFT_WITH_NCCL
#define GF_NCCL_ID_BYTES 128
/* ncclGetUniqueId: rank 0 makes it, MPI carries it to the others. */
int cuda_comm_unique_id(unsigned char id[GF_NCCL_ID_BYTES]);
/* The NCCL communicator of c->rank / c->size on be's device and stream: sets
 * c->dev and c->dev_state. Waits at most c->timeout_s for the peers. */
int cuda_comm_open(gf_comm *c, const unsigned char id[GF_NCCL_ID_BYTES]);
#endif

#ifdef __cplusplus
}
#endif

#endif
