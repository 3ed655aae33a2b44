/* The chunk-local pieces shared by the GDN core's forward (cuda_gdn_core.cu)
 * and backward (cuda_gdn_core_bwd.cu): the shape, the scratch layout and the
 * WY kernel (per chunk, all chunks in parallel). docs/cuda-gdn.md has the plan. */
#ifndef GRAFT_BACKEND_CUDA_GDN_CHUNK_CUH
#define GRAFT_BACKEND_CUDA_GDN_CHUNK_CUH

#include "backend/cuda/cuda_gdn_dev.cuh"
#include "backend/cuda/cuda_gdn_pad.cuh"

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

/* The shape nearly every call has (chunk 64, dk = dv = 128: the GDN heads of
 * the teachers graft converts) as compile-time constants: a kernel instantiated
 * with kFix sets them in its copy of the shape first, so every loop bound,
 * stride and tile count below folds (these kernels are bound by issue and
 * latency, and their index arithmetic was a quarter of the instructions). The
 * host launches kFix only where gdn_fixed() holds; other shapes take kFix = false.
 * A sequential pass (kWarps > 0) also fixes its slab height: gdn_state_warps
 * gives 16-row slabs 4 warps and 32-row slabs 8. */
__host__ __device__ inline bool gdn_fixed(const GdnShape &s) { return s.C == 64 && s.dk == 128 && s.dv == 128; }
template <bool kFix, int kWarps = 0> __device__ __forceinline__ void gdn_fix_shape(GdnShape &s) {
    if constexpr (kFix) {
        s.C = 64;
        s.dk = 128;
        s.dv = 128;
        if constexpr (kWarps > 0) s.BV = 4 * kWarps;
    }
}

/* Output tiles of the chunk-parallel kernels' products, 16 x 8 kGdnTileN a warp: in the kFix forms
 * of the local backward (its C x d products), the WY and the output kernels (C x d and C x C) one
 * 16 x 32 tile, four independent accumulator chains a k loop, where two 16 x 16 tiles one after
 * the other gave two (docs/cuda-gdn.md); other head dims need only be multiples of 16. */
template <bool kFix> constexpr int kGdnTileN = kFix ? 4 : 2;

/* Whether a bf16 call takes the kFix kernels: its shape is that one, and no
 * check asked for the general kernels (gf_backend_variants.gdn_general). */
static inline bool gdn_use_fixed(gf_backend *be, const GdnShape &s) { return gdn_fixed(s) && !cuda_of(be)->gdn.general; }

/* Scratch of one call (device memory, chunk-major per (b, h); C rows per chunk,
 * rows past the sequence end hold zeros):
 *   gam [B, H, NC, C] F32: cumulative log decay inside the chunk (padded rows repeat the last)
 *   W   [B, H, NC, C, dk] ACT: A (beta exp(gam) K)
 *   U   [B, H, NC, C, dv] ACT: A (beta V); the forward's state pass turns it into V' in place
 *   A   [B, H, NC, C, C] ACT: (I + M)^-1 (backward only; bf16 mode: the bits its mma would round it to)
 *   states [B, H, NC, dv, dk] ACT: the state entering each chunk (= ckpt when the caller wants it),
 *          rounded to ACT as every kernel that reads it uses it (an mma operand; the dh pass's
 *          dgam_L term sums it in fp32 from there): the state pass itself carries it in fp32
 * A checkpoint with keep_wy holds gam, W, U (V' by then) and A after its states
 * (gf_gdn_ckpt_floats): the forward writes them there instead of to scratch,
 * and the backward starts from them. */

/* Below this many tokens a call runs token by token (decode, short prefill pieces);
 * gf_gdn_shape.recurrent asks for that form at any length. */
#define GDN_RECURRENT_MAX_T 15

/* Whether this call's checkpoint holds the WY products: asked for (keep_wy), and
 * the call runs the chunked kernels at the shape it was given. The recurrent
 * forward and the padded copies (cuda_gdn_pad.cu) keep none, and their backward
 * computes them as before; a layer's forward and backward see the same shape,
 * so the two agree. */
static inline bool gdn_wy_kept(const gf_gdn_shape *s, gf_buf ckpt) {
    return s->keep_wy && !gf_is_none(ckpt) && !s->recurrent && s->T > GDN_RECURRENT_MAX_T && !gdn_needs_pad(s);
}

