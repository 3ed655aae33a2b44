/* The chunk-local pieces shared by the GDN core's forward (cuda_gdn_core.cu)
 * and backward (cuda_gdn_core_bwd.cu): the shape, the scratch layout and the
 * WY kernel (per chunk, all chunks in parallel). docs/cuda-gdn.md has the plan. */
#ifndef GRAFT_BACKEND_CUDA_GDN_CHUNK_CUH
#define GRAFT_BACKEND_CUDA_GDN_CHUNK_CUH

#include "backend/cuda/cuda_gdn_dev.cuh"

/* One core call's shape as the kernels see it. Token-major inputs: row t of head
 * h in sequence b starts at ((b T + t) H + h) d. */
struct GdnShape {
    int B, T, H, dk, dv, C, NC;
    int BV; /* rows of the state a sequential-pass block owns (gdn_slab) */
    float scale;
    __host__ __device__ size_t bhc(int b, int h, int c) const { return ((size_t)b * H + h) * NC + c; }
    __host__ __device__ size_t tok(int b, int t, int h) const { return ((size_t)b * T + t) * H + h; }
    __host__ __device__ int rows(int c) const { return T - c * C < C ? T - c * C : C; }
};

/* Scratch of one call (device memory, chunk-major per (b, h); C rows per chunk,
 * rows past the sequence end hold zeros):
 *   gam [B, H, NC, C] F32: cumulative log decay inside the chunk (padded rows repeat the last)
 *   W   [B, H, NC, C, dk] ACT: A (beta exp(gam) K)
 *   U   [B, H, NC, C, dv] ACT: A (beta V); the forward's state pass turns it into V' in place
 *   A   [B, H, NC, C, C] ACT: (I + M)^-1 (backward only; bf16 mode: the bits its mma would round it to)
 *   states [B, H, NC, dv, dk] F32: the state entering each chunk (= ckpt when the caller wants it) */

/* WY kernel: grid (NC, H, B), GDN_THREADS_WIDE threads (>= C). Per chunk: gam, M = strict
 * lower beta_i exp(gam_i - gam_j) k_i.k_j, A = (I + M)^-1 by forward substitution
 * (fp32, one column per thread), W = A diag(beta e^gam) K, U = A diag(beta) V. */
template <typename T> struct WySmem {
    T *K, *V, *MA, *A2;
    float *M, *A, *gam, *bet;
    __host__ __device__ static WySmem carve(char *base, const GdnShape &s, size_t *bytes) {
        SmemCarve c(base);
        WySmem m;
        m.K = c.take<T>((size_t)s.C * sm_ld<T>(s.dk));
        m.V = c.take<T>((size_t)s.C * sm_ld<T>(s.dv));
        /* M (fp32, the substitution's input) is dead once A is known: A diag(beta
         * e^gam) and A diag(beta), the W and U products' operands, take its place
         * (69 KB at C 64, d 128 in bf16: three blocks a multiprocessor) */
        SmemCarve mm(c.p ? c.p + c.used : nullptr), ops(c.p ? c.p + c.used : nullptr);
        m.M = mm.take<float>((size_t)s.C * s.C);
        m.MA = ops.take<T>((size_t)s.C * sm_ld<T>(s.C));
        m.A2 = ops.take<T>((size_t)s.C * sm_ld<T>(s.C));
        c.take<char>(mm.used > ops.used ? mm.used : ops.used);
        m.A = c.take<float>((size_t)s.C * s.C);
        m.gam = c.take<float>(s.C);
        m.bet = c.take<float>(s.C);
        if (bytes) *bytes = c.used;
        return m;
    }
};

/* Cumulative g of chunk rows (padded rows repeat the last) and beta (0 when
 * padded). A thread per row loads g and beta (one memory latency, not C of
 * them); then thread 0 adds them up in row order, as before (the sums are
 * bitwise those of a sequential loop). Contains a barrier: every thread calls
 * it; gam is final after the caller's next barrier. */
