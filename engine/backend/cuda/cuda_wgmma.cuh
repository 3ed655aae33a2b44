/* Hopper warpgroup MMA (wgmma.mma_async, PTX ISA 8.0, sm_90a) for bf16 in,
 * fp32 accumulate: the building blocks of the attention forward's Hopper
 * shapes (cuda_attention_fwd.cuh, WG configurations).
 *
 * A warpgroup is four consecutive warps (the first one's index a multiple of
 * four); one wgmma computes a 64 x N tile: warp w of the group owns rows
 * 16 w .. 16 w + 15, and within a warp the accumulator's layout is
 * mma.m16n8k16's C layout repeated over N / 8 column blocks:
 *   d[4 i + 0], d[4 i + 1]: row gid,     columns 8 i + 2 tig, + 1
 *   d[4 i + 2], d[4 i + 3]: row gid + 8, the same columns
 * (lane = 4 gid + tig). An A operand in registers has mma.m16n8k16's A
 * layout for the warp's 16 rows (cuda_mma.cuh), so softmax probabilities in
 * the accumulator layout repack into it as they do for mma.sync.
 *
 * Operands in shared memory are described by a 64-bit matrix descriptor:
 * bits 0-13 start address >> 4, 16-29 leading byte offset >> 4, 32-45
 * stride byte offset >> 4, 49-51 base offset, 62-63 swizzle (1: 128 bytes).
 * Every tile here uses the 128-byte swizzle: rows of 64 bf16 (128 bytes),
 * the 16-byte chunk c of row r stored at chunk c ^ (r % 8) (the address bits
 * 4-6 XOR bits 7-9), atoms of 8 rows (1024 bytes, 1024-aligned, so the
 * base offset is 0). A matrix wider than 64 elements is stored as column
 * blocks of 64, one after another (swz128_offset).
 *   K-major (A, and B as N rows of K): element (row, k) of the operand; the
 *     8-row groups SBO bytes apart; a k step of 16 advances the start address
 *     by 32 bytes inside the 128-byte row (the swizzle uses the absolute
 *     address bits, so that is all it takes).
 *   MN-major (K rows of M or N, M or N contiguous: V in P V, B; dS^T in the
 *     attention backward's dQ = dS K, A): 64 M/N-elements a row, the 8-row
 *     groups along K SBO bytes apart, the column blocks of 64 LBO bytes apart.
 * The emulation (tests/gpu/emu) decodes the same descriptors. */
#ifndef GRAFT_BACKEND_CUDA_WGMMA_CUH
#define GRAFT_BACKEND_CUDA_WGMMA_CUH

#include <stdint.h>

#include "backend/cuda/cuda_common.cuh"

/* The byte offset of element chunk (row, 8-element chunk c) in a tile of
 * `rows` rows stored as 128-byte-swizzled column blocks of 64 elements. */
__device__ __forceinline__ uint32_t swz128_offset(int rows, int row, int c) {
    return (uint32_t)((c >> 3) * rows * 128 + row * 128 + (((c & 7) ^ (row & 7)) << 4));
}

/* A descriptor for a 128-byte-swizzled operand at shared address `addr`. */
__device__ __forceinline__ uint64_t wgmma_desc(uint32_t addr, uint32_t lbo, uint32_t sbo) {
    return (uint64_t)((addr >> 4) & 0x3fff) | ((uint64_t)((lbo >> 4) & 0x3fff) << 16) |
           ((uint64_t)((sbo >> 4) & 0x3fff) << 32) | ((uint64_t)1 << 62);
}

/* The descriptor of the operand `bytes` (a multiple of 16) past the one `base` describes: one add to
 * the address field, instead of shifting, masking and or-ing a new address at every product (which
 * ptxas builds in vector registers and moves to uniform ones, ~17 % of the attention forward's
 * instructions on an H100, session 31). The field holds the address in 16-byte units in 14 bits;
 * shared memory ends below 256 KiB, so the sum never carries out of it (nor out of the low word). */
__device__ __forceinline__ uint64_t wgmma_desc_at(uint64_t base, uint32_t bytes) {
    return (base & 0xffffffff00000000ull) | (uint32_t)((uint32_t)base + (bytes >> 4)); /* no carry chain */
}