/* The kept WY products' arrays inside a checkpoint (gf_gdn_ckpt_floats' layout). */
template <typename T> struct KeptWy {
    float *gam;
    T *W, *U, *A; /* U: V' once the forward's state pass has run */
    static KeptWy at(float *ckpt, const GdnShape &s) {
        const size_t nbhc = (size_t)s.B * s.H * s.NC;
        KeptWy k;
        k.gam = ckpt + nbhc * s.dv * s.dk * sizeof(T) / sizeof(float); /* dv dk is a multiple of 256 here */
        k.W = (T *)(k.gam + nbhc * s.C);
        k.U = k.W + nbhc * s.C * s.dk;
        k.A = k.U + nbhc * s.C * s.dv;
        return k;
    }
};

/* WY kernel: grid (NC, H, B), GDN_THREADS_WIDE threads (8 warps, >= C). Per chunk: gam, M =
 * strict lower beta_i exp(gam_i - gam_j) k_i.k_j, A = (I + M)^-1 in fp32 by 16x16 blocks (the
 * diagonal blocks by substitution, then the block subdiagonals one stage each, every warp a
 * share), W = A diag(beta e^gam) K, U = A diag(beta) V. */

/* Row stride (floats) of M: = 8 mod 32 banks, so the M fill's pair stores (rows g, columns
 * 2t of an mma accumulator) and the inverse's 16-byte row loads are conflict-free; the
 * rows stay 16-byte aligned. M shares its space with the MA, A2 operands (bf16 rows of
 * sm_ld(C) = C + 8: the same bytes), so the padding costs no shared memory. */
__host__ __device__ inline int wy_ldm(int C) { return C + 8; }

template <typename T> struct WySmem {
    T *K, *V, *MA, *A2;
    float *M, *A, *gam, *bet;
    template <bool kBlockBase = false> __host__ __device__ static WySmem carve(char *base, const GdnShape &s, size_t *bytes) {
        SmemCarveT<kBlockBase> c(base);
        WySmem m;
        m.K = c.template take<T>((size_t)s.C * sm_ld<T>(s.dk));
        m.V = c.template take<T>((size_t)s.C * sm_ld<T>(s.dv));
        /* M (fp32, the inverse's input) is dead once A is known: A diag(beta
         * e^gam) and A diag(beta), the W and U products' operands, take its place
         * (68.5 KB at C 64, d 128 in bf16: three blocks a multiprocessor) */
        SmemCarveT<kBlockBase> mm = c.rest(), ops = c.rest();
        m.M = mm.template take<float>((size_t)s.C * wy_ldm(s.C));
        m.MA = ops.template take<T>((size_t)s.C * sm_ld<T>(s.C));
        m.A2 = ops.template take<T>((size_t)s.C * sm_ld<T>(s.C));
        c.past(mm, ops);
        /* A: row stride C, the carve stays at 68.5 KB (C + 4 would cost 1 KB to
         * remove a 2-way conflict on the diagonal blocks' row loads and the
         * 4-to-8-way one on the inverse's few S stores: a dozen wavefronts a stage) */
        m.A = c.template take<float>((size_t)s.C * s.C);
        m.gam = c.template take<float>(s.C);
        m.bet = c.template take<float>(s.C);
        if (bytes) *bytes = c.used;
        return m;
    }
};

/* Cumulative g of chunk rows (padded rows repeat the last: g = 0 there) and
 * beta (0 when padded). Warp 0 stages g (a lane per row: one memory latency);
 * then lane 0 adds it up in row order in registers, 16 rows a round (four
 * 16-byte loads, 16 dependent adds, four stores) instead of C dependent
 * shared-memory round trips. The sums stay bitwise those of a sequential loop:
 * a parallel scan (tried: a shuffle butterfly) rounds differently and, in the
 * emulated fp32 checks (seeds 7, 42), left the core's errors typically 1.2-1.5x
 * and at most 4x larger (still ~1e-6), likely because the decays e^(gam_i - gam_j)
 * lose the sequential sums' shared rounding history.
 * No block barrier inside; gam and bet are final after the caller's next barrier. */
