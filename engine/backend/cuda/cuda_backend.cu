/* The CUDA backend: open/close, the op table, errors, independent tasks.
 * One stream per backend; cuBLAS and cublasLt run on it with one workspace.
 * Memory ops live in cuda_memory.cu, GEMMs in cuda_gemm.cu, the kernels in
 * the other cuda_*.cu files (cuda_table.h declares them all). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <thread>

#include "backend/cuda/cuda_attention_cfg.h"
#include "backend/cuda/cuda_ops.cuh"
extern "C" { /* C headers without C++ guards */
#include "backend/gemm_choices.h"
#include "core/env.h"
#include "core/error.h"
}

#define WORKSPACE_BYTES ((size_t)32 << 20) /* cuBLAS's advice for Hopper */
#define MAX_SUBS GF_DEVICE_TASKS_MAX       /* streams (and host threads) for be_run_tasks, at most */

#define CUDA_OP_INIT(ret, name, params) .name = cuda_##name,
const gf_backend_ops cuda_ops = {GF_BACKEND_OPS(CUDA_OP_INIT)};
#undef CUDA_OP_INIT

/* ------------------------------------------------------------- errors */

void cuda_after(gf_backend *be, const char *op) {
    cuda_state *st = cuda_st(be);
    st->last_op = op;
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess && st->debug_sync) e = cudaStreamSynchronize(st->base.stream);
    if (e != cudaSuccess) be_set_error(be, "cuda:%d: %s (in %s)", st->base.device, cudaGetErrorString(e), op);
}

bool cuda_want(gf_backend *be, const char *op, const char *what, gf_buf b, gf_dtype t) {
    if (gf_is_none(b) || b.dtype == t) return true;
    be_set_error(be, "%s: %s is %s, expected %s", op, what, gf_dtype_name(b.dtype), gf_dtype_name(t));
    return false;
}

bool cuda_want_float(gf_backend *be, const char *op, const char *what, gf_buf b) {
    if (gf_is_none(b) || b.dtype == GF_F32 || b.dtype == GF_BF16) return true;
    be_set_error(be, "%s: %s is %s, expected f32 or bf16", op, what, gf_dtype_name(b.dtype));
    return false;
}

bool cuda_need(gf_backend *be, const char *op, const char *what, gf_buf b) {
    if (!gf_is_none(b)) return true;
    be_set_error(be, "%s: %s is required", op, what);
    return false;
}

/* Reports (and clears) the sticky error the way be_sync / be_check promise. */
static int report(gf_backend *be) {
    if (!be->error[0]) return 0;
    gf_fail("%s", be->error);
    be->error[0] = 0;
    return -1;
}

static void record_async(gf_backend *be, cudaError_t e) {
    cuda_state *st = cuda_st(be);
    if (st->last_op)
        be_set_error(be, "cuda:%d: %s (in %s or an op queued before it; GRAFT_CUDA_SYNC=1 names the op)",
                     st->base.device, cudaGetErrorString(e), st->last_op);
    else
        be_set_error(be, "cuda:%d: %s", st->base.device, cudaGetErrorString(e));
}

int cuda_sync(gf_backend *be) {
    cudaError_t e = cudaStreamSynchronize(cuda_stream(be));
    if (e != cudaSuccess) record_async(be, e);
    return report(be);
}

int cuda_check(gf_backend *be) {
    cudaError_t e = cudaStreamQuery(cuda_stream(be));
    if (e != cudaSuccess && e != cudaErrorNotReady) record_async(be, e);
    return report(be);
}

/* ------------------------------------------------------------- open / close */

/* Makes the per-stream part of a backend: stream, cuBLAS handle bound to it, workspace. */
static int open_stream_part(cuda_state *st) {
    cudaError_t e = cudaStreamCreateWithFlags(&st->base.stream, cudaStreamNonBlocking);
    if (e != cudaSuccess) return gf_fail("cuda:%d: cannot create a stream: %s", st->base.device, cudaGetErrorString(e));
    st->base.workspace_bytes = WORKSPACE_BYTES;
    e = cudaMalloc(&st->base.workspace, st->base.workspace_bytes);
    if (e != cudaSuccess) {
        st->base.workspace = NULL;
        return gf_fail("cuda:%d: cannot allocate the cuBLAS workspace: %s", st->base.device, cudaGetErrorString(e));
    }
    cublasStatus_t s = cublasCreate(&st->base.blas);
    if (s != CUBLAS_STATUS_SUCCESS) {
        st->base.blas = NULL;
        return gf_fail("cuda:%d: cuBLAS did not start: %s", st->base.device, cublasGetStatusString(s));
    }
    if (cublasSetStream(st->base.blas, st->base.stream) != CUBLAS_STATUS_SUCCESS ||
        cublasSetWorkspace(st->base.blas, st->base.workspace, st->base.workspace_bytes) != CUBLAS_STATUS_SUCCESS)
        return gf_fail("cuda:%d: cannot bind cuBLAS to the stream", st->base.device);
    return 0;
}

