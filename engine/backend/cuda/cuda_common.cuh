/* Shared by the CUDA backend's translation units (CUDA C++; only files under
 * engine/backend/cuda include it). The contract between the backend's core
 * (cuda_backend.cu: open/close, memory, cuBLAS, element-wise ops, attention,
 * losses, optimizer) and its Gated DeltaNet kernels (cuda_gdn*.cu). Grow it;
 * do not change what is here without updating both sides. */
#ifndef GRAFT_BACKEND_CUDA_COMMON_CUH
#define GRAFT_BACKEND_CUDA_COMMON_CUH

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend_impl.h"
extern "C" {
#include "core/error.h" /* a C header without C++ guards */
}

/* GRAFT_CUDA_EMU: the same kernel source compiled as host C++ against the CPU
 * emulation of CUDA that the tests force in front of every file (g++
 * -include); it provides CUDA's names (threadIdx, __syncthreads, the warp
 * shuffles, atomicAdd, the runtime's memory calls) and the emu_* hooks that
 * stand for the inline PTX here, in cuda_mma.cuh and in cuda_gdn_dev.cuh. The
 * product never defines it. */
#if defined(GRAFT_CUDA_EMU) && !defined(GRAFT_CUDA_EMU_HARNESS)
#error "GRAFT_CUDA_EMU builds force the emulation's header in front of every file"
#endif

typedef __nv_bfloat16 bf16;

/* be->impl of a CUDA backend. */
typedef struct {
    int device;                  /* CUDA ordinal */
    cudaDeviceProp prop;         /* multiprocessors, shared memory limits, name */
    cudaStream_t stream;         /* every op of this backend is queued here */
    cublasHandle_t blas;         /* bound to stream */
    cublasLtHandle_t lt;
    void *workspace;             /* cuBLAS / cublasLt workspace on this device */
    size_t workspace_bytes;
    bool fp32;                   /* ACT is F32 (checking mode) instead of BF16 */
    int gemm_tune;               /* GRAFT_CUDA_GEMM_TUNE: algorithms timed at a shape's first product; <= 1: none (always in fp32) */
    struct gemm_choices *gemm_choices; /* with gemm_tune: the choices kept between runs (the root's; subs share it) */
    struct {                     /* GDN kernel variants a test forced at open (cuda_gdn_variants) */
        int slab;                /* 16 or 32 state rows a sequential-pass block; 0: chosen per call */
        bool general;            /* the general core kernels even at C 64, d 128 (kFix's check) */
    } gdn;
} cuda_impl;

/* Copies the GDN variants of v (gf_backend_opts.variants; NULL: none) into
 * im->gdn: 0, or -1 with gf_fail's one line naming the value the kernels do
 * not know (cuda_gdn_core.cu). */
int cuda_gdn_variants(cuda_impl *im, const gf_backend_variants *v);

/* A benchmark's kernel setting from the environment: the index in words[0, n) of variable name's
 * value; -1 where it is unset or empty; -2, with gf_fail's line "NAME=VALUE: list", for any other. */
static inline int cuda_env_word(const char *name, const char *const *words, int n, const char *list) {
    const char *s = getenv(name);
    if (!s || !*s) return -1;
    for (int i = 0; i < n; i++)
        if (strcmp(s, words[i]) == 0) return i;
    gf_fail("%s=%s: %s", name, s, list);
    return -2;
}

static inline cuda_impl *cuda_of(gf_backend *be) { return (cuda_impl *)be->impl; }
static inline cudaStream_t cuda_stream(gf_backend *be) { return cuda_of(be)->stream; }

/* After a launch: records the launch error (sticky) with the op's name. */
#define CUDA_CHECK_LAUNCH(be, what)                                                             \
    do {                                                                                       \
        cudaError_t e_ = cudaGetLastError();                                                   \
        if (e_ != cudaSuccess) be_set_error((be), "%s: %s", (what), cudaGetErrorString(e_));   \
    } while (0)