__device__ __forceinline__ void chunk_gates(float *gam, float *bet, const float *g, const float *beta,
                                            const GdnShape &s, int b, int h, int c) {
    const int L = s.rows(c);
    if (bet)
        for (int i = threadIdx.x; i < s.C; i += blockDim.x) bet[i] = i < L ? beta[s.tok(b, c * s.C + i, h)] : 0.f;
    if (threadIdx.x >= 32) return;
    for (int i = threadIdx.x; i < s.C; i += 32) gam[i] = i < L ? g[s.tok(b, c * s.C + i, h)] : 0.f;
    warp_sync();
    if (threadIdx.x != 0) return;
    float run = 0.f;
    for (int i0 = 0; i0 < s.C; i0 += 16) { /* C is a multiple of 16 */
        float4 v[4];
#pragma unroll
        for (int q = 0; q < 4; q++) v[q] = ld_raw<float4>(gam + i0 + 4 * q);
#pragma unroll
        for (int q = 0; q < 4; q++) {
            v[q].x = run += v[q].x;
            v[q].y = run += v[q].y;
            v[q].z = run += v[q].z;
            v[q].w = run += v[q].w;
        }
#pragma unroll
        for (int q = 0; q < 4; q++) st_raw<float4>(gam + i0 + 4 * q, v[q]);
    }
}

/* A = (I + M)^-1 for the C x C strict lower M (row stride ldm), into A (row stride lda), by
 * 16 x 16 blocks: A_ii = (I + M_ii)^-1 and, for i > j, A_ij = -A_ii sum_{k=j}^{i-1} M_ik A_kj.
 * Everything in fp32 FMAs, every sum in ascending k (fixed order, no atomics).
 *
 * Stage 0 (wy_inverse_diagonal): the C / 16 diagonal blocks, a thread per column (threads
 * below C: 2 warps at C 64), forward substitution in registers, 16 rows, M rows read as
 * 16-byte broadcasts. Stage s = 1 .. C/16 - 1 (wy_inverse_subdiagonal): the blocks A_{j+s,j}
 * of the s-th block subdiagonal, which need only M and the blocks of lower stages; a warp per
 * 16 x 8 half-block (2 (C/16 - s) of them: 6, 4, 2 at C 64), first S = sum_k M_ik A_kj
 * (16 s deep), staged in A_ij's place, then A_ij = -A_ii S (16 deep). The caller puts a
 * barrier after each stage. Blocks above the diagonal are never written (read them as zero). */

/* Stage 0: thread t < C inverts column t % 16 of diagonal block t / 16. Column j of a unit
 * lower block: x_r = 0 (r < j), 1 (r = j), -sum_{l<r} M_rl x_l (r > j); the sum runs over
 * every l < r (the terms below j are exact zeros) so all lanes of a block share each load. */
__device__ __forceinline__ void wy_inverse_diagonal(float *A, int lda, const float *M, int ldm, int C) {
    const int t = threadIdx.x;
    if (t >= C) return;
    const int d = t & ~15, j = t & 15; /* the block's first row and column; the column in it */
    const float *Md = M + (size_t)d * ldm + d;
    float *Ad = A + (size_t)d * lda + d;
    float x[16];
#pragma unroll
    for (int r = 0; r < 16; r++) {
        float acc = 0.f; /* -(sum) as a chain of FMAs with -M: negation is exact */
#pragma unroll
        for (int l0 = 0; l0 < r; l0 += 4) {
            const float4 m4 = ld_raw<float4>(Md + (size_t)r * ldm + l0);
            const float m[4] = {m4.x, m4.y, m4.z, m4.w};
#pragma unroll
            for (int u = 0; u < 4; u++)
                if (l0 + u < r) acc = fmaf(-m[u], x[l0 + u], acc);
        }
        x[r] = r == j ? 1.f : (r < j ? 0.f : acc);
    }
    /* stored after the loop: no store between the loads lets them all be issued early */
#pragma unroll
    for (int r = 0; r < 16; r++) Ad[(size_t)r * lda + j] = x[r];
}

/* out[0..3] (rows g, g + 8; columns 2t, 2t + 1 of a 16 x 8 tile, the mma accumulator layout)
 * += P[rows, 0:K] Q[0:K, 2t..2t+1]; P rows read 4 k at a time (16-byte loads: P, its stride
 * and K multiples of 4 floats), Q rows as pairs (broadcast over g). Ascending k, one chain
 * per output. */