static void close_stream_part(cuda_state *st) {
    if (st->base.blas) cublasDestroy(st->base.blas);
    if (st->base.workspace) cudaFree(st->base.workspace);
    if (st->base.stream) cudaStreamDestroy(st->base.stream);
    st->base.blas = NULL;
    st->base.workspace = NULL;
    st->base.stream = NULL;
}

static void free_state(cuda_state *st) {
    if (!st) return;
    cudaSetDevice(st->base.device);
    for (int i = 0; i < st->n_subs; i++) {
        gf_backend *sub = st->subs[i];
        close_stream_part(cuda_st(sub));
        cuda_gemm_cache_free(cuda_st(sub)->gemm);
        free(sub->impl);
        free(sub);
    }
    for (int i = 0; i < MAX_SUBS + 1; i++)
        if (st->join[i]) cudaEventDestroy(st->join[i]);
    close_stream_part(st);
    if (st->owns_handles && st->base.lt) cublasLtDestroy(st->base.lt);
    if (st->owns_handles && st->base.gemm_choices) {
        gemm_choices_free(st->base.gemm_choices);
        free(st->base.gemm_choices);
    }
    cuda_gemm_cache_free(st->gemm);
    free(st);
}

void cuda_close(gf_backend *be) {
    if (!be || !be->impl) return;
    cudaStreamSynchronize(cuda_stream(be));
    free_state(cuda_st(be));
    be->impl = NULL;
}

/* "cuda" -> 0, "cuda:N" -> N; -1 for anything else. */
static int parse_ordinal(const char *dev) {
    if (!dev || strncmp(dev, "cuda", 4) != 0) return -1;
    if (dev[4] == 0) return 0;
    if (dev[4] != ':' || !dev[5]) return -1;
    char *end;
    long n = strtol(dev + 5, &end, 10);
    return (*end || n < 0 || n > 1023) ? -1 : (int)n;
}

extern "C" int gf_backend_cuda_count(int *count) {
    *count = 0;
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) { /* no driver, no GPU: none to list */
        cudaGetLastError();
        return 0;
    }
    *count = n;
    return 0;
}

/* With GRAFT_CUDA_GEMM_TUNE (bf16): the algorithm choices of earlier runs, from
 * GRAFT_CUDA_GEMM_TUNE_FILE (default gemm_choices_default_path(); "-": none, this
 * run's choices kept in memory only). A file that is not a choice file fails
 * the open. */
static int open_gemm_choices(cuda_state *st) {
    if (st->base.gemm_tune <= 1) return 0;
    const char *env = getenv("GRAFT_CUDA_GEMM_TUNE_FILE");
    char *path = env && *env ? (strcmp(env, "-") == 0 ? NULL : strdup(env)) : gemm_choices_default_path();
    if (!path && !(env && strcmp(env, "-") == 0))
        fprintf(stderr, "graft: GEMM choices kept for this run only (no HOME or XDG_CACHE_HOME for the file; "
                        "GRAFT_CUDA_GEMM_TUNE_FILE names one)\n");
    gemm_choices *c = (gemm_choices *)calloc(1, sizeof *c);
    if (!c) {
        free(path);
        return gf_fail("cuda:%d: out of host memory", st->base.device);
    }
    const int rc = gemm_choices_open(c, path);
    free(path);
    st->base.gemm_choices = c; /* freed with the state, also on failure */
    return rc;
}

