/* NCCL for the communicator (backend/comm.h) on a CUDA backend: one
 * communicator per process (one process per GPU), created non-blocking so
 * that neither its start nor a collective can wait forever: both are polled
 * with ncclCommGetAsyncError against the communicator's timeout, and a
 * failure or timeout aborts the communicator (ncclCommAbort) and returns one
 * line. Collectives run on the backend's stream, after the ops queued there
 * (the gradients they reduce), and return when done. Built only when NCCL's
 * header was found (GRAFT_WITH_NCCL). */
#ifdef GRAFT_WITH_NCCL

#include <nccl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "backend/comm_impl.h"
#include "backend/cuda/cuda_common.cuh"
extern "C" {
#include "core/error.h" /* a C header without C++ guards */
}

typedef struct {
    ncclComm_t comm;
    cudaEvent_t done; /* recorded after each collective */
    bool dead;        /* aborted: every later call fails at once */
} nccl_state;

static nccl_state *state_of(gf_comm *c) { return (nccl_state *)c->dev_state; }

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void pause_briefly(void) {
    const struct timespec d = {0, 50 * 1000}; /* 50 us: a collective's latency is several */
    nanosleep(&d, NULL);
}

static void abort_comm(gf_comm *c) {
    nccl_state *s = state_of(c);
    if (!s || s->dead) return;
    s->dead = true;
    ncclCommAbort(s->comm);
}

static int fail(gf_comm *c, const char *what, const char *why) {
    abort_comm(c);
    return gf_fail("nccl %s on rank %d of %d: %s", what, c->rank, c->size, why);
}

/* Until the communicator has no call in progress (its start, or an enqueue). */
static int wait_ready(gf_comm *c, const char *what) {
    nccl_state *s = state_of(c);
    const double t0 = now_s();
    for (;;) {
        ncclResult_t st = ncclInProgress;
        ncclResult_t r = ncclCommGetAsyncError(s->comm, &st);
        if (r != ncclSuccess) st = r;
        if (st == ncclSuccess) return 0;
        if (st != ncclInProgress) {
            char why[256];
            const char *detail = ncclGetLastError(s->comm);
            snprintf(why, sizeof why, "%s%s%s", ncclGetErrorString(st), detail && *detail ? ": " : "",
                     detail ? detail : "");
            return fail(c, what, why);
        }
        if (now_s() - t0 > c->timeout_s) {
            char why[128];
            snprintf(why, sizeof why, "timed out after %.0f s waiting for the other ranks (GRAFT_COMM_TIMEOUT)",
                     c->timeout_s);
            return fail(c, what, why);
        }
        pause_briefly();
    }
}

/* Until the collective just queued on the stream is done. */
static int wait_done(gf_comm *c, const char *what) {
    nccl_state *s = state_of(c);
    cudaStream_t stream = cuda_stream(c->be);
    cudaError_t e = cudaEventRecord(s->done, stream);
    if (e != cudaSuccess) return fail(c, what, cudaGetErrorString(e));
    const double t0 = now_s();
    for (;;) {
        e = cudaEventQuery(s->done);
        if (e == cudaSuccess) return 0;
        if (e != cudaErrorNotReady) return fail(c, what, cudaGetErrorString(e));
        ncclResult_t st = ncclSuccess;
        if (ncclCommGetAsyncError(s->comm, &st) == ncclSuccess && st != ncclSuccess && st != ncclInProgress)
            return fail(c, what, ncclGetErrorString(st));
        if (now_s() - t0 > c->timeout_s) {
            char why[128];
            snprintf(why, sizeof why, "timed out after %.0f s waiting for the other ranks (GRAFT_COMM_TIMEOUT)",
                     c->timeout_s);
            return fail(c, what, why);
        }
        pause_briefly();
    }
}

static bool nccl_type(gf_dtype t, ncclDataType_t *out) {
    switch (t) {
    case GF_F32: *out = ncclFloat32; return true;
    case GF_F64: *out = ncclFloat64; return true;
    case GF_BF16: *out = ncclBfloat16; return true;
    case GF_I32: *out = ncclInt32; return true;
    }
    return false;
}