__device__ __forceinline__ void wy_tile_fma(float out[4], const float *P, int ldp, const float *Q, int ldq, int K) {
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    const float *p0 = P + (size_t)g * ldp, *p1 = P + (size_t)(g + 8) * ldp;
    const float *q = Q + 2 * t;
    for (int k0 = 0; k0 < K; k0 += 4) {
        const float4 a4 = ld_raw<float4>(p0 + k0), b4 = ld_raw<float4>(p1 + k0);
        const float a[4] = {a4.x, a4.y, a4.z, a4.w}, b[4] = {b4.x, b4.y, b4.z, b4.w};
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const float2 qv = ld_raw<float2>(q + (size_t)(k0 + u) * ldq);
            out[0] = fmaf(a[u], qv.x, out[0]);
            out[1] = fmaf(a[u], qv.y, out[1]);
            out[2] = fmaf(b[u], qv.x, out[2]);
            out[3] = fmaf(b[u], qv.y, out[3]);
        }
    }
}

/* Stage s >= 1: every A_{j+s,j}, a warp per 16 x 8 half (warps beyond 2 (C/16 - s) idle). */
__device__ __forceinline__ void wy_inverse_subdiagonal(float *A, int lda, const float *M, int ldm, int C, int s) {
    const int warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5, halves = 2 * (C / 16 - s);
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    for (int hb = warp; hb < halves; hb += nwarps) {
        const int cj = 16 * (hb >> 1), c0 = cj + 8 * (hb & 1); /* block j's first column; the half's */
        const int ri = cj + 16 * s;                             /* block i = j + s: its first row */
        float *Aij = A + (size_t)ri * lda + c0;
        float sum[4] = {0.f, 0.f, 0.f, 0.f};
        /* S = M[ri.., k] A[k, c0..] over k = 16 j .. 16 i - 1 */
        wy_tile_fma(sum, M + (size_t)ri * ldm + cj, ldm, A + (size_t)cj * lda + c0, lda, 16 * s);
        st_raw<float2>(Aij + (size_t)g * lda + 2 * t, make_float2(sum[0], sum[1])); /* 8-byte aligned */
        st_raw<float2>(Aij + (size_t)(g + 8) * lda + 2 * t, make_float2(sum[2], sum[3]));
        warp_sync(); /* S complete in shared memory */
        float prod[4] = {0.f, 0.f, 0.f, 0.f};
        wy_tile_fma(prod, A + (size_t)ri * lda + ri, lda, Aij, lda, 16); /* A_ii S */
        warp_sync(); /* every lane done reading S before it is overwritten */
        st_raw<float2>(Aij + (size_t)g * lda + 2 * t, make_float2(-prod[0], -prod[1]));
        st_raw<float2>(Aij + (size_t)(g + 8) * lda + 2 * t, make_float2(-prod[2], -prod[3]));
    }
}

/* Shared tiles are bf16 (fp32 in fp32 mode) with padded rows (sm_ld): each
 * operand is read from global memory once, 16 bytes a thread, and fragments
 * come by conflict-free ldmatrix (sm_view). Operands that exist only to feed an
 * mma (MA, A2) are stored already rounded: the same bits as rounding at the
 * fragment load. Launch bounds: three blocks a multiprocessor (the shared-memory
 * limit too) caps registers at 80; without it ptxas took 77 (bf16) and spilled
 * 4 bytes at 64 (fp32). */
