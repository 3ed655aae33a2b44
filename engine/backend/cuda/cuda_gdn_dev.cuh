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
 * GRAFT_CUDA_EMU: the same source compiled as host C++ against the CPU
 * emulation of CUDA (cuda_common.cuh), to test the kernels' logic where no GPU
 * exists; the launch, the dynamic shared memory and mma below go through its
 * emu_* hooks (cp.async through cuda_mma.cuh's). */
#ifndef GRAFT_BACKEND_CUDA_GDN_DEV_CUH
#define GRAFT_BACKEND_CUDA_GDN_DEV_CUH

#include <stdint.h>
#include <string.h>

#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/cuda_mma.cuh" /* cp.async, pack_bf16, quad_sum */

#ifdef GRAFT_CUDA_EMU
#define GDN_LAUNCH(kern, grid, block, smem, stream, ...) \
    emu_launch((grid), (block), (smem), [&]() { kern(__VA_ARGS__); })
#else
#define GDN_LAUNCH(kern, grid, block, smem, stream, ...) kern<<<(grid), (block), (smem), (stream)>>>(__VA_ARGS__)
#endif

#define GDN_THREADS 128      /* threads of the chunk kernels: 4 warps */
#define GDN_THREADS_BWD 512  /* the local backward kernel: 16 warps (one block a multiprocessor: its shared memory) */
#define GDN_THREADS_WIDE 256 /* the chunk-parallel WY, output and V' kernels: 8 warps */
#define GDN_MAX_D 128        /* largest dk, dv (multiples of 16) */
#define GDN_MAX_SLAB 32      /* rows of the state a sequential-pass block owns */

/* Dynamic shared memory of the running block. */
__device__ __forceinline__ char *gdn_smem() {
#ifdef GRAFT_CUDA_EMU
    return (char *)emu_dynamic_smem();
#else
    extern __shared__ __align__(16) char gdn_smem_[];
    return gdn_smem_;
#endif
}

/* Carves consecutive 16-byte-aligned arrays out of shared memory (the host
 * computes the same total with a null base). kBlockBase: the base is the
 * running block's shared memory, never null, so on the GPU a pointer is the base
 * plus an offset with no select against null. With that select the compiler lost
 * the pointers' shared address space in the kFix kernels (their offsets fold to
 * constants): every shared access there was a generic load or store (PTX ld / st
 * without .shared) with 64-bit address arithmetic. The general dh pass carves
 * without it (its accesses were shared either way): every other form tried gave
 * that kernel 255 registers at 4 warps (166 as it is) and 144-236 bytes of spill
 * at 8; this one leaves its PTX byte for byte as it was (take and rest each write
 * the select out, as before: through one shared helper it changed too). */
template <bool kBlockBase = false> struct SmemCarveT {
    char *p;
    size_t used;
    __host__ __device__ explicit SmemCarveT(char *base) : p(base), used(0) {}
    template <typename T> __host__ __device__ T *take(size_t n) {
#ifdef __CUDA_ARCH__
        T *r = kBlockBase ? (T *)(p + used) : (T *)(p ? p + used : nullptr);
#else
        T *r = (T *)(p ? p + used : nullptr);
#endif
        used += (n * sizeof(T) + 15) & ~(size_t)15;
        return r;
    }
    /* Overlays: arrays whose lives do not meet share memory. Each set is taken
     * from its own carve begun here (rest()); past(a, b) then moves this carve
     * beyond the larger set. */
    __host__ __device__ SmemCarveT rest() const {
#ifdef __CUDA_ARCH__
        if (kBlockBase) return SmemCarveT(p + used);
#endif
        return SmemCarveT(p ? p + used : nullptr);
    }
    __host__ __device__ void past(const SmemCarveT &a, const SmemCarveT &b) { used += a.used > b.used ? a.used : b.used; }
};

/* How a tile product fetches a view's mma fragments. FRAG_ROW: the view is a
 * row-major tile in shared memory (unit column stride), FRAG_COL: its transpose
 * (unit row stride); bf16 such views go by ldmatrix, which needs each 8-element
 * row piece 16-byte aligned (base 16-aligned, stride a multiple of 8 elements;
 * the tile offsets m0, n0, k0 always are multiples of 8). FRAG_PAIR: element
 * pairs (frag_pair), for any view (fp32, global memory, odd strides). The
 * layout is a compile-time property of the view, so each call's k loop is the
 * one for its operands (no runtime dispatch, one copy of the code). */
enum { FRAG_PAIR = 0, FRAG_ROW = 1, FRAG_COL = 2 };

/* Element (r, c) = p[r * rs + c * cs]; L as above. */
template <typename T, int L = FRAG_PAIR> struct View {
    const T *p;
    int rs, cs;
    /* shared-memory tiles (L set) index in 32 bits: fewer instructions than 64-bit offsets */
    __device__ __forceinline__ float at(int r, int c) const {
        if constexpr (L == FRAG_PAIR)
            return to_f(p[(ptrdiff_t)r * rs + (ptrdiff_t)c * cs]);
        else
            return to_f(p[r * rs + c * cs]);
    }
};
template <typename T> __device__ __forceinline__ View<T> view(const T *p, int rs, int cs) {
    View<T> v;
    v.p = p;
    v.rs = rs;
    v.cs = cs;
    return v;
}
/* A row-major shared-memory tile with row stride ld: (r, c) = p[r ld + c]. */
template <typename T> __device__ __forceinline__ View<T, FRAG_ROW> sm_view(const T *p, int ld) {
    View<T, FRAG_ROW> v;
    v.p = p;
    v.rs = ld;
    v.cs = 1;
    return v;
}
/* The transpose of such a tile: (r, c) = p[c ld + r]. */
template <typename T> __device__ __forceinline__ View<T, FRAG_COL> sm_view_t(const T *p, int ld) {
    View<T, FRAG_COL> v;
    v.p = p;
    v.rs = 1;
    v.cs = ld;
    return v;
}

/* d += a b for one m16n8k16 bf16 tile (fragments in PTX ISA order). */
__device__ __forceinline__ void mma_bf16_16816(float d[4], const uint32_t a[4], const uint32_t b[2]) {
#ifdef GRAFT_CUDA_EMU
    emu_mma_bf16_16816(d, a, b[0], b[1]);
#else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

__device__ __forceinline__ float shfl_xor(float v, int m) { return __shfl_xor_sync(0xffffffffu, v, m); }

__device__ __forceinline__ float warp_sum(float v) {
    for (int m = 16; m >= 1; m >>= 1) v += shfl_xor(v, m);
    return v;
}

/* Raw loads and stores of 2, 4, 8 or 16 bytes (the caller guarantees alignment). */
template <typename V> __device__ __forceinline__ V ld_raw(const void *p) {
#ifdef GRAFT_CUDA_EMU
    V v;
    memcpy(&v, p, sizeof v);
    return v;
#else
    return *reinterpret_cast<const V *>(p);
#endif
}
template <typename V> __device__ __forceinline__ void st_raw(void *p, V v) {
#ifdef GRAFT_CUDA_EMU
    memcpy(p, &v, sizeof v);
#else
    *reinterpret_cast<V *>(p) = v;
#endif
}

/* Row stride (elements) of a shared-memory tile with n columns: 16 bytes of
 * padding, so rows stay 16-byte aligned and the 8 rows a fragment load touches
 * (stride = 4 mod 32 banks for n = 64, 128; conflict-free for 16, 32 too) fall
 * in different banks. */
template <typename T> __host__ __device__ inline int sm_ld(int n) { return n + 16 / (int)sizeof(T); }

/* One mma operand register: elements (r, c) and (r, c + 1) of a view as a bf16
 * pair (low half = column c). A bf16 view with unit column stride is one 32-bit
 * load; otherwise two loads (bf16: the raw halves; fp32: rounded to nearest). */
template <int L> __device__ __forceinline__ uint32_t frag_pair(View<float, L> v, int r, int c) {
    return pack_bf16(v.at(r, c), v.at(r, c + 1));
}
template <int L> __device__ __forceinline__ uint32_t frag_pair(View<bf16, L> v, int r, int c) {
    const bf16 *p = L == FRAG_PAIR ? v.p + (ptrdiff_t)r * v.rs + (ptrdiff_t)c * v.cs : v.p + (r * v.rs + c * v.cs);
    if (v.cs == 1) return ld_raw<uint32_t>(p);
    return (uint32_t)ld_raw<uint16_t>(p) | (uint32_t)ld_raw<uint16_t>(p + v.cs) << 16;
}
/* The same along a column: elements (r, c) and (r + 1, c) (a B operand's k pair). */
template <typename T, int L> __device__ __forceinline__ uint32_t frag_pair_t(View<T, L> v, int r, int c) {
    View<T> t;
    t.p = v.p;
    t.rs = v.cs;
    t.cs = v.rs;
    return frag_pair(t, c, r);
}

/* ldmatrix (cuda_common.cuh), N = 2 or 4 matrices: exactly the mma fragments
 * of the 8 x 8 matrices whose row addresses the lanes give, or of their
 * transposes. */
template <int N, bool kTrans> __device__ __forceinline__ void ldsm(uint32_t *r, const bf16 *row) {
    ldmatrix_sync<N, kTrans>(r, row);
}

/* The A fragment (mma m16n8k16 layout) of A[m0:m0+16, k0:k0+16]. ldmatrix x4:
 * lane l gives row l % 8 of matrix l / 8; matrices (m0, k0), (m0 + 8, k0),
 * (m0, k0 + 8), (m0 + 8, k0 + 8) are the fragment's registers 0..3. */
template <int MODE, typename T, int L> __device__ __forceinline__ void frag_a(uint32_t a[4], View<T, L> A, int m0, int k0) {
    if constexpr (MODE == FRAG_PAIR) {
        int lane = threadIdx.x & 31, g = lane >> 2, ka = k0 + 2 * (lane & 3);
        a[0] = frag_pair(A, m0 + g, ka);
        a[1] = frag_pair(A, m0 + g + 8, ka);
        a[2] = frag_pair(A, m0 + g, ka + 8);
        a[3] = frag_pair(A, m0 + g + 8, ka + 8);
    } else {
        int lane = threadIdx.x & 31, r = lane & 7, dm = 8 * ((lane >> 3) & 1), dk = 8 * (lane >> 4);
        const bf16 *p = (const bf16 *)A.p;
        if constexpr (MODE == FRAG_ROW) /* memory rows are A's rows */
            ldsm<4, false>(a, p + (m0 + dm + r) * A.rs + (k0 + dk));
        else /* memory rows are A's columns: transposed */
            ldsm<4, true>(a, p + (k0 + dk + r) * A.cs + (m0 + dm));
    }
}

/* The B fragments of NB (1 or 2) adjacent 8-column tiles B[k0:k0+16, n0 + 8 s ..]:
 * b[2 s], b[2 s + 1]. ldmatrix x2 (x4 for two tiles): lane l gives row l % 8 of
 * matrix l / 8 = (k half, then tile). */
template <int MODE, int NB, typename T, int L> __device__ __forceinline__ void frag_b(uint32_t *b, View<T, L> B, int k0, int n0) {
    if constexpr (MODE == FRAG_PAIR) {
        int lane = threadIdx.x & 31, g = lane >> 2, ka = k0 + 2 * (lane & 3);
#pragma unroll
        for (int s = 0; s < NB; s++) {
            b[2 * s] = frag_pair_t(B, ka, n0 + 8 * s + g);
            b[2 * s + 1] = frag_pair_t(B, ka + 8, n0 + 8 * s + g);
        }
    } else {
        int lane = threadIdx.x & 31, r = lane & 7, dk = 8 * ((lane >> 3) & 1), dn = NB == 2 ? 8 * (lane >> 4) : 0;
        const bf16 *p = (const bf16 *)B.p;
        if constexpr (MODE == FRAG_COL) /* memory rows are B's columns (k contiguous) */
            ldsm<2 * NB, false>(b, p + (n0 + dn + r) * B.cs + (k0 + dk));
        else /* memory rows are B's rows: transposed */
            ldsm<2 * NB, true>(b, p + (k0 + dk + r) * B.rs + (n0 + dn));
    }
}

/* The lane's ldmatrix row address of frag_a's fragment at k0 = 0 (ldmatrix modes),
 * and how far it moves a k step of 16: the k loops that are not unrolled step
 * these addresses by a constant instead of forming each step's from k0 (an add a
 * step in place of a multiply-add and a shift). The same formulas as frag_a's and
 * frag_b's, kept apart: frag_a and frag_b written on top of these changed the SASS
 * of every GDN kernel (the output, WY, V' and dh-pass kernels' too). */
template <int MODE, typename T, int L> __device__ __forceinline__ const bf16 *frag_a_at(View<T, L> A, int m0, int *step) {
    int lane = threadIdx.x & 31, r = lane & 7, dm = 8 * ((lane >> 3) & 1), dk = 8 * (lane >> 4);
    const bf16 *p = (const bf16 *)A.p;
    if constexpr (MODE == FRAG_ROW) {
        *step = 16;
        return p + (m0 + dm + r) * A.rs + dk;
    } else {
        *step = 16 * A.cs;
        return p + (dk + r) * A.cs + (m0 + dm);
    }
}
/* The same for frag_b's NB tiles at n0. */
template <int MODE, int NB, typename T, int L>
__device__ __forceinline__ const bf16 *frag_b_at(View<T, L> B, int n0, int *step) {
    int lane = threadIdx.x & 31, r = lane & 7, dk = 8 * ((lane >> 3) & 1), dn = NB == 2 ? 8 * (lane >> 4) : 0;
    const bf16 *p = (const bf16 *)B.p;
    if constexpr (MODE == FRAG_COL) {
        *step = 16;
        return p + (n0 + dn + r) * B.cs + dk;
    } else {
        *step = 16 * B.rs;
        return p + (dk + r) * B.rs + (n0 + dn);
    }
}

/* The fragments of one k step (A[m0.., k0:k0+16] once; B[k0:k0+16, ..] of NT
 * 8-column tiles, two at a time when NT is even: b + 2 s holds tile s), and
 * their NT mma (acc[s] += A B_s). */
template <int MA, int MB, int NT, typename TA, int LA, typename TB, int LB>
__device__ __forceinline__ void kstep_load(uint32_t *a, uint32_t *b, View<TA, LA> A, View<TB, LB> B, int m0, int n0,
                                           int k0) {
    frag_a<MA>(a, A, m0, k0);
    constexpr int NB = NT % 2 == 0 ? 2 : 1; /* NT is 1 or even */
#pragma unroll
    for (int s = 0; s < NT; s += NB) frag_b<MB, NB>(b + 2 * s, B, k0, n0 + 8 * s);
}
template <int NT> __device__ __forceinline__ void kstep_mma(float (*acc)[4], const uint32_t *a, const uint32_t *b) {
#pragma unroll
    for (int s = 0; s < NT; s++) mma_bf16_16816(acc[s], a, b + 2 * s);
}

/* The software pipeline of the k loops: step k0 + 16's fragments (NB B
 * registers) are loaded before step k0's mma issue, so a warp waits for shared
 * memory once a loop, not once a step; the sums keep their k order.
 * load(a, b, k0) fetches a step's fragments, mma(a, b) issues its mma. kUnroll
 * as mma_kloop's (0: the compiler's choice). */
template <int NB, int kUnroll, typename Load, typename Mma>
__device__ __forceinline__ void kloop_pipelined(int K, Load load, Mma mma) {
    uint32_t a[4], b[NB], an[4], bn[NB];
    load(a, b, 0);
    auto step = [&](int k0) {
        load(an, bn, k0 + 16);
        mma(a, b);
#pragma unroll
        for (int i = 0; i < 4; i++) a[i] = an[i];
#pragma unroll
        for (int i = 0; i < NB; i++) b[i] = bn[i];
    };
    if constexpr (kUnroll == 0) {
        for (int k0 = 0; k0 + 16 < K; k0 += 16) step(k0);
    } else {
#pragma unroll kUnroll
        for (int k0 = 0; k0 + 16 < K; k0 += 16) step(k0);
    }
    mma(a, b);
}

/* acc[s] += A[m0.., 0:K] B[0:K, n0 + 8 s ..] for s < NT, fragments fetched per
 * MA, MB; K % 16 == 0; pipelined (kloop_pipelined). kUnroll 0: the compiler
 * unrolls the k loop as it likes; 1: the loop as written, one step at a time,
 * not pipelined (the least code and registers); else that many steps. */
template <int MA, int MB, int NT, int kUnroll, typename TA, int LA, typename TB, int LB>
__device__ __forceinline__ void mma_kloop(float (*acc)[4], View<TA, LA> A, View<TB, LB> B, int m0, int n0, int K) {
    if constexpr (kUnroll == 1 && MA != FRAG_PAIR && MB != FRAG_PAIR) {
        /* the least registers (the local kernel spills with the pipeline: 128 a thread); the
         * fragments' addresses stepped by a constant (frag_a_at), the same fragments */
        constexpr int NB = NT % 2 == 0 ? 2 : 1;
        int sa, sb;
        const bf16 *pa = frag_a_at<MA>(A, m0, &sa), *pb = frag_b_at<MB, NB>(B, n0, &sb);
        /* tile s's B rows: pb + s * tb (8 columns a tile) */
        const int tb = MB == FRAG_COL ? 8 * B.cs : 8;
#pragma unroll 1
        for (int k0 = 0; k0 < K; k0 += 16, pa += sa, pb += sb) {
            uint32_t a[4], b[2 * NT];
            ldsm<4, MA == FRAG_COL>(a, pa);
#pragma unroll
            for (int t = 0; t < NT; t += NB) ldsm<2 * NB, MB == FRAG_ROW>(b + 2 * t, pb + t * tb);
            kstep_mma<NT>(acc, a, b);
        }
    } else if constexpr (kUnroll == 1) {
#pragma unroll 1
        for (int k0 = 0; k0 < K; k0 += 16) {
            uint32_t a[4], b[2 * NT];
            kstep_load<MA, MB, NT>(a, b, A, B, m0, n0, k0);
            kstep_mma<NT>(acc, a, b);
        }
    } else {
        kloop_pipelined<2 * NT, kUnroll>(
            K, [&](uint32_t *a, uint32_t *b, int k0) { kstep_load<MA, MB, NT>(a, b, A, B, m0, n0, k0); },
            [&](const uint32_t *a, const uint32_t *b) { kstep_mma<NT>(acc, a, b); });
    }
}

/* The same for G single 8-column tiles at n0, n0 + dn, .., n0 + (G - 1) dn that
 * share the rows m0..m0+15 (one A fragment a step, G independent mma chains):
 * the sequential passes' register slabs, whose tiles a warp owns dn apart. */
template <int MA, int MB, int G, typename TA, int LA, typename TB, int LB>
__device__ __forceinline__ void mma_kloop_strided(float (*acc)[4], View<TA, LA> A, View<TB, LB> B, int m0, int n0,
                                                  int dn, int K) {
    kloop_pipelined<2 * G, 0>(
        K,
        [&](uint32_t *a, uint32_t *b, int k0) {
            frag_a<MA>(a, A, m0, k0);
#pragma unroll
            for (int j = 0; j < G; j++) frag_b<MB, 1>(b + 2 * j, B, k0, n0 + j * dn);
        },
        [&](const uint32_t *a, const uint32_t *b) { kstep_mma<G>(acc, a, b); });
}

/* A view's fragment mode: its layout when it is bf16, else element pairs. */
template <typename T, int L> constexpr int kFragMode = sizeof(T) == 2 ? L : FRAG_PAIR;

/* acc[s] += A[m0.., 0:K] B[0:K, n0 + 8 s ..] for s < NT: one warp's 16 x 8NT tile,
 * each A fragment loaded once for NT mma (kUnroll: mma_kloop). Every fragment mode gives the same
 * fragment bits, so the same sums in the same k order. Without kTC, each lane
 * computes its outputs in fp32 on the CUDA cores, in the same layout. */
template <bool kTC, int NT, int kUnroll = 0, typename TA, int LA, typename TB, int LB>
__device__ __forceinline__ void tile_mma_n(float (*acc)[4], View<TA, LA> A, View<TB, LB> B, int m0, int n0, int K) {
    static_assert(NT == 1 || NT % 2 == 0, "tile_mma_n: NT is 1 or even");
    if constexpr (kTC) {
        mma_kloop<kFragMode<TA, LA>, kFragMode<TB, LB>, NT, kUnroll>(acc, A, B, m0, n0, K);
    } else {
        int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#pragma unroll
        for (int s = 0; s < NT; s++) {
            int n = n0 + 8 * s + 2 * t;
            float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
            for (int k = 0; k < K; k++) {
                float a0 = A.at(m0 + g, k), a1 = A.at(m0 + g + 8, k);
                float b0 = B.at(k, n), b1 = B.at(k, n + 1);
                s0 = fmaf(a0, b0, s0);
                s1 = fmaf(a0, b1, s1);
                s2 = fmaf(a1, b0, s2);
                s3 = fmaf(a1, b1, s3);
            }
            acc[s][0] += s0;
            acc[s][1] += s1;
            acc[s][2] += s2;
            acc[s][3] += s3;
        }
    }
}

/* acc += A[m0.., 0:K] B[0:K, n0..] for this warp's 16x8 tile; K % 16 == 0. */
template <bool kTC, typename TA, int LA, typename TB, int LB>
__device__ __forceinline__ void tile_mma(float acc[4], View<TA, LA> A, View<TB, LB> B, int m0, int n0, int K) {
    tile_mma_n<kTC, 1>((float(*)[4])acc, A, B, m0, n0, K);
}

/* acc[j] += A[m0.., 0:K] B[0:K, n0 + j dn ..] for j < G: G 16x8 tiles of a warp
 * on the same rows (mma_kloop_strided; without kTC, tile by tile in fp32). */
template <bool kTC, int G, typename TA, int LA, typename TB, int LB>
__device__ __forceinline__ void tile_mma_strided(float (*acc)[4], View<TA, LA> A, View<TB, LB> B, int m0, int n0, int dn,
                                                 int K) {
    if constexpr (kTC) {
        mma_kloop_strided<kFragMode<TA, LA>, kFragMode<TB, LB>, G>(acc, A, B, m0, n0, dn, K);
    } else {
#pragma unroll
        for (int j = 0; j < G; j++) tile_mma_n<kTC, 1>(acc + j, A, B, m0, n0 + j * dn, K);
    }
}

/* Stores two adjacent values (an accumulator pair: columns 2t, 2t + 1); bf16 as
 * one 32-bit store (p is at an even element of an even-strided array). */
__device__ __forceinline__ void store_pair(float *p, float a, float b) {
    if (((uintptr_t)p & 7) == 0) {
        st_raw<float2>(p, make_float2(a, b));
    } else {
        p[0] = a;
        p[1] = b;
    }
}
__device__ __forceinline__ void store_pair(bf16 *p, float a, float b) { st_raw<uint32_t>(p, pack_bf16(a, b)); }

/* Stores this lane's accumulator of the tile at (m0, n0) into p[row * ld + col]
 * (pairs of adjacent columns; ld even). */
template <typename T> __device__ __forceinline__ void store_acc(T *p, size_t ld, int m0, int n0, const float acc[4]) {
    int r = m0 + ((threadIdx.x & 31) >> 2), c = n0 + 2 * (threadIdx.x & 3);
    store_pair(p + (size_t)r * ld + c, acc[0], acc[1]);
    store_pair(p + (size_t)(r + 8) * ld + c, acc[2], acc[3]);
}

/* The same for rows below L only (a chunk's rows past the sequence end are not stored). */
template <typename T>
__device__ __forceinline__ void store_acc_rows(T *p, size_t ld, int m0, int n0, const float acc[4], int L) {
    int r = m0 + ((threadIdx.x & 31) >> 2), c = n0 + 2 * (threadIdx.x & 3);
    if (r < L) store_pair(p + (size_t)r * ld + c, acc[0], acc[1]);
    if (r + 8 < L) store_pair(p + (size_t)(r + 8) * ld + c, acc[2], acc[3]);
}

/* Loads two adjacent elements (p at an even element of an even-strided array). */
__device__ __forceinline__ void load_pair(const float *p, float *a, float *b) {
    *a = p[0];
    *b = p[1];
}
__device__ __forceinline__ void load_pair(const bf16 *p, float *a, float *b) {
    uint32_t u = ld_raw<uint32_t>(p), lo = u << 16, hi = u & 0xffff0000u; /* bf16 = the top half of a float */
    memcpy(a, &lo, sizeof lo);
    memcpy(b, &hi, sizeof hi);
}

/* Row and column of accumulator element e (0..3) of this lane in a tile at (m0, n0). */
__device__ __forceinline__ int acc_row(int m0, int e) { return m0 + ((threadIdx.x & 31) >> 2) + (e >> 1) * 8; }
__device__ __forceinline__ int acc_col(int n0, int e) { return n0 + 2 * (threadIdx.x & 3) + (e & 1); }

/* Walks the indices first, first + step, ... of a grid with tn columns as
 * (row q, column r) without a division per step (the kernels' loops over
 * tiles and elements ran an integer division each, a sizeable share of their
 * instructions). */
struct GridStep {
    int q, r, dq, dr, tn;
    __device__ __forceinline__ GridStep(int first, int step, int tn_)
        : q(first / tn_), r(first % tn_), dq(step / tn_), dr(step % tn_), tn(tn_) {}
    __device__ __forceinline__ void next() {
        q += dq;
        r += dr;
        if (r >= tn) {
            r -= tn;
            q++;
        }
    }
};

/* Calls f(m0, n0) for each 16x8 tile of an M x N output this warp owns (tiles are
 * dealt round-robin over the block's warps; the same M, N give the same owner). */
template <typename F> __device__ __forceinline__ void for_tiles(int M, int N, F f) {
    int warp = threadIdx.x >> 5, nw = blockDim.x >> 5, tn = N >> 3, nt = (M >> 4) * tn;
    GridStep at(warp, nw, tn);
    for (int i = warp; i < nt; i += nw, at.next()) f(at.q << 4, at.r << 3);
}

/* for_tiles with 16 x 8NT tiles (N % (8 NT) == 0): f(m0, n0) for each this warp owns. */
template <int NT, typename F> __device__ __forceinline__ void for_tiles_n(int M, int N, F f) {
    int warp = threadIdx.x >> 5, nw = blockDim.x >> 5, tn = N / (8 * NT), nt = (M >> 4) * tn;
    GridStep at(warp, nw, tn);
    for (int i = warp; i < nt; i += nw, at.next()) f(at.q << 4, at.r * 8 * NT);
}

/* Calls f(r, c) for every element of a rows x cols range, dealt over the block's
 * threads in row-major order: f(i / cols, i % cols) for i = threadIdx.x,
 * + blockDim.x, ... (when blockDim.x is a multiple of cols a thread keeps its
 * column: no division per element). */
template <typename F> __device__ __forceinline__ void for_elems(int rows, int cols, F f) {
    const int nb = (int)blockDim.x, tid = (int)threadIdx.x;
    if ((cols & (cols - 1)) == 0 && (nb & (cols - 1)) == 0) { /* cols a power of two dividing nb: shifts */
        const int sh = __ffs(cols) - 1, c = tid & (cols - 1), dr = nb >> sh;
        for (int r = tid >> sh; r < rows; r += dr) f(r, c);
        return;
    }
    if (nb % cols == 0) {
        const int c = tid % cols, dr = nb / cols;
        for (int r = tid / cols; r < rows; r += dr) f(r, c);
        return;
    }
    GridStep at((int)threadIdx.x, nb, cols);
    for (int i = threadIdx.x; i < rows * cols; i += nb, at.next()) f(at.q, at.r);
}

/* x[0:V] = p[0:V] as floats (x: registers after inlining); p aligned to V * sizeof(T) when that is 16 bytes. */
template <typename T, int V> __device__ __forceinline__ void load_vec(float *x, const T *p) {
    if constexpr (V * sizeof(T) == 16 && sizeof(T) == 2) {
        uint4 u = ld_raw<uint4>(p);
        uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
        for (int i = 0; i < 4; i++) { /* bf16 = the top half of a float */
            uint32_t lo = w[i] << 16, hi = w[i] & 0xffff0000u;
            memcpy(&x[2 * i], &lo, 4);
            memcpy(&x[2 * i + 1], &hi, 4);
        }
    } else if constexpr (V * sizeof(T) == 16) {
        float4 f = ld_raw<float4>(p);
        x[0] = f.x, x[1] = f.y, x[2] = f.z, x[3] = f.w;
    } else {
#pragma unroll
        for (int i = 0; i < V; i++) x[i] = to_f(p[i]);
    }
}

/* p[0:V] = x[0:V] rounded to T (nearest even for bf16). */
template <typename T, int V> __device__ __forceinline__ void store_vec(T *p, const float *x) {
    if constexpr (V * sizeof(T) == 16 && sizeof(T) == 2) {
        st_raw<uint4>(p, make_uint4(pack_bf16(x[0], x[1]), pack_bf16(x[2], x[3]), pack_bf16(x[4], x[5]),
                                    pack_bf16(x[6], x[7])));
    } else if constexpr (V * sizeof(T) == 16) {
        st_raw<float4>(p, make_float4(x[0], x[1], x[2], x[3]));
    } else {
#pragma unroll
        for (int i = 0; i < V; i++) p[i] = from_f<T>(x[i]);
    }
}

/* Rows [0, rows) x cols of an fp32 shared tile (row stride lds) into dst[r * ldd + c] as T: 16
 * bytes of dst a store (8 bf16 from two float4 loads, or 4 floats) where dst, ldd, cols and the
 * tile allow it, else one element a store. The same values either way (round to nearest). */
template <typename T>
__device__ __forceinline__ void store_rows_f32(T *dst, size_t ldd, const float *src, int lds, int rows, int cols) {
    constexpr int V = 16 / (int)sizeof(T);
    const bool vec = ((uintptr_t)dst & 15) == 0 && ldd % V == 0 && cols % V == 0 && ((uintptr_t)src & 15) == 0 &&
                     lds % 4 == 0;
    if (!vec) {
        for_elems(rows, cols, [&](int r, int c) { dst[(size_t)r * ldd + c] = from_f<T>(src[r * lds + c]); });
        return;
    }
    for_elems(rows, cols / V, [&](int r, int q) {
        float x[V];
#pragma unroll
        for (int i = 0; i < V; i += 4) load_vec<float, 4>(x + i, src + r * lds + q * V + i);
        store_vec<T, V>(dst + (size_t)r * ldd + q * V, x);
    });
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

/* Per-column partial sums of a tile over its 16 rows: the lanes that hold one
 * column (the same t, gid 0..7) add theirs; lanes 0..3 store
 * part[(m0 / 16) * ldp + column]. All lanes of the warp must call it together. */
__device__ __forceinline__ void tile_col_partials(float *part, int ldp, int m0, int n0, const float v[4]) {
    float c0 = v[0] + v[2], c1 = v[1] + v[3];
    for (int m = 4; m <= 16; m <<= 1) {
        c0 += shfl_xor(c0, m);
        c1 += shfl_xor(c1, m);
    }
    if ((threadIdx.x & 31) < 4) {
        const int col = acc_col(n0, 0);
        part[(m0 >> 4) * ldp + col] = c0;
        part[(m0 >> 4) * ldp + col + 1] = c1;
    }
}

__device__ __forceinline__ void block_sync() { __syncthreads(); }

/* Barrier of the calling warp (all 32 lanes call it): their shared-memory
 * writes before it are visible to each other after it. */
__device__ __forceinline__ void warp_sync() { __syncwarp(); }

/* Asks for the line holding p in L1 (no register, nothing waits on it): the
 * token loops load the next token's rows so while this one is computed. */
__device__ __forceinline__ void gdn_prefetch_l1(const void *p) {
#ifndef GRAFT_CUDA_EMU
    asm volatile("prefetch.global.L1 [%0];\n" ::"l"(p));
#else
    (void)p;
#endif
}

/* Starts copying L rows of `cols` elements (global, row stride lds) into a shared
 * tile of `rows` rows (row stride ldd), zeros beyond L, without conversion; with
 * cp.async when src and the strides allow 16-byte pieces, else with ordinary
 * loads (done at once). The caller commits the group (cp_async_commit); either
 * way: cp_async_wait and a barrier before use. */
template <typename T>
__device__ __forceinline__ void stage_rows(T *dst, int ldd, const T *src, size_t lds, int L, int rows, int cols) {
    constexpr int V = 16 / (int)sizeof(T);
    const bool vec = ((uintptr_t)src & 15) == 0 && (lds * sizeof(T)) % 16 == 0 && cols % V == 0 && ldd % V == 0;
    if (vec) {
        for_elems(rows, cols / V, [&](int r, int p) {
            const int c = p * V;
            cp_async16(dst + (size_t)r * ldd + c, r < L ? src + (size_t)r * lds + c : src, r < L);
        });
        return;
    }
    for_elems(rows, cols, [&](int r, int c) { dst[(size_t)r * ldd + c] = r < L ? src[(size_t)r * lds + c] : from_f<T>(0.f); });
}

#endif
