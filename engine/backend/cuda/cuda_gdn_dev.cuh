/* Device-side building blocks of the Gated DeltaNet kernels (cuda_gdn*.cu):
 * strided tile views, one warp-level 16x8 tile product (bf16 tensor cores or
 * exact fp32), quad reductions, the launch macro and the stream-ordered scratch.
 *
 * Tile product: acc[4] += A[m0:m0+16, 0:K] B[0:K, n0:n0+8] for one warp, in the
 * accumulator layout of mma.sync m16n8 (lane = 4 g + t): acc[0], acc[1] at row
 * m0 + g, columns n0 + 2t, n0 + 2t + 1; acc[2], acc[3] at row m0 + g + 8.
 * With kTC the operands are rounded to bf16 and multiplied on the tensor cores
 * (mma.sync.m16n8k16, fp32 accumulation); without, each lane computes its four
 * outputs in fp32 on the CUDA cores, in the same layout. Views are strided so a
 * transpose is just swapped strides; they may point to shared or global memory.
 *
 * GDN_EMULATE: the same source compiled as host C++ by tests/gpu/emu (a CPU
 * emulation of blocks, warps and mma used to test the kernels' logic where no
 * GPU exists). The only hooks are the mma, the shuffle, the launch and memory. */
#ifndef GRAFT_BACKEND_CUDA_GDN_DEV_CUH
#define GRAFT_BACKEND_CUDA_GDN_DEV_CUH

#include <stdint.h>
#include <string.h>

#include "backend/cuda/cuda_common.cuh"

#ifdef GDN_EMULATE
#include "tests/gpu/emu/gdn_emu.h"
#define GDN_LAUNCH(kern, grid, block, smem, stream, ...) \
    gdn_emu_launch((grid), (block), (smem), [&]() { kern(__VA_ARGS__); })
#else
#define GDN_LAUNCH(kern, grid, block, smem, stream, ...) kern<<<(grid), (block), (smem), (stream)>>>(__VA_ARGS__)
#endif

#define GDN_THREADS 128      /* threads of the chunk kernels: 4 warps */
#define GDN_THREADS_BWD 256  /* the local backward kernel: 8 warps */
#define GDN_MAX_D 128        /* largest dk, dv (multiples of 16) */
#define GDN_MAX_SLAB 32      /* rows of the state a sequential-pass block owns */

/* Dynamic shared memory of the running block. */
__device__ __forceinline__ char *gdn_smem() {
#ifdef GDN_EMULATE
    return gdn_emu_smem();
#else
    extern __shared__ __align__(16) char gdn_smem_[];
    return gdn_smem_;
#endif
}

/* Carves consecutive 16-byte-aligned arrays out of shared memory (the host
 * computes the same total with a null base). */
struct SmemCarve {
    char *p;
    size_t used;
    __host__ __device__ explicit SmemCarve(char *base) : p(base), used(0) {}
    template <typename T> __host__ __device__ T *take(size_t n) {
        T *r = (T *)(p ? p + used : nullptr);
        used += (n * sizeof(T) + 15) & ~(size_t)15;
        return r;
    }
};

/* Element (r, c) = p[r * rs + c * cs]. */
template <typename T> struct View {
    const T *p;
    int rs, cs;
    __device__ __forceinline__ float at(int r, int c) const { return to_f(p[(ptrdiff_t)r * rs + (ptrdiff_t)c * cs]); }
};
template <typename T> __device__ __forceinline__ View<T> view(const T *p, int rs, int cs) {
    View<T> v;
    v.p = p;
    v.rs = rs;
    v.cs = cs;
    return v;
}

__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

