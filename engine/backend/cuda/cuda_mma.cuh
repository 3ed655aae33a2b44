/* Warp-level tensor-core building blocks for the attention kernels (sm_80+
 * PTX, run on sm_90): cp.async copies into shared memory, ldmatrix, and the
 * bf16 m16n8k16 mma with fp32 accumulation.
 *
 * Fragment layouts (PTX ISA, "mma.m16n8k16"), lane = 4 * gid + tig:
 *   A (16 x 16, row-major) a0: (gid, 2tig..+1)  a1: (gid+8, 2tig..)  a2: (gid, 8+2tig..)  a3: (gid+8, 8+2tig..)
 *   B (16 x 8, k x n)      b0: (k = 2tig..+1, n = gid)               b1: (k = 8+2tig..+1, n = gid)
 *   C (16 x 8, fp32)       c0, c1: (gid, 2tig..+1)                   c2, c3: (gid+8, 2tig..+1)
 * ldmatrix .x4: lanes 8i..8i+7 give the row addresses of matrix i; lane
 * receives (row gid, columns 2tig..+1) of each matrix, or with .trans
 * (rows 2tig..+1, column gid). */
#ifndef GRAFT_BACKEND_CUDA_MMA_CUH
#define GRAFT_BACKEND_CUDA_MMA_CUH

#include <stdint.h>
#include <string.h>

#include "backend/cuda/cuda_common.cuh"

#ifdef GRAFT_CUDA_EMU
/* the same operations on the emulation's CPU fibers (cuda_common.cuh) */
__device__ __forceinline__ void cp_async16(void *dst, const void *src, bool valid) { emu_cp_async16(dst, src, valid); }
__device__ __forceinline__ void cp_async_commit() { emu_cp_commit(); }
template <int N> __device__ __forceinline__ void cp_async_wait() { emu_cp_wait(N); }
__device__ __forceinline__ void mma_bf16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    emu_mma_bf16_16816(d, a, b0, b1);
}
#else
__device__ __forceinline__ uint32_t smem_addr(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

/* 16 bytes global -> shared, asynchronously; zero-filled when !valid (src is then not read). */
__device__ __forceinline__ void cp_async16(void *dst, const void *src, bool valid) {
    const int n = valid ? 16 : 0;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src), "r"(n)
                 : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
/* Waits until at most N committed groups of this thread are still in flight. */
template <int N> __device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

/* d += a b (16 x 16 by 16 x 8, bf16 in, fp32 accumulate). */
__device__ __forceinline__ void mma_bf16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
#endif

__device__ __forceinline__ void ldsm_x4(uint32_t (&r)[4], const void *p) { ldmatrix_sync<4, false>(r, p); }
__device__ __forceinline__ void ldsm_x4_t(uint32_t (&r)[4], const void *p) { ldmatrix_sync<4, true>(r, p); }

/* d0 += a b[0..1], d1 += a b[2..3]: one A fragment against the two 16 x 8 B fragments of an
 * ldmatrix .x4 (16 output columns, d0 the first 8). */
__device__ __forceinline__ void mma_bf16_n16(float (&d0)[4], float (&d1)[4], const uint32_t (&a)[4],
                                             const uint32_t (&b)[4]) {
    mma_bf16(d0, a, b[0], b[1]);
    mma_bf16(d1, a, b[2], b[3]);
}

/* A compile-time bool as a value: a generic lambda called with bool_tag<true>{}
 * or bool_tag<false>{} is built twice, each branch-free in that flag. */
template <bool B> struct bool_tag {
    static constexpr bool value = B;
};

/* Two floats as a bf16 pair: lo in the low half (the lower column). */
__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    uint32_t u;
    memcpy(&u, &h, sizeof u);
    return u;
}

/* Two m16n8 accumulator tiles (k columns 0..7 in lo, 8..15 in hi) as the bf16 A fragment of an
 * m16n8k16 mma: both layouts put the same (row, column) in the same lane. */
__device__ __forceinline__ void acc_to_a(uint32_t (&a)[4], const float (&lo)[4], const float (&hi)[4]) {
    a[0] = pack_bf16(lo[0], lo[1]);
    a[1] = pack_bf16(lo[2], lo[3]);
    a[2] = pack_bf16(hi[0], hi[1]);
    a[3] = pack_bf16(hi[2], hi[3]);
}

__device__ __forceinline__ float quad_sum(float v) {
    v += __shfl_xor_sync(0xffffffffu, v, 1);
    v += __shfl_xor_sync(0xffffffffu, v, 2);
    return v;
}
__device__ __forceinline__ float quad_max(float v) {
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
    return v;
}

#endif
