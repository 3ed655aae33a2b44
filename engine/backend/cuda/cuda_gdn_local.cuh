/* The GDN core backward's local gradients (step 4 of cuda_gdn_core_bwd.cu): the
 * shared tiles' strides and rows, and the phases over C x C tiles that the local
 * kernel (one block a chunk runs every phase) calls between its barriers. */
#ifndef GRAFT_BACKEND_CUDA_GDN_LOCAL_CUH
#define GRAFT_BACKEND_CUDA_GDN_LOCAL_CUH

#include "backend/cuda/cuda_gdn_chunk.cuh"

#define GDN_PART_LD (GDN_MAX_D / 8) /* row partials: one per 8-column tile */

/* Row strides of the local kernel's shared tiles: bf16 operand tiles padded by
 * 16 bytes (sm_ld); fp32 mode (a check, not for speed) keeps the d-wide rows
 * dense. a: every C x C operand tile (A, and dS, dA / G, A^T dA: S2b, Xb, Yb). */
template <typename T> struct LocalLd {
    int k, v, a, fk;
    __host__ __device__ explicit LocalLd(const GdnShape &s) {
        const bool pad = sizeof(T) == 2;
        k = pad ? sm_ld<T>(s.dk) : s.dk;
        v = pad ? sm_ld<T>(s.dv) : s.dv;
        a = sm_ld<T>(s.C);
        fk = pad ? sm_ld<float>(s.dk) : s.dk;
    }
};

/* acc += A (rows of a C-row operand) times a state [dv, dk] (B(k, n) = state[k][n]):
 * in bf16 mode from its bf16 copy in shared memory (staged once per block), in
 * fp32 mode straight from the fp32 state in global memory. */
template <bool kTC, int NT, int kUnroll = 0, typename TA, int LA, typename T, typename TS>
__device__ __forceinline__ void mma_state(float (*acc)[4], View<TA, LA> A, const T *staged, int ld, const TS *state,
                                          int dk, int m0, int n0, int K) {
    if constexpr (kTC)
        tile_mma_n<kTC, NT, kUnroll>(acc, A, sm_view<T>(staged, ld), m0, n0, K);
    else
        tile_mma_n<kTC, NT, kUnroll>(acc, A, view<TS>(state, dk, 1), m0, n0, K);
}

/* Sum of the first n entries of row r of a partials array. */
__device__ __forceinline__ float part_sum(const float *part, int r, int n) {
    float t = 0;
    for (int i = 0; i < n; i++) t += part[r * GDN_PART_LD + i];
    return t;
}

/* Sum of column j's partials over the n 16-row tiles (tile_col_partials, ldp C). */
__device__ __forceinline__ float col_part_sum(const float *cpart, int C, int j, int n) {
    float t = 0;
    for (int i = 0; i < n; i++) t += cpart[i * C + j];
    return t;
}

/* The per-row fp32 sums every local kernel keeps in shared memory (C entries
 * each; the partials as tile_row_partials / tile_col_partials leave them). */
struct LocalRows {
    float *gam, *bet, *dgam, *dbet, *e1, *e2;
    float *part, *part2; /* row partials, C x GDN_PART_LD */
    float *cpart;        /* column partials of a C x C product: (C / 16) x C, a row per 16-row tile */
    template <typename Carve> __host__ __device__ static LocalRows carve(Carve &c, int C) {
        LocalRows r;
        r.gam = c.template take<float>(C);
        r.bet = c.template take<float>(C);
        r.dgam = c.template take<float>(C);
        r.dbet = c.template take<float>(C);
        r.e1 = c.template take<float>(C);
        r.e2 = c.template take<float>(C);
        r.part = c.template take<float>((size_t)C * GDN_PART_LD);
        r.part2 = c.template take<float>((size_t)C * GDN_PART_LD);
        r.cpart = c.template take<float>((size_t)(C / 16) * C);
        return r;
    }
};

/* The phases, on shared tiles (ld: LocalLd). Every k loop stays a plain loop
 * (tile_mma_n's kUnroll 1), as the kernel's instruction cache and registers want
 * (cuda_gdn_core_bwd.cu says what unrolling cost). The caller puts the barriers
 * around them. */
constexpr int kLocalUnroll = 1;

/* a. dS = scale (dO V'^T) o e^(gam_i - gam_j) for i >= j, to S2b (rounded to T:
 * an mma operand); P = dS o Q K^T's row sums to r.part2 and column sums to
 * r.cpart as partials (dgam gains the first, loses the second). */