__device__ __forceinline__ void chunk_gates(float *gam, float *bet, const float *g, const float *beta,
                                            const GdnShape &s, int b, int h, int c) {
    const int L = s.rows(c);
    for (int i = threadIdx.x; i < s.C; i += blockDim.x) {
        gam[i] = i < L ? g[s.tok(b, c * s.C + i, h)] : 0.f;
        if (bet) bet[i] = i < L ? beta[s.tok(b, c * s.C + i, h)] : 0.f;
    }
    block_sync();
    if (threadIdx.x == 0) {
        float run = 0;
        for (int i = 0; i < s.C; i++) {
            run += gam[i];
            gam[i] = run;
        }
    }
}

/* Shared tiles are bf16 (fp32 in fp32 mode) with padded rows (sm_ld): each
 * operand is read from global memory once, 16 bytes a thread, and fragments
 * are 32-bit conflict-free shared loads. Operands that exist only to feed an
 * mma (MA, A2) are stored already rounded: the same bits as rounding at the
 * fragment load. */
template <typename T>
__global__ void __launch_bounds__(GDN_THREADS_WIDE) gdn_wy_kernel(GdnShape s, const T *__restrict__ k, const T *__restrict__ v,
                                                             const float *__restrict__ g, const float *__restrict__ beta,
                                                             T *__restrict__ W, T *__restrict__ U, float *__restrict__ gam_out,
                                                             T *__restrict__ A_out) {
    constexpr bool kTC = sizeof(T) == 2;
    int c = blockIdx.x, h = blockIdx.y, b = blockIdx.z, C = s.C, dk = s.dk, dv = s.dv;
    int L = s.rows(c);
    const int ldk = sm_ld<T>(dk), ldv = sm_ld<T>(dv), ldc = sm_ld<T>(C);
    WySmem<T> sm = WySmem<T>::carve(gdn_smem(), s, nullptr);
    size_t bhc = s.bhc(b, h, c);
    stage_rows(sm.K, ldk, k + s.tok(b, c * C, h) * dk, (size_t)s.H * dk, L, C, dk);
    stage_rows(sm.V, ldv, v + s.tok(b, c * C, h) * dv, (size_t)s.H * dv, L, C, dv);
    gdn_cp_commit();
    chunk_gates(sm.gam, sm.bet, g, beta, s, b, h, c); /* its loads overlap the copies */
    gdn_cp_wait_all();
    block_sync();
    /* M[i][j] = beta_i exp(gam_i - gam_j) k_i.k_j for j < i, else 0 */
    for_tiles_n<2>(C, C, [&](int m0, int n1) {
        float acc2[2][4] = {};
        tile_mma_n<kTC, 2>(acc2, sm_view<T>(sm.K, ldk), sm_view_t<T>(sm.K, ldk), m0, n1, dk);
        for (int sb = 0; sb < 2; sb++) {
            int n0 = n1 + 8 * sb;
            float *acc = acc2[sb];
            for (int e = 0; e < 4; e++) {
                int i = acc_row(m0, e), j = acc_col(n0, e);
                sm.M[i * C + j] = j < i ? sm.bet[i] * gdn_exp(sm.gam[i] - sm.gam[j]) * acc[e] : 0.f;
            }
        }
    });
    block_sync();
    /* A = (I + M)^-1: column j solves (I + M) x = e_j; rows in order, the same
     * M element read by every thread at each step (a broadcast). Four partial
     * sums (fixed order) so the dot product is not one chain of dependent FMAs. */
    if ((int)threadIdx.x < C) {
        int j = threadIdx.x;
        for (int i = 0; i < C; i++) {
            const float *Mi = sm.M + i * C;
            float a0 = 0, a1 = 0, a2 = 0, a3 = 0;
            int l = j;
            for (; l + 3 < i; l += 4) {
                a0 = fmaf(Mi[l], sm.A[l * C + j], a0);
                a1 = fmaf(Mi[l + 1], sm.A[(l + 1) * C + j], a1);
                a2 = fmaf(Mi[l + 2], sm.A[(l + 2) * C + j], a2);
                a3 = fmaf(Mi[l + 3], sm.A[(l + 3) * C + j], a3);
            }
            for (; l < i; l++) a0 = fmaf(Mi[l], sm.A[l * C + j], a0);
            float acc = (a0 + a1) + (a2 + a3);
            sm.A[i * C + j] = i > j ? -acc : (i == j ? 1.f : 0.f);
        }
    }
    block_sync();
    for (int e = threadIdx.x; e < C * C; e += blockDim.x) {
        int i = e / C, j = e - i * C;
        float a = sm.A[e];
        sm.MA[i * ldc + j] = from_f<T>(a * sm.bet[j] * gdn_exp(sm.gam[j]));
        sm.A2[i * ldc + j] = from_f<T>(a * sm.bet[j]);
        if (A_out) A_out[bhc * C * C + e] = from_f<T>(a); /* the backward uses A only as an mma operand */
    }
    for (int i = threadIdx.x; i < C; i += blockDim.x) gam_out[bhc * C + i] = sm.gam[i];
    block_sync();
    T *Wc = W + bhc * C * dk, *Uc = U + bhc * C * dv;
    for_tiles_n<2>(C, dk, [&](int m0, int n1) {
        float acc2[2][4] = {};
        tile_mma_n<kTC, 2>(acc2, sm_view<T>(sm.MA, ldc), sm_view<T>(sm.K, ldk), m0, n1, C);
        for (int sb = 0; sb < 2; sb++) {
            int n0 = n1 + 8 * sb;
            float *acc = acc2[sb];
            store_acc(Wc, dk, m0, n0, acc);
        }
    });
    for_tiles_n<2>(C, dv, [&](int m0, int n1) {
        float acc2[2][4] = {};
        tile_mma_n<kTC, 2>(acc2, sm_view<T>(sm.A2, ldc), sm_view<T>(sm.V, ldv), m0, n1, C);
        for (int sb = 0; sb < 2; sb++) {
            int n0 = n1 + 8 * sb;
            float *acc = acc2[sb];
            store_acc(Uc, dv, m0, n0, acc);
        }
    });
}