extern "C" int gf_backend_cuda_open(gf_backend *be, const gf_backend_opts *o, const gf_backend_variants *v) {
    const int dev = parse_ordinal(o ? o->device : "cuda");
    if (dev < 0) return gf_fail("unknown device '%s' (cuda, cuda:N)", o && o->device ? o->device : "");
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        cudaGetLastError();
        int drv = 0, rt = 0;
        cudaDriverGetVersion(&drv);
        cudaRuntimeGetVersion(&rt);
        if (e == cudaErrorInsufficientDriver && drv == 0) return gf_fail("cuda: no NVIDIA driver on this machine");
        if (e == cudaErrorInsufficientDriver)
            return gf_fail("cuda: the NVIDIA driver supports CUDA %d.%d, graft was built with CUDA %d.%d (update the driver)",
                           drv / 1000, drv % 1000 / 10, rt / 1000, rt % 1000 / 10);
        if (e == cudaErrorNoDevice) return gf_fail("cuda: no GPU found");
        return gf_fail("cuda: no usable GPU (%s)", cudaGetErrorString(e));
    }
    if (dev >= count) return gf_fail("cuda:%d: no such GPU (%d found)", dev, count);
    if ((e = cudaSetDevice(dev)) != cudaSuccess)
        return gf_fail("cuda:%d: %s", dev, cudaGetErrorString(e));

    cuda_state *st = (cuda_state *)calloc(1, sizeof *st);
    if (!st) return gf_fail("cuda:%d: out of host memory", dev);
    st->base.device = dev;
    /* GRAFT_CUDA_FP32=1: float32 storage for every backend this process opens
     * (the GPU checks compare whole commands with the CPU this way); the
     * backend's name says "(fp32)" */
    const char *f32 = getenv("GRAFT_CUDA_FP32");
    st->base.fp32 = (o && o->fp32) || (f32 && *f32 && strcmp(f32, "0") != 0);
    st->owns_handles = true;
    const char *dbg = getenv("GRAFT_CUDA_SYNC");
    st->debug_sync = dbg && *dbg && strcmp(dbg, "0") != 0;
    /* kernel variants, for the checks and benchmarks that compare them */
    int cfg = v ? v->attn_cfg : 0;
    const int split = v ? v->attn_split : 0;
    /* GRAFT_CUDA_ATTN_CFG=ID: the attention forward's block shape ID for every call (benchmarks
     * compare the shapes through whole models with it; a check's forced variant wins) */
    const char *ac = getenv("GRAFT_CUDA_ATTN_CFG");
    if (cfg == 0 && ac && *ac) {
        char *end;
        const long id = strtol(ac, &end, 10);
        if (*end || id < 0 || attn_fwd_cfg_pos((int)id) < 0) {
            free(st);
            return gf_fail("GRAFT_CUDA_ATTN_CFG=%s: not the id of a block shape of cuda_attention_cfg.h", ac);
        }
        cfg = 1 + (int)id;
    }
    const int cfg_pos = cfg > 0 ? attn_fwd_cfg_pos(cfg - 1) : -1;
    if ((cfg != 0 && cfg_pos < 0) || split < 0) {
        free(st);
        return gf_fail("attention variant cfg %d split %d: cfg is 1 + a block shape of cuda_attention_cfg.h (0: "
                       "chosen), split >= 0 (0: chosen)",
                       cfg, split);
    }
    if (cuda_gdn_variants(&st->base, v) != 0) {
        free(st);
        return -1;
    }
    st->attn_cfg = cfg_pos;
    st->attn_split = split;
    /* GRAFT_CUDA_GEMM_TUNE=N: each product shape's first call times cublasLt's first N algorithms
     * (cuda_gemm.cu; bf16 only); unset, its first one is taken untimed.
     * GRAFT_CUDA_TASKS=N: be_run_tasks' streams and host threads (Stage 2's layers side by side) */
    int tasks = GF_DEVICE_TASKS;
    if (gf_env_count("GRAFT_CUDA_GEMM_TUNE", GEMM_TUNE_MAX, "algorithms to time", &st->base.gemm_tune) < 0 ||
        gf_env_count("GRAFT_CUDA_TASKS", GF_DEVICE_TASKS_MAX, "task streams", &tasks) < 0) {
        free(st);
        return -1;
    }
    if (st->base.fp32) st->base.gemm_tune = 0; /* fp32 (checking) runs repeat bit for bit: the heuristic's first */
    /* the attention backward's kernel: a check's variant, else GRAFT_CUDA_ATTN_BWD=mma|wgmma|wgmma2, else chosen */
    st->attn_bwd = v ? v->attn_bwd : ATTN_BWD_CHOSEN;
    if (st->attn_bwd == ATTN_BWD_CHOSEN) {
        static const char *const kernels[] = {"mma", "wgmma", "wgmma2"}; /* ATTN_BWD_MMA .. ATTN_BWD_WGMMA2 */
        const int w = cuda_env_word("GRAFT_CUDA_ATTN_BWD", kernels, 3, "mma, wgmma or wgmma2");
        if (w == -2) {
            free(st);
            return -1;
        }
        if (w >= 0) st->attn_bwd = ATTN_BWD_MMA + w;
    }
    if (st->attn_bwd < ATTN_BWD_CHOSEN || st->attn_bwd > ATTN_BWD_WGMMA2) {
        const int bad = st->attn_bwd;
        free(st);
        return gf_fail("attention backward variant %d: 1 mma.sync, 2 wgmma, 3 wgmma with two warpgroups (0: chosen)",
                       bad);
    }
    if ((e = cudaGetDeviceProperties(&st->base.prop, dev)) != cudaSuccess) {
        free(st);
        return gf_fail("cuda:%d: %s", dev, cudaGetErrorString(e));
    }
    const cudaDeviceProp *p = &st->base.prop;
    if (p->major < 9) {
        gf_fail("cuda:%d: %s has compute capability %d.%d; graft's CUDA code is built for 9.0 (Hopper) and newer", dev,
                p->name, p->major, p->minor);
        free(st);
        return -1;
    }
    if ((st->attn_bwd == ATTN_BWD_WGMMA || st->attn_bwd == ATTN_BWD_WGMMA2) && !cuda_has_wgmma(p)) {
        gf_fail("cuda:%d: the attention backward on wgmma is built for compute capability 9.0 only; %s has %d.%d", dev,
                p->name, p->major, p->minor);
        free(st);
        return -1;
    }
    /* chosen: wgmma on two warpgroups where it is built (compute capability 9.0), mma.sync elsewhere */
    if (st->attn_bwd == ATTN_BWD_CHOSEN) st->attn_bwd = cuda_has_wgmma(p) ? ATTN_BWD_WGMMA2 : ATTN_BWD_MMA;
    if (cfg_pos >= ATTN_FWD_MMA_CONFIGS && !cuda_has_wgmma(p)) {
        gf_fail("cuda:%d: attention cfg %d is a Hopper (wgmma) shape, built for compute capability 9.0 only; %s has "
                "%d.%d",
                dev, cfg - 1, p->name, p->major, p->minor);
        free(st);
        return -1;
    }
    if (cublasLtCreate(&st->base.lt) != CUBLAS_STATUS_SUCCESS) {
        st->base.lt = NULL;
        free_state(st);
        return gf_fail("cuda:%d: cublasLt did not start", dev);
    }
    if (open_stream_part(st) < 0 || open_gemm_choices(st) < 0) {
        free_state(st);
        return -1;
    }
    /* Keep freed scratch (cudaFreeAsync) in the pool instead of returning it
     * to the driver at every sync; be_alloc trims the pool when it runs short. */
    cudaMemPool_t pool;
    if (cudaDeviceGetDefaultMemPool(&pool, dev) == cudaSuccess) {
        uint64_t keep = UINT64_MAX;
        cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
    }
    cudaGetLastError();

    be->ops = &cuda_ops;
    be->act = st->base.fp32 ? GF_F32 : GF_BF16;
    be->host = false;
    be->tasks = tasks;
    be->impl = st;
    be->error[0] = 0;
    snprintf(be->name, sizeof be->name, "cuda:%d %s (%s)", dev, p->name, st->base.fp32 ? "fp32" : "bf16");
    return 0;
}

