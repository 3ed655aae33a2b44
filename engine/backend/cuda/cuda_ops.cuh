/* The CUDA backend's core, internal to engine/backend/cuda (not shared with
 * the GDN kernels' files beyond what cuda_common.cuh holds): every op of the
 * table that is not a Gated DeltaNet op, and the helpers they share. */
#ifndef GRAFT_BACKEND_CUDA_OPS_CUH
#define GRAFT_BACKEND_CUDA_OPS_CUH

#include <stdint.h>

#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/cuda_table.h"

/* ------------------------------------------------------------- state */

/* cublasLt plans, shared by a backend and its task sub-backends (one host thread). */
struct cuda_gemm_cache;

/* What cuda_impl (cuda_common.cuh) does not hold: kept behind it in one
 * allocation so cuda_of(be) stays valid for the GDN files. */
typedef struct {
    cuda_impl base;              /* first: cuda_of(be) casts be->impl to this */
    struct cuda_gemm_cache *gemm; /* this backend's own (subs run on threads of their own) */
    bool owns_handles;           /* root: owns lt; sub: borrows it (cublasLt takes the stream per call) */
    bool debug_sync;             /* GRAFT_CUDA_SYNC=1: sync after every op, errors name it */
    int attn_cfg;                /* position in ATTN_FWD_CONFIG_LIST of the attention forward's block shape a
                                    test forced (-1: chosen by call) */
    int attn_split;              /* key-range splits in attention a test forced (0: chosen) */
    int attn_bwd;                /* the attention backward's kernel: ATTN_BWD_* (cuda_attention_cfg.h) */
    const char *last_op;         /* the last op queued (for async error reports) */
    struct gf_backend *subs[GF_DEVICE_TASKS_MAX]; /* be_run_tasks' sub-backends, made on first use */
    cudaEvent_t join[GF_DEVICE_TASKS_MAX + 1];    /* fork/join events: [0] the root's, then the subs' */
    int n_subs;
} cuda_state;

static inline cuda_state *cuda_st(gf_backend *be) { return (cuda_state *)be->impl; }

/* ------------------------------------------------------------- errors */

/* After queuing an op's kernels: records a launch error (sticky) with the op's
 * name; under GRAFT_CUDA_SYNC=1 also waits and records a device fault with it. */
void cuda_after(gf_backend *be, const char *op);

/* Records "op: what is f32, expected bf16" (sticky) and returns false when b
 * is not none and its type is not t. */
bool cuda_want(gf_backend *be, const char *op, const char *what, gf_buf b, gf_dtype t);
/* Same, for buffers that may be F32 or BF16 (losses). */
bool cuda_want_float(gf_backend *be, const char *op, const char *what, gf_buf b);
/* Records "op: what is required" when b is none. */
bool cuda_need(gf_backend *be, const char *op, const char *what, gf_buf b);

/* Stream-ordered scratch (cudaMallocAsync on the backend's stream); NULL with a
 * sticky error when the device is out of memory. */
void *cuda_scratch(gf_backend *be, size_t bytes, const char *op);
void cuda_scratch_free(gf_backend *be, void *p);

static inline bool cuda_aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

/* ------------------------------------------------------------- GEMM */

/* Column-major C[m, n] = alpha op(A)[m, k] op(B)[k, n] + beta C (+ bias[m] per
 * row of C when bias is given) through cublasLt with fp32 compute; types
 * from the buffers (A, B: F32 or BF16; C: F32 or BF16; bias: C's type).
 * Row-major callers swap operands (see cuda_gemm.cu). */
void cuda_gemm(gf_backend *be, const char *op, bool transa, bool transb, int m, int n, int k, float alpha,
               gf_buf A, int lda, gf_buf B, int ldb, float beta, gf_buf C, int ldc, gf_buf bias);
void cuda_gemm_cache_free(struct cuda_gemm_cache *c);
#define GEMM_TUNE_MAX 16 /* most algorithms GRAFT_CUDA_GEMM_TUNE times for one shape */

/* ------------------------------------------------------------- fixed-order sums */

/* dst[j] += sum over p of parts[p * n_out + j], p = 0, 1, ... in an order that
 * does not depend on timing (one block per j, a fixed tree): what the ops use
 * instead of atomics so that a run repeats bit for bit. */
void cuda_sum_parts(gf_backend *be, double *dst, const double *parts, size_t n_parts, size_t n_out);
void cuda_sum_parts_f(gf_backend *be, float *dst, const float *parts, size_t n_parts, size_t n_out);
/* dst[j] += sum over rows r of x[r, j] (the bias gradient), or of x[r, j] y[r, j] rs[r] when y is
 * not none (RMSNorm's weight gradient); x, y [N, out] of the backend's ACT type: per-chunk partial
 * sums, then cuda_sum_parts_f; the chunks follow N and out only (the same bits on every device). */
void cuda_col_sums(gf_backend *be, float *dst, gf_buf x, gf_buf y, const float *rs, int N, int out);

/* ------------------------------------------------------------- launching */

/* kernel<<<grid, block, smem, stream>>>(args...) written as a call,
 * cuda_launch(grid, block, smem, stream, kernel, args...), so that the
 * kernels also build for the CPU emulation (GRAFT_CUDA_EMU, cuda_common.cuh:
 * the same code on CPU fibers, to check indexing, fragment layouts and
 * barriers where there is no GPU). */