template <typename T>
__device__ __forceinline__ void local_ds_pass(const GdnShape &s, const LocalLd<T> &ld, const T *Q, const T *K,
                                              const T *dO, const T *Vp, T *S2b, const LocalRows &r) {
    constexpr bool kTC = sizeof(T) == 2;
    const int C = s.C;
    const float scale = s.scale;
    for_tiles_n<2>(C, C, [&](int m0, int n1) {
        float a1[2][4] = {}, a2[2][4] = {};
        tile_mma_n<kTC, 2, kLocalUnroll>(a1, sm_view<T>(Q, ld.k), sm_view_t<T>(K, ld.k), m0, n1, s.dk);
        tile_mma_n<kTC, 2, kLocalUnroll>(a2, sm_view<T>(dO, ld.v), sm_view_t<T>(Vp, ld.v), m0, n1, s.dv);
        for (int sb = 0; sb < 2; sb++) {
            float p[4];
            for (int e = 0; e < 4; e++) {
                int i = acc_row(m0, e), j = acc_col(n1 + 8 * sb, e);
                const float d = j <= i ? scale * a2[sb][e] * exp_approx(r.gam[i] - r.gam[j]) : 0.f;
                p[e] = d * a1[sb][e];
                S2b[i * ld.a + j] = from_f<T>(d);
            }
            tile_row_partials(r.part2, GDN_PART_LD, m0, n1 + 8 * sb, p);
            tile_col_partials(r.cpart, C, m0, n1 + 8 * sb, p);
        }
    });
}

/* c. dA = dW K~^T + dV' B~^T on the lower part, to Xb (rounded to T):
 * beta_j (e^gam_j (dW K^T)_ij + (dV' V^T)_ij) for j <= i, else 0. */
template <typename T>
__device__ __forceinline__ void local_da_pass(const GdnShape &s, const LocalLd<T> &ld, const T *dW, const T *K,
                                              const T *dVp, const T *V, T *Xb, const LocalRows &r) {
    constexpr bool kTC = sizeof(T) == 2;
    for_tiles_n<2>(s.C, s.C, [&](int m0, int n1) {
        float a1[2][4] = {}, a2[2][4] = {};
        tile_mma_n<kTC, 2, kLocalUnroll>(a1, sm_view<T>(dW, ld.k), sm_view_t<T>(K, ld.k), m0, n1, s.dk);
        tile_mma_n<kTC, 2, kLocalUnroll>(a2, sm_view<T>(dVp, ld.v), sm_view_t<T>(V, ld.v), m0, n1, s.dv);
        for (int sb = 0; sb < 2; sb++)
            for (int e = 0; e < 4; e++) {
                int i = acc_row(m0, e), j = acc_col(n1 + 8 * sb, e);
                Xb[i * ld.a + j] = from_f<T>(j <= i ? r.bet[j] * (exp_approx(r.gam[j]) * a1[sb][e] + a2[sb][e]) : 0.f);
            }
    });
}

/* e. dM = -A^T dA A^T on the strict lower part, like every other product of the
 * chunk: on the tensor cores in bf16 mode (operands rounded to bf16, fp32
 * accumulation: relative error ~2^-8 per product, well inside the bf16 mode's
 * 3e-2), exact fp32 in fp32 mode. Its first product: Yb = A^T dA (rounded to T). */
template <typename T>
__device__ __forceinline__ void local_atda_pass(const GdnShape &s, const LocalLd<T> &ld, const T *A, const T *Xb,
                                                T *Yb) {
    constexpr bool kTC = sizeof(T) == 2;
    for_tiles_n<2>(s.C, s.C, [&](int m0, int n1) {
        float acc2[2][4] = {};
        tile_mma_n<kTC, 2, kLocalUnroll>(acc2, sm_view_t<T>(A, ld.a), sm_view<T>(Xb, ld.a), m0, n1, s.C);
        for (int sb = 0; sb < 2; sb++)
            for (int e = 0; e < 4; e++) Yb[acc_row(m0, e) * ld.a + acc_col(n1 + 8 * sb, e)] = from_f<T>(acc2[sb][e]);
    });
}

/* e (its second product) and f in one pass over the C x C tiles: dM = -(A^T dA)
 * A^T on the strict lower part, and M = beta_i e^(gam_i - gam_j) K K^T of the
 * same tile: G = dM o (beta_i e^..) -> Xb (an mma operand), F = dM o e^.. o K K^T,
 * whose row sums (to r.part) and beta-weighted column sums (to r.cpart) are
 * taken as partials from the accumulators. Xb (dA) must be dead. */