#ifdef GRAFT_CUDA_EMU
/* the shared address space of the emulation: offsets into the block's dynamic shared memory */
__device__ __forceinline__ uint32_t smem_u32(const void *p) {
    return (uint32_t)((const unsigned char *)p - (const unsigned char *)emu_dynamic_smem());
}
__device__ __forceinline__ void wgmma_fence() {}
__device__ __forceinline__ void wgmma_commit() {}
template <int N> __device__ __forceinline__ void wgmma_wait() {}
__device__ __forceinline__ void fence_proxy_async() {}
/* d (64 x N tile of the warpgroup, accumulator layout) = A B (+ d when acc) */
template <int N, bool TRANS_B, bool TRANS_A = false>
__device__ __forceinline__ void wgmma_ss(float *d, uint64_t a, uint64_t b, bool acc) {
    emu_wgmma_bf16(d, N, nullptr, a, b, TRANS_A, TRANS_B, acc);
}
template <int N, bool TRANS_B>
__device__ __forceinline__ void wgmma_rs(float *d, const uint32_t (&a)[4], uint64_t b, bool acc) {
    emu_wgmma_bf16(d, N, a, 0, b, false, TRANS_B, acc);
}
/* Keeps the compiler from moving reads or writes of an accumulator across an
 * asynchronous wgmma (nothing to keep on the emulation). */
__device__ __forceinline__ void wgmma_reg_fence(float &) {}
__device__ __forceinline__ void wgmma_reg_fence_u(uint32_t &) {}
__device__ __forceinline__ void named_bar_sync(int id, int n) { emu_bar_sync(id, n); }
__device__ __forceinline__ void named_bar_arrive(int id, int n) { emu_bar_arrive(id, n); }
template <bool INC, int N> __device__ __forceinline__ void setmaxnreg() {}
#else
__device__ __forceinline__ uint32_t smem_u32(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
/* Built for a target without wgmma (sm_90 without "a", or a newer GPU's PTX):
 * the Hopper shapes are only launched on a compute capability 9.0 device from
 * the sm_90a build (cuda_attention_fwd_wg.cu), so reaching this is a bug. */
#define GRAFT_WGMMA_UNAVAILABLE() __trap()
#endif

__device__ __forceinline__ void wgmma_fence() {
#ifdef GRAFT_WGMMA_UNAVAILABLE
    GRAFT_WGMMA_UNAVAILABLE();
#else
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void wgmma_commit() {
#ifdef GRAFT_WGMMA_UNAVAILABLE
    GRAFT_WGMMA_UNAVAILABLE();
#else
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}
/* Waits until at most N committed wgmma groups of this warpgroup are pending. */
template <int N> __device__ __forceinline__ void wgmma_wait() {
#ifdef GRAFT_WGMMA_UNAVAILABLE
    GRAFT_WGMMA_UNAVAILABLE();
#else
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
#endif
}
/* Makes this thread's ordinary (generic-proxy) writes to shared memory, cp.async's included,
 * visible to the async proxy that wgmma reads its operands through; a barrier after it publishes
 * them to the warpgroup. */
__device__ __forceinline__ void fence_proxy_async() {
#ifdef GRAFT_WGMMA_UNAVAILABLE
    GRAFT_WGMMA_UNAVAILABLE();
#else
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void wgmma_reg_fence(float &r) { asm volatile("" : "+f"(r)::"memory"); }
/* The same for an A operand's register: its value stays where the wgmma reads it until here. */
__device__ __forceinline__ void wgmma_reg_fence_u(uint32_t &r) { asm volatile("" : "+r"(r)::"memory"); }

/* Warp specialisation. bar.sync id, n: waits until n threads (whole warps) arrived at barrier id
 * (1-15; 0 is __syncthreads's), this one included; bar.arrive id, n counts this thread's arrival
 * without waiting (a producer releasing its consumers, or consumers returning a buffer). Both order
 * the arriving threads' earlier shared-memory writes before the waiters' later reads. */
__device__ __forceinline__ void named_bar_sync(int id, int n) {
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(n) : "memory");
}
__device__ __forceinline__ void named_bar_arrive(int id, int n) {
    asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(n) : "memory");
}
/* setmaxnreg: a warpgroup gives back registers (dec, INC false) or takes more (inc, waiting until the
 * block has them free); N a multiple of 8 in 24..256, the same in every thread of the warpgroup. */
template <bool INC, int N> __device__ __forceinline__ void setmaxnreg() {
#ifdef GRAFT_WGMMA_UNAVAILABLE
    GRAFT_WGMMA_UNAVAILABLE();
#else
    if constexpr (INC) asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
    else asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
#endif
}

/* The accumulator operand lists: 32 (N 64) or 64 (N 128) "+f" registers. */
#define WG_D8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
                 "+f"(d[i + 6]), "+f"(d[i + 7])
#define WG_D32(i) WG_D8(i), WG_D8(i + 8), WG_D8(i + 16), WG_D8(i + 24)
#define WG_R32 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, " \
               "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define WG_R64 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, "  \
               "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, " \
               "%38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, " \
               "%56, %57, %58, %59, %60, %61, %62, %63}"

/* d = A B (+ d when acc): A (64 x 16) and B (16 x N) in shared memory; A K-major (64 rows of 16)
 * or, TRANS_A, MN-major (16 rows of 64); B K-major (N rows of 16) or, TRANS_B, MN-major. */
template <int N, bool TRANS_B, bool TRANS_A = false>
__device__ __forceinline__ void wgmma_ss(float *d, uint64_t a, uint64_t b, bool acc) {
#ifdef GRAFT_WGMMA_UNAVAILABLE
    GRAFT_WGMMA_UNAVAILABLE();
#else
    static_assert(N == 64 || N == 128, "N 64 or 128");
    const int sc = acc ? 1 : 0;
    if constexpr (N == 64)
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " WG_R32 ", %32, %33, p, 1, 1, %35, %36;\n}\n"
                     : WG_D32(0)
                     : "l"(a), "l"(b), "r"(sc), "n"(TRANS_A ? 1 : 0), "n"(TRANS_B ? 1 : 0));
    else
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 " WG_R64 ", %64, %65, p, 1, 1, %67, %68;\n}\n"
                     : WG_D32(0), WG_D32(32)
                     : "l"(a), "l"(b), "r"(sc), "n"(TRANS_A ? 1 : 0), "n"(TRANS_B ? 1 : 0));