#ifdef GRAFT_CUDA_EMU
#define CUDA_DYNAMIC_SMEM(name) unsigned char *name = (unsigned char *)emu_dynamic_smem()
template <typename... KA, typename... A>
static inline void cuda_launch(dim3 grid, dim3 block, size_t smem, cudaStream_t, void (*k)(KA...), A... a) {
    emu_launch(grid, block, smem, [&]() { k(a...); });
}
static inline void cuda_allow_smem(const void *, size_t) {}
static inline void cuda_memset_async(void *p, int v, size_t n, cudaStream_t) { memset(p, v, n); }
#else
#define CUDA_DYNAMIC_SMEM(name) extern __shared__ __align__(16) unsigned char name[]
template <typename... KA, typename... A>
static inline void cuda_launch(dim3 grid, dim3 block, size_t smem, cudaStream_t s, void (*k)(KA...), A... a) {
    k<<<grid, block, smem, s>>>(a...);
}
/* More than 48 KiB of dynamic shared memory needs the kernel's consent; up to
 * that every kernel has it, so no call (and no host time on a decode step's launches). */
static inline void cuda_allow_smem(const void *k, size_t bytes) {
    if (bytes > (size_t)48 << 10) cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
}
static inline void cuda_memset_async(void *p, int v, size_t n, cudaStream_t s) { cudaMemsetAsync(p, v, n, s); }
#endif

/* ------------------------------------------------------------- small device helpers */

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ double warp_sum_d(double v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

/* Sum over a block of up to 1024 threads; every thread gets the total.
 * `red` is shared scratch of 32 elements; the block must reach this call whole. */
template <typename F> __device__ __forceinline__ F block_sum(F v, F *red) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    __syncthreads(); /* red may still be read by a previous call */
    if (lane == 0) red[warp] = v;
    __syncthreads();
    v = lane < nw ? red[lane] : F(0);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* Loads and stores of F32 or BF16 chosen at run time (the branch is uniform). */
__device__ __forceinline__ float ld_any(const void *p, bool bf, size_t i) {
    return bf ? __bfloat162float(((const bf16 *)p)[i]) : ((const float *)p)[i];
}
__device__ __forceinline__ void st_any(void *p, bool bf, size_t i, float x) {
    if (bf) ((bf16 *)p)[i] = __float2bfloat16(x);
    else ((float *)p)[i] = x;
}

/* W consecutive elements as floats: one 16-byte access when W * sizeof(T) is
 * 16 (the caller checked alignment), else W scalar accesses. */
template <int W, typename T> __device__ __forceinline__ void ld_pack(float (&f)[W], const T *p) {
    if constexpr (W * sizeof(T) == 16) {
        const uint4 u = *(const uint4 *)p;
        const T *t = (const T *)&u;
#pragma unroll
        for (int i = 0; i < W; i++) f[i] = to_f(t[i]);
    } else {
#pragma unroll
        for (int i = 0; i < W; i++) f[i] = to_f(p[i]);
    }
}
template <int W, typename T> __device__ __forceinline__ void st_pack(T *p, const float (&f)[W]) {
    if constexpr (W * sizeof(T) == 16) {
        uint4 u;
        T *t = (T *)&u;
#pragma unroll
        for (int i = 0; i < W; i++) t[i] = from_f<T>(f[i]);
        *(uint4 *)p = u;
    } else {
#pragma unroll
        for (int i = 0; i < W; i++) p[i] = from_f<T>(f[i]);
    }
}

/* Launches KERNEL<W, T>(base, items, ...) over n elements: 16-byte packs of
 * 16/sizeof(T) elements while `vec` (every pointer aligned), then the tail one
 * element at a time. Kernels handle elements base + it * W for it < items. */
#define CUDA_EW_LAUNCH(be, KERNEL, T, n, vec, ...)                                                         \
    do {                                                                                                   \
        constexpr int VN_ = 16 / (int)sizeof(T);                                                           \
        const unsigned cap_ = 16u * (unsigned)cuda_of(be)->prop.multiProcessorCount;                       \
        const size_t nv_ = (vec) ? (size_t)(n) / VN_ : 0, done_ = nv_ * VN_;                               \
        if (nv_)                                                                                           \
            cuda_launch(cuda_grid(nv_, 256, cap_), 256, 0, cuda_stream(be), KERNEL<VN_, T>, (size_t)0, nv_,  \
                        __VA_ARGS__);                                                                      \
        if ((size_t)(n) > done_)                                                                           \
            cuda_launch(cuda_grid((size_t)(n) - done_, 256, cap_), 256, 0, cuda_stream(be), KERNEL<1, T>,    \
                        done_, (size_t)(n) - done_, __VA_ARGS__);                                          \
    } while (0)

/* A grid for n elements with `threads` per block, capped for grid-stride loops. */
static inline unsigned cuda_grid(size_t n, unsigned threads, unsigned cap) {
    size_t b = (n + threads - 1) / threads;
    if (b > cap) b = cap;
    return (unsigned)(b ? b : 1);
}

#endif