/* ------------------------------------------------------------- memory info */

int cuda_mem_info(gf_backend *be, size_t *free_bytes, size_t *total_bytes) {
    cudaSetDevice(cuda_of(be)->device);
    size_t f = 0, t = 0;
    cudaError_t e = cudaMemGetInfo(&f, &t);
    if (e != cudaSuccess) return gf_fail("cuda:%d: %s", cuda_of(be)->device, cudaGetErrorString(e));
    if (free_bytes) *free_bytes = f;
    if (total_bytes) *total_bytes = t;
    return 0;
}

/* ------------------------------------------------------------- tasks */

/* Tasks run on up to be_tasks_at_once host threads, thread s issuing tasks s,
 * s + that, ... onto sub-backend s (own stream, cuBLAS handle, workspace
 * and GEMM plans; same device and cublasLt handle), so their kernels overlap
 * on the GPU. Threads, not one thread queueing every task: a task that waits
 * for its stream (Stage 2 reads its loss every step) would hold back every
 * task queued after it. Events order the subs' streams after everything
 * queued before on the root and the root after all of them. */
static gf_backend *make_sub(gf_backend *root) {
    cuda_state *rs = cuda_st(root);
    gf_backend *sub = (gf_backend *)calloc(1, sizeof *sub);
    cuda_state *st = (cuda_state *)calloc(1, sizeof *st);
    if (!sub || !st) {
        free(sub);
        free(st);
        gf_fail("cuda:%d: out of host memory", rs->base.device);
        return NULL;
    }
    /* everything the root chose at open (device, properties, fp32, cublasLt, the
     * GDN variants), then a stream part of its own */
    st->base = rs->base;
    st->base.stream = NULL;
    st->base.blas = NULL;
    st->base.workspace = NULL;
    st->base.workspace_bytes = 0;
    st->gemm = NULL; /* its own plans: the cache is not shared between threads */
    st->owns_handles = false;
    st->debug_sync = rs->debug_sync;
    st->attn_cfg = rs->attn_cfg;
    st->attn_bwd = rs->attn_bwd;
    st->attn_split = rs->attn_split;
    if (open_stream_part(st) < 0) {
        close_stream_part(st);
        free(st);
        free(sub);
        return NULL;
    }
    sub->ops = root->ops;
    sub->act = root->act;
    sub->host = false;
    sub->tasks = 1;
    sub->impl = st;
    snprintf(sub->name, sizeof sub->name, "%s", root->name);
    return sub;
}