template <typename T, bool kFix>
__global__ void __launch_bounds__(GDN_THREADS_WIDE, 3) gdn_wy_kernel(GdnShape s, const T *__restrict__ k, const T *__restrict__ v,
                                                             const float *__restrict__ g, const float *__restrict__ beta,
                                                             T *__restrict__ W, T *__restrict__ U, float *__restrict__ gam_out,
                                                             T *__restrict__ A_out) {
    constexpr bool kTC = sizeof(T) == 2;
    constexpr int kNT = kGdnTileN<kFix>;
    gdn_fix_shape<kFix>(s);
    int c = blockIdx.x, h = blockIdx.y, b = blockIdx.z, C = s.C, dk = s.dk, dv = s.dv;
    int L = s.rows(c);
    const int ldk = sm_ld<T>(dk), ldv = sm_ld<T>(dv), ldc = sm_ld<T>(C);
    WySmem<T> sm = WySmem<T>::template carve<true>(gdn_smem(), s, nullptr);
    size_t bhc = s.bhc(b, h, c);
    stage_rows(sm.K, ldk, k + s.tok(b, c * C, h) * dk, (size_t)s.H * dk, L, C, dk);
    cp_async_commit();
    stage_rows(sm.V, ldv, v + s.tok(b, c * C, h) * dv, (size_t)s.H * dv, L, C, dv); /* lands while M is formed */
    cp_async_commit();
    chunk_gates(sm.gam, sm.bet, g, beta, s, b, h, c); /* its loads overlap the copies */
    cp_async_wait<1>(); /* K */
    block_sync();
    /* M[i][j] = beta_i exp(gam_i - gam_j) k_i.k_j for j < i, else 0 (pair stores, padded rows) */
    const int ldm = wy_ldm(C);
    for_tiles_n<kNT>(C, C, [&](int m0, int n1) {
        float acc2[kNT][4] = {};
        tile_mma_n<kTC, kNT>(acc2, sm_view<T>(sm.K, ldk), sm_view_t<T>(sm.K, ldk), m0, n1, dk);
        for (int sb = 0; sb < kNT; sb++) {
            int n0 = n1 + 8 * sb;
            float *acc = acc2[sb];
            for (int e = 0; e < 4; e += 2) {
                int i = acc_row(m0, e), j = acc_col(n0, e);
                float ri = sm.bet[i], gi = sm.gam[i];
                float m0v = j < i ? ri * exp_approx(gi - sm.gam[j]) * acc[e] : 0.f;
                float m1v = j + 1 < i ? ri * exp_approx(gi - sm.gam[j + 1]) * acc[e + 1] : 0.f;
                st_raw<float2>(sm.M + (size_t)i * ldm + j, make_float2(m0v, m1v)); /* j, ldm even */
            }
        }
    });
    cp_async_wait<0>(); /* V */
    block_sync();
    /* A = (I + M)^-1 by 16 x 16 blocks (wy_inverse_diagonal above): the diagonal
     * blocks, then one block subdiagonal a stage, a barrier after each */
    wy_inverse_diagonal(sm.A, C, sm.M, ldm, C);
    block_sync();
    for (int st = 1; st < C / 16; st++) {
        wy_inverse_subdiagonal(sm.A, C, sm.M, ldm, C, st);
        block_sync();
    }
    /* MA = A diag(beta e^gam), A2 = A diag(beta) (and A out): a thread per column
     * pair, its factors read once, rows strided (the products in the same order as
     * a per-element (a beta) e^gam, pair loads and stores) */
    {
        const int pairs = C / 2, jp = 2 * ((int)threadIdx.x % pairs);
        const float b0 = sm.bet[jp], b1 = sm.bet[jp + 1];
        const float e0 = exp_approx(sm.gam[jp]), e1 = exp_approx(sm.gam[jp + 1]);
        T *Ac = A_out ? A_out + bhc * C * C : nullptr;
        for (int i = (int)threadIdx.x / pairs; i < C; i += (int)blockDim.x / pairs) {
            /* blocks above the diagonal were never written: zero */
            const float2 a = (jp >> 4) > (i >> 4) ? make_float2(0.f, 0.f) : ld_raw<float2>(sm.A + (size_t)i * C + jp);
            store_pair(sm.MA + (size_t)i * ldc + jp, a.x * b0 * e0, a.y * b1 * e1);
            store_pair(sm.A2 + (size_t)i * ldc + jp, a.x * b0, a.y * b1);
            if (Ac) store_pair(Ac + (size_t)i * C + jp, a.x, a.y); /* the backward uses A only as an mma operand */
        }
    }
    for (int i = threadIdx.x; i < C; i += blockDim.x) gam_out[bhc * C + i] = sm.gam[i];
    block_sync();
    T *Wc = W + bhc * C * dk, *Uc = U + bhc * C * dv;
    for_tiles_n<kNT>(C, dk, [&](int m0, int n1) {
        float acc2[kNT][4] = {};
        tile_mma_n<kTC, kNT>(acc2, sm_view<T>(sm.MA, ldc), sm_view<T>(sm.K, ldk), m0, n1, C);
        for (int sb = 0; sb < kNT; sb++) {
            int n0 = n1 + 8 * sb;
            float *acc = acc2[sb];
            store_acc(Wc, dk, m0, n0, acc);
        }
    });
    for_tiles_n<kNT>(C, dv, [&](int m0, int n1) {
        float acc2[kNT][4] = {};
        tile_mma_n<kTC, kNT>(acc2, sm_view<T>(sm.A2, ldc), sm_view<T>(sm.V, ldv), m0, n1, C);
        for (int sb = 0; sb < kNT; sb++) {
            int n0 = n1 + 8 * sb;
            float *acc = acc2[sb];
            store_acc(Uc, dv, m0, n0, acc);
        }
    });
}