/* A CUDA runtime call inside an op: records the error (sticky) and evaluates to false on failure. */
#define CUDA_OK(be, call, what)                                                                 \
    ([&]() -> bool {                                                                           \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess) { be_set_error((be), "%s: %s", (what), cudaGetErrorString(e_)); \
                                 return false; }                                               \
        return true;                                                                           \
    }())

/* Element loads/stores for ACT (bf16 or float) with float arithmetic. */
__device__ __forceinline__ float to_f(float x) { return x; }
__device__ __forceinline__ float to_f(bf16 x) { return __bfloat162float(x); }
template <typename T> __device__ __forceinline__ T from_f(float x);
template <> __device__ __forceinline__ float from_f<float>(float x) { return x; }
template <> __device__ __forceinline__ bf16 from_f<bf16>(float x) { return __float2bfloat16(x); }

/* 2^x in one MUFU.EX2 (ex2.approx.ftz: relative error about 2^-22, results
 * below 2^-126 flushed to 0, 2^-inf = 0). exp2f / expf compile to five and
 * ten-odd instructions here (no fast math: they keep denormal results, which
 * the softmax and decay loops never need). The CPU emulation keeps exp2f. */
__device__ __forceinline__ float exp2_approx(float x) {
#ifdef GRAFT_CUDA_EMU
    return exp2f(x);
#else
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
#endif
}

/* e^x as a multiply by log2(e) and exp2_approx: the losses' softmaxes and the GDN decay masks
 * and scales, where expf (ten-odd instructions without fast math) ran once an element. */
__device__ __forceinline__ float exp_approx(float x) { return exp2_approx(x * 1.4426950408889634f); }

/* 1 / x in one MUFU.RCP (rcp.approx.ftz: at most 1 ulp off; 1 / inf = 0, denormal results
 * flushed to 0), where 1.f / x is an IEEE division: a reciprocal, three refining
 * instructions and a range test with its branch. The CPU emulation divides. */
__device__ __forceinline__ float rcp_approx(float x) {
#ifdef GRAFT_CUDA_EMU
    return 1.0f / x;
#else
    float y;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
#endif
}

/* ldmatrix .m8n8.b16, N = 2 or 4 matrices: lanes 8 i .. 8 i + 7 give the
 * addresses of matrix i's 8 rows (16 bytes each, 16-byte aligned, shared
 * memory); register i of lane 4 g + t receives that matrix's (row g, columns
 * 2t, 2t + 1), or with kTrans (rows 2t, 2t + 1, column g), the first element in
 * the low half. The attention and GDN kernels both fetch mma fragments with it
 * (the emulation: emu_ldmatrix, the same semantics). */
template <int N, bool kTrans> __device__ __forceinline__ void ldmatrix_sync(uint32_t *r, const void *row) {
#ifdef GRAFT_CUDA_EMU
    emu_ldmatrix(r, N, row, kTrans);
#else
    const unsigned a = (unsigned)__cvta_generic_to_shared(row);
    if constexpr (N == 4 && kTrans)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(a)
                     : "memory");
    else if constexpr (N == 4)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(a)
                     : "memory");
    else if constexpr (kTrans)
        asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n" : "=r"(r[0]), "=r"(r[1]) : "r"(a) : "memory");
    else
        asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n" : "=r"(r[0]), "=r"(r[1]) : "r"(a) : "memory");
#endif
}

/* Whether the device runs sm_90a code (wgmma): compute capability 9.0 exactly; the
 * arch-specific build runs on no other GPU. */
static inline bool cuda_has_wgmma(const cudaDeviceProp *p) { return p->major == 9 && p->minor == 0; }

static inline unsigned cuda_blocks(size_t n, unsigned threads) {
    size_t b = (n + threads - 1) / threads;
    return (unsigned)(b > 0x7fffffffu ? 0x7fffffffu : (b ? b : 1));
}

#endif