template <typename T>
__device__ __forceinline__ void local_dm_pass(const GdnShape &s, const LocalLd<T> &ld, const T *Yb, const T *A,
                                              const T *K, T *Xb, const LocalRows &r) {
    constexpr bool kTC = sizeof(T) == 2;
    for_tiles_n<2>(s.C, s.C, [&](int m0, int n1) {
        float dm2[2][4] = {}, kk[2][4] = {};
        tile_mma_n<kTC, 2, kLocalUnroll>(dm2, sm_view<T>(Yb, ld.a), sm_view_t<T>(A, ld.a), m0, n1, s.C);
        tile_mma_n<kTC, 2, kLocalUnroll>(kk, sm_view<T>(K, ld.k), sm_view_t<T>(K, ld.k), m0, n1, s.dk);
        for (int sb = 0; sb < 2; sb++) {
            float fr[4], fc[4];
            for (int e = 0; e < 4; e++) {
                int i = acc_row(m0, e), j = acc_col(n1 + 8 * sb, e);
                float f = 0, gg = 0;
                if (i > j) {
                    float dm = -dm2[sb][e], mc = exp_approx(r.gam[i] - r.gam[j]);
                    f = dm * mc * kk[sb][e];
                    gg = dm * r.bet[i] * mc;
                }
                fr[e] = f;
                fc[e] = r.bet[i] * f;
                Xb[i * ld.a + j] = from_f<T>(gg); /* G: only an mma operand */
            }
            tile_row_partials(r.part, GDN_PART_LD, m0, n1 + 8 * sb, fr);
            tile_col_partials(r.cpart, s.C, m0, n1 + 8 * sb, fc);
        }
    });
}

/* After local_ds_pass and a barrier: e1 = P's row sums, e2 = its column sums
 * (threads C .. 2 C - 1; the block has at least 2 C). */
__device__ __forceinline__ void local_ds_sums(int C, const LocalRows &r) {
    const int tid = threadIdx.x;
    if (tid < C) r.e1[tid] = part_sum(r.part2, tid, C / 8);
    else if (tid < 2 * C) r.e2[tid - C] = col_part_sum(r.cpart, C, tid - C, C / 16);
}

/* After local_dm_pass and a barrier: F's row sums into dbeta and dgam, its
 * column sums to e2 (dgam loses them once e2 is read after another barrier). */
__device__ __forceinline__ void local_dm_sums(int C, const LocalRows &r) {
    const int tid = threadIdx.x;
    if (tid < C) {
        float t = part_sum(r.part, tid, C / 8);
        r.dbet[tid] += t;
        r.dgam[tid] += r.bet[tid] * t;
    } else if (tid < 2 * C) {
        r.e2[tid - C] = col_part_sum(r.cpart, C, tid - C, C / 16);
    }
}

/* g. The chunk's dg_j = sum_{i >= j} dgam_i and dbeta (token-major) from r; every row of r
 * final (after the caller's barrier), r.dgam overwritten (its last use). Lane 0 of warp 0 forms
 * the suffix sums from the last row down, as a serial loop would (the same sums, the same bits),
 * in registers 16 rows a round (four 16-byte loads and stores: chunk_gates' way), into r.dgam;
 * then the warp writes both outputs, a row a lane. The block's other warps are done. One thread
 * doing the whole scan with two global stores a row was ~8 % of the local backward's stall
 * samples (Nsight Compute on an H100, B 16 x T 2048: docs/cuda-gdn.md, "Where the local
 * backward's time goes"), all of it while the block, one a multiprocessor, held its slot. */
__device__ __forceinline__ void local_write_dg(const GdnShape &s, int b, int h, int c, const LocalRows &r, float *dg,
                                               float *dbeta) {
    if (threadIdx.x >= 32) return;
    const int L = s.rows(c);
    if (threadIdx.x == 0) {
        float run = 0.f;
        for (int i0 = s.C - 16; i0 >= 0; i0 -= 16) { /* C is a multiple of 16 */
            float4 v[4];
#pragma unroll
            for (int q = 0; q < 4; q++) v[q] = ld_raw<float4>(r.dgam + i0 + 4 * q);
#pragma unroll
            for (int q = 3; q >= 0; q--) { /* rows past L (a short last chunk) are skipped, as before */
                const int i = i0 + 4 * q;
                if (i + 3 < L) v[q].w = run += v[q].w;
                if (i + 2 < L) v[q].z = run += v[q].z;
                if (i + 1 < L) v[q].y = run += v[q].y;
                if (i < L) v[q].x = run += v[q].x;
            }
#pragma unroll
            for (int q = 0; q < 4; q++) st_raw<float4>(r.dgam + i0 + 4 * q, v[q]);
        }
    }
    warp_sync();
    for (int i = threadIdx.x; i < L; i += 32) {
        const size_t it = s.tok(b, c * s.C + i, h);
        dg[it] = r.dgam[i];
        dbeta[it] = r.dbet[i];
    }
}

#endif