/* Checks a core call's shape (sizes, head dims, chunk) and fills the kernels' one;
 * false with the sticky error set. */
bool gdn_core_args(gf_backend *be, GdnShape *gs, const gf_gdn_shape *s, const char *op);

/* Rows of the state one sequential-pass block owns (grid dv / BV x heads, heads =
 * B H): 32 when dv allows and the grid gives at least half the sms
 * multiprocessors a block; else 16 (twice the blocks, each with half the
 * tiles). Every block re-reads the chunk's k, q and W tiles each step, so
 * 32-row slabs halve that traffic: since the slab updates became strided
 * multi-tile mma they win at B 4 x T 2048 (192 blocks) as well as at B 16;
 * docs/cuda-gdn.md has the H200's numbers. asked
 * (cuda_impl.gdn.slab, a test's gf_backend_variants): 16 or 32 forces one
 * (benchmarks, checks), 0 leaves the choice here. */
int gdn_slab(int dv, long heads, int sms, int asked);

/* Warps of a sequential-pass block (forward state pass, backward dh pass): 8 for
 * slabs of 32 rows (two blocks a multiprocessor, half the tiles a warp), 4 for
 * slabs of 16, where 8 warps were slower (docs/cuda-gdn.md, "Variants measured,
 * defaults chosen"). */
int gdn_state_warps(int BV);

/* The state slab [BV, dk] a sequential-pass block keeps in registers, as the
 * accumulators of its warps' tiles: at most (32/16) (128/8) = 32 tiles, 32 / kWarps
 * a warp (kSlabTiles). */
#define GDN_SLAB_MAX_TILES 32
template <int kWarps> constexpr int kSlabTiles = GDN_SLAB_MAX_TILES / kWarps;

/* Tile u of a warp is i = warp + u kWarps, row band i / tn, column tile i % tn
 * (tn = dk / 8). At dk = GDN_MAX_D the warp's kSlabBand<kWarps> tiles of a band
 * are consecutive u, dn = 8 kWarps columns apart, on the same rows: one A
 * fragment a k step for all of them (tile_mma_strided). slab_bands() says
 * whether the slab is laid out so (else: tile by tile). */
template <int kWarps> constexpr int kSlabBand = (GDN_MAX_D / 8) / kWarps;
__device__ __forceinline__ bool slab_bands(int dk) { return dk == GDN_MAX_D; }

/* The slab update of a sequential pass at dk = GDN_MAX_D: for each 16-row band
 * of the BV rows, the warp's kSlabBand tiles of it (acc + band G) are scaled by
 * decay, then f(ab, m0) adds the band's products (m0 = the band's first row; the
 * tiles' columns are 8 warp + 8 j kWarps). */
template <int kWarps, int kTiles, typename F>
__device__ __forceinline__ void slab_band_update(float (*acc)[4], int BV, float decay, F f) {
    constexpr int G = kSlabBand<kWarps>;
#pragma unroll
    for (int band = 0; band < kTiles / G; band++)
        if (band < BV >> 4) {
            float(*ab)[4] = acc + band * G;
#pragma unroll
            for (int j = 0; j < G; j++)
                for (int e = 0; e < 4; e++) ab[j][e] *= decay;
            f(ab, band << 4);
        }
}

/* Stores the register slab into smem [BV][ld] as T (the mma operand copy) and,
 * when dst is set, to global rows of length dk at dst (F32 or T), tile by tile. */
template <int kTiles, typename T, typename TD>
__device__ __forceinline__ void slab_store(float (*acc)[4], T *sm, int ld, TD *dst, int BV, int dk) {
    int warp = threadIdx.x >> 5, nw = blockDim.x >> 5, tn = dk >> 3, nt = (BV >> 4) * tn;
    GridStep ts(warp, nw, tn); /* tile i = warp + u nw is (ts.q, ts.r) */
#pragma unroll
    for (int u = 0; u < kTiles; u++, ts.next()) {
        int i = warp + u * nw;
        if (i < nt) {
            int m0 = ts.q << 4, n0 = ts.r << 3;
            store_acc(sm, ld, m0, n0, acc[u]);
            if (dst) store_acc(dst, dk, m0, n0, acc[u]);
        }
    }
}

#endif