static int nccl_allreduce(gf_comm *c, gf_buf buf, size_t n, gf_reduce op) {
    nccl_state *s = state_of(c);
    if (s->dead) return gf_fail("nccl allreduce: the communicator was aborted by an earlier failure");
    ncclDataType_t t;
    if (!nccl_type(buf.dtype, &t)) return gf_fail("nccl allreduce: unknown element type");
    if (op == GF_REDUCE_MEAN && buf.dtype == GF_I32) return gf_fail("allreduce: the mean of i32 values is not an integer");
    const ncclRedOp_t o = op == GF_REDUCE_MAX ? ncclMax : op == GF_REDUCE_MEAN ? ncclAvg : ncclSum;
    /* the reduced values must be those the queued ops wrote: same stream */
    ncclResult_t r = ncclAllReduce(buf.ptr, buf.ptr, n, t, o, s->comm, cuda_stream(c->be));
    if (r != ncclSuccess && r != ncclInProgress) return fail(c, "allreduce", ncclGetErrorString(r));
    if (wait_ready(c, "allreduce") != 0) return -1;
    return wait_done(c, "allreduce");
}

static int nccl_broadcast(gf_comm *c, gf_buf buf, size_t n, int root) {
    nccl_state *s = state_of(c);
    if (s->dead) return gf_fail("nccl broadcast: the communicator was aborted by an earlier failure");
    ncclDataType_t t;
    if (!nccl_type(buf.dtype, &t)) return gf_fail("nccl broadcast: unknown element type");
    ncclResult_t r = ncclBroadcast(buf.ptr, buf.ptr, n, t, root, s->comm, cuda_stream(c->be));
    if (r != ncclSuccess && r != ncclInProgress) return fail(c, "broadcast", ncclGetErrorString(r));
    if (wait_ready(c, "broadcast") != 0) return -1;
    return wait_done(c, "broadcast");
}

static void nccl_close(gf_comm *c) {
    nccl_state *s = state_of(c);
    if (!s) return;
    if (!s->dead) {
        /* flush, then free; a peer that is gone makes Finalize time out: abort then */
        ncclResult_t r = ncclCommFinalize(s->comm);
        if ((r == ncclSuccess || r == ncclInProgress) && wait_ready(c, "finalize") == 0) ncclCommDestroy(s->comm);
        else abort_comm(c);
    }
    cudaEventDestroy(s->done);
    free(s);
    c->dev_state = NULL;
}

static const gf_comm_dev_ops nccl_ops = {nccl_allreduce, nccl_broadcast, nccl_close, abort_comm};

extern "C" int cuda_comm_unique_id(unsigned char id[GF_NCCL_ID_BYTES]) {
    static_assert(sizeof(ncclUniqueId) == GF_NCCL_ID_BYTES, "NCCL's unique id is 128 bytes");
    ncclUniqueId u;
    ncclResult_t r = ncclGetUniqueId(&u);
    if (r != ncclSuccess) return gf_fail("nccl: no unique id (%s)", ncclGetErrorString(r));
    memcpy(id, &u, sizeof u);
    return 0;
}

extern "C" int cuda_comm_open(gf_comm *c, const unsigned char id[GF_NCCL_ID_BYTES]) {
    const int dev = cuda_of(c->be)->device;
    cudaError_t e = cudaSetDevice(dev);
    if (e != cudaSuccess) return gf_fail("nccl: cuda:%d: %s", dev, cudaGetErrorString(e));
    nccl_state *s = (nccl_state *)calloc(1, sizeof *s);
    if (!s) return gf_fail("nccl: out of host memory");
    if ((e = cudaEventCreateWithFlags(&s->done, cudaEventDisableTiming)) != cudaSuccess) {
        free(s);
        return gf_fail("nccl: cuda:%d: %s", dev, cudaGetErrorString(e));
    }
    ncclUniqueId u;
    memcpy(&u, id, sizeof u);
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    cfg.blocking = 0; /* polled against the timeout instead of waiting inside NCCL */
    ncclResult_t r = ncclCommInitRankConfig(&s->comm, c->size, u, c->rank, &cfg);
    c->dev_state = s;
    c->dev = &nccl_ops;
    if (r != ncclSuccess && r != ncclInProgress) {
        s->dead = true; /* nothing to abort */
        nccl_close(c);
        c->dev = NULL;
        return gf_fail("nccl: the communicator did not start on cuda:%d (rank %d of %d): %s", dev, c->rank, c->size,
                       ncclGetErrorString(r));
    }
    if (wait_ready(c, "start") != 0) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", gf_last_error());
        nccl_close(c);
        c->dev = NULL;
        return gf_fail("%s", msg);
    }
    return 0;
}

#endif /* GRAFT_WITH_NCCL */