/* Checks a core call's shape (sizes, head dims, chunk) and fills the kernels' one;
 * false with the sticky error set. */
bool gdn_core_args(gf_backend *be, GdnShape *gs, const gf_gdn_shape *s, const char *op);

/* Rows of the state one sequential-pass block owns: 32 when dv allows, else 16;
 * GRAFT_GDN_SLAB=16 asks for 16 (more blocks in the sequential passes, each with
 * fewer tiles: for the benchmarks that compare the two). */
int gdn_slab(int dv);

/* The state slab [BV, dk] a sequential-pass block keeps in registers, as the
 * accumulators of its warps' tiles: at most (32/16) (128/8) / 4 = 8 tiles a warp. */
#define GDN_SLAB_TILES 8

/* Stores the register slab into smem [BV][ld] as T (the mma operand copy) and,
 * when dst is set, to global rows of length dk at dst (F32 or T), tile by tile. */
template <typename T, typename TD>
__device__ __forceinline__ void slab_store(float (*acc)[4], T *sm, int ld, TD *dst, int BV, int dk) {
    int warp = threadIdx.x >> 5, nw = blockDim.x >> 5, tn = dk >> 3, nt = (BV >> 4) * tn;
    GridStep ts(warp, nw, tn); /* tile i = warp + u nw is (ts.q, ts.r) */
#pragma unroll
    for (int u = 0; u < GDN_SLAB_TILES; u++, ts.next()) {
        int i = warp + u * nw;
        if (i < nt) {
            int m0 = ts.q << 4, n0 = ts.r << 3;
            store_acc(sm, ld, m0, n0, acc[u]);
            if (dst) store_acc(dst, dk, m0, n0, acc[u]);
        }
    }
}

#endif