int cuda_run_tasks(gf_backend *be, int n, int (*fn)(void *ud, int i, gf_backend *sub), void *ud) {
    cuda_state *st = cuda_st(be);
    if (n <= 0) return 0;
    const int at_once = be_tasks_at_once(be), want = n < at_once ? n : at_once;
    cudaSetDevice(st->base.device);
    while (st->n_subs < want) {
        gf_backend *sub = make_sub(be);
        if (!sub) return -1;
        st->subs[st->n_subs++] = sub;
    }
    for (int i = 0; i < want + 1; i++)
        if (!st->join[i] && cudaEventCreateWithFlags(&st->join[i], cudaEventDisableTiming) != cudaSuccess) {
            st->join[i] = NULL;
            return gf_fail("cuda:%d: cannot create an event", st->base.device);
        }
    /* fork: every sub starts after what the root has queued */
    if (cudaEventRecord(st->join[0], st->base.stream) != cudaSuccess)
        return gf_fail("cuda:%d: cannot record an event", st->base.device);
    for (int s = 0; s < want; s++) cudaStreamWaitEvent(cuda_stream(st->subs[s]), st->join[0], 0);

    /* each thread its own tasks; the lowest failing task's message wins */
    int fail_task[MAX_SUBS];
    char fail_msg[MAX_SUBS][1024]; /* gf_last_error's size */
    const int device = st->base.device;
    auto run_share = [&](int s) {
        fail_task[s] = n;
        cudaSetDevice(device); /* the current device is per host thread */
        for (int i = s; i < n; i += want)
            if (fn(ud, i, st->subs[s]) < 0) {
                fail_task[s] = i;
                snprintf(fail_msg[s], sizeof fail_msg[s], "%s", gf_last_error()); /* thread-local */
                return;
            }
    };
    std::thread threads[MAX_SUBS];
    for (int s = 1; s < want; s++) {
        try {
            threads[s] = std::thread(run_share, s);
        } catch (...) { /* no thread: this one runs that share after its own */
        }
    }
    run_share(0);
    for (int s = 1; s < want; s++) {
        if (threads[s].joinable()) threads[s].join();
        else run_share(s);
    }
    int first = -1; /* the share holding the lowest failing task */
    for (int s = 0; s < want; s++)
        if (fail_task[s] < n && (first < 0 || fail_task[s] < fail_task[first])) first = s;
    /* join: the root continues after every sub; sub errors become the root's */
    for (int s = 0; s < want; s++) {
        gf_backend *sub = st->subs[s];
        cudaEventRecord(st->join[s + 1], cuda_stream(sub));
        cudaStreamWaitEvent(st->base.stream, st->join[s + 1], 0);
        if (sub->error[0]) {
            be_set_error(be, "%s", sub->error);
            sub->error[0] = 0;
        }
    }
    cuda_after(be, "run_tasks");
    if (first >= 0) return gf_fail("%s", fail_msg[first]);
    return 0;
}