#endif
}

/* d = A B (+ d when acc): A (64 x 16) in registers (the warp's 16 rows, mma.m16n8k16's A layout), B
 * (16 x N) in shared memory, K-major or, TRANS_B, MN-major. */
template <int N, bool TRANS_B>
__device__ __forceinline__ void wgmma_rs(float *d, const uint32_t (&a)[4], uint64_t b, bool acc) {
#ifdef GRAFT_WGMMA_UNAVAILABLE
    GRAFT_WGMMA_UNAVAILABLE();
#else
    static_assert(N == 64 || N == 128, "N 64 or 128");
    const int sc = acc ? 1 : 0;
    if constexpr (N == 64)
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " WG_R32
                     ", {%32, %33, %34, %35}, %36, p, 1, 1, %38;\n}\n"
                     : WG_D32(0)
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(sc), "n"(TRANS_B ? 1 : 0));
    else
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 " WG_R64
                     ", {%64, %65, %66, %67}, %68, p, 1, 1, %70;\n}\n"
                     : WG_D32(0), WG_D32(32)
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(sc), "n"(TRANS_B ? 1 : 0));
#endif
}
#undef WG_D8
#undef WG_D32
#undef WG_R32
#undef WG_R64
#endif

/* wgmma_reg_fence over every register of an accumulator array, or of A fragments held in registers. */
template <int N> __device__ __forceinline__ void wgmma_reg_fence_all(float (&r)[N][4]) {
#pragma unroll
    for (int i = 0; i < N; i++)
#pragma unroll
        for (int e = 0; e < 4; e++) wgmma_reg_fence(r[i][e]);
}
template <int N> __device__ __forceinline__ void wgmma_reg_fence_all(uint32_t (&r)[N][4]) {
#pragma unroll
    for (int i = 0; i < N; i++)
#pragma unroll
        for (int e = 0; e < 4; e++) wgmma_reg_fence_u(r[i][e]);
}

#endif