/* d += a b for one m16n8k16 bf16 tile (fragments in PTX ISA order). */
__device__ __forceinline__ void mma_bf16_16816(float d[4], const uint32_t a[4], const uint32_t b[2]) {
#ifdef GDN_EMULATE
    gdn_emu_mma_bf16_16816(d, a, b);
#else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

__device__ __forceinline__ float shfl_xor(float v, int m) {
#ifdef GDN_EMULATE
    return gdn_emu_shfl_xor(v, m);
#else
    return __shfl_xor_sync(0xffffffffu, v, m);
#endif
}

/* Sum over the 4 lanes of a quad (lanes 4g .. 4g+3: one accumulator row). */
__device__ __forceinline__ float quad_sum(float v) {
    v += shfl_xor(v, 1);
    return v + shfl_xor(v, 2);
}

__device__ __forceinline__ float warp_sum(float v) {
    for (int m = 16; m >= 1; m >>= 1) v += shfl_xor(v, m);
    return v;
}

/* acc += A[m0.., 0:K] B[0:K, n0..] for this warp's 16x8 tile; K % 16 == 0. */
template <bool kTC, typename TA, typename TB>
__device__ __forceinline__ void tile_mma(float acc[4], View<TA> A, View<TB> B, int m0, int n0, int K) {
    int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    if (kTC) {
        for (int k0 = 0; k0 < K; k0 += 16) {
            int ka = k0 + 2 * t;
            uint32_t a[4], b[2];
            a[0] = pack_bf16(A.at(m0 + g, ka), A.at(m0 + g, ka + 1));
            a[1] = pack_bf16(A.at(m0 + g + 8, ka), A.at(m0 + g + 8, ka + 1));
            a[2] = pack_bf16(A.at(m0 + g, ka + 8), A.at(m0 + g, ka + 9));
            a[3] = pack_bf16(A.at(m0 + g + 8, ka + 8), A.at(m0 + g + 8, ka + 9));
            b[0] = pack_bf16(B.at(ka, n0 + g), B.at(ka + 1, n0 + g));
            b[1] = pack_bf16(B.at(ka + 8, n0 + g), B.at(ka + 9, n0 + g));
            mma_bf16_16816(acc, a, b);
        }
    } else {
        float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        for (int k = 0; k < K; k++) {
            float a0 = A.at(m0 + g, k), a1 = A.at(m0 + g + 8, k);
            float b0 = B.at(k, n0 + 2 * t), b1 = B.at(k, n0 + 2 * t + 1);
            s0 = fmaf(a0, b0, s0);
            s1 = fmaf(a0, b1, s1);
            s2 = fmaf(a1, b0, s2);
            s3 = fmaf(a1, b1, s3);
        }
        acc[0] += s0;
        acc[1] += s1;
        acc[2] += s2;
        acc[3] += s3;
    }
}

/* Row and column of accumulator element e (0..3) of this lane in a tile at (m0, n0). */
__device__ __forceinline__ int acc_row(int m0, int e) { return m0 + ((threadIdx.x & 31) >> 2) + (e >> 1) * 8; }
__device__ __forceinline__ int acc_col(int n0, int e) { return n0 + 2 * (threadIdx.x & 3) + (e & 1); }

/* Calls f(m0, n0) for each 16x8 tile of an M x N output this warp owns (tiles are
 * dealt round-robin over the block's warps; the same M, N give the same owner). */
template <typename F> __device__ __forceinline__ void for_tiles(int M, int N, F f) {
    int warp = threadIdx.x >> 5, nw = blockDim.x >> 5, tn = N >> 3, nt = (M >> 4) * tn;
    for (int i = warp; i < nt; i += nw) f((i / tn) << 4, (i % tn) << 3);
}

/* Per-row partial sums of a tile: each quad adds its two values of row r and
 * r + 8; the lane with t == 0 stores part[row * ldp + n0 / 8]. All lanes of the
 * warp must call it together. */
__device__ __forceinline__ void tile_row_partials(float *part, int ldp, int m0, int n0, const float v[4]) {
    float lo = quad_sum(v[0] + v[1]), hi = quad_sum(v[2] + v[3]);
    if ((threadIdx.x & 3) == 0) {
        int r = m0 + ((threadIdx.x & 31) >> 2);
        part[r * ldp + (n0 >> 3)] = lo;
        part[(r + 8) * ldp + (n0 >> 3)] = hi;
    }
}

__device__ __forceinline__ void block_sync() { __syncthreads(); }

/* Copies L rows of `cols` elements (global, row stride ld) into a dense smem
 * tile of `rows` rows, optionally scaled per row, zero beyond L. */
template <typename TS, typename TG>
__device__ __forceinline__ void load_rows(TS *dst, const TG *src, size_t ld, int L, int rows, int cols,
                                          const float *row_scale) {
    for (int i = threadIdx.x; i < rows * cols; i += blockDim.x) {
        int r = i / cols, c = i - r * cols;
        float x = r < L ? to_f(src[(size_t)r * ld + c]) : 0.f;
        if (row_scale) x *= row_scale[r];
        dst[i] = from_f<TS>(x);
    }
}

#endif
