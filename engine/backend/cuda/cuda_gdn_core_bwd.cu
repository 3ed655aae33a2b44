/* Gated DeltaNet core backward on CUDA (be_gdn_core_backward), chunked:
 *   1. WY per chunk again (W, U, A = (I + M)^-1, gam), all chunks in parallel;
 *   2. per chunk in parallel: V' = U - W h^T from the checkpointed state h, and the
 *      local part of dV' = scale Lower(e^(gam_i - gam_j) Q K^T)^T dO;
 *   3. the sequential pass, last chunk first, over slabs of state rows: dh (the
 *      gradient of the state leaving the chunk) -> dV' += Kd dh^T,
 *      dh <- e^gam_L dh + dO^T (scale e^gam Q) - dV'^T W;
 *   4. per chunk in parallel: dq, dk, dv, dbeta, dg from everything above.
 * docs/cuda-gdn.md derives every term. */
#include "backend/cuda/cuda_table.h"
#include "backend/cuda/cuda_gdn_chunk.cuh"
#include "backend/cuda/cuda_gdn_host.cuh"
#include "backend/cuda/cuda_gdn_local.cuh"
#include "backend/cuda/cuda_gdn_pad.cuh"

/* ------------------------------------------------------------------ 2. V' and local dV' */

/* kVp: V' is given (the forward's, kept in the checkpoint): no state copy, W or U */
template <typename T> struct BwdVSmem {
    T *Q, *K, *hs, *W, *dO, *Us, *PT;
    float *gam;
    template <bool kBlockBase = false> __host__ __device__ static BwdVSmem carve(char *base, const GdnShape &s, bool kVp, size_t *bytes) {
        SmemCarveT<kBlockBase> c(base);
        BwdVSmem m = {};
        size_t tile_k = (size_t)s.C * sm_ld<T>(s.dk), state = (size_t)s.dv * sm_ld<T>(s.dk);
        /* Q and K are dead once P is formed: the checkpoint's bf16 copy takes their place */
        SmemCarveT<kBlockBase> qk = c.rest(), hs = c.rest();
        m.Q = qk.template take<T>(tile_k);
        m.K = qk.template take<T>(tile_k);
        if (!kVp) m.hs = hs.template take<T>(state);
        c.past(qk, hs);
        if (!kVp) m.W = c.template take<T>(tile_k);
        m.dO = c.template take<T>((size_t)s.C * sm_ld<T>(s.dv));
        if (!kVp) m.Us = c.template take<T>((size_t)s.C * sm_ld<T>(s.dv)); /* U, copied with the operands (V' = U - W h^T) */
        m.PT = c.template take<T>((size_t)s.C * sm_ld<T>(s.C)); /* P^T: the dV' product's A operand */
        m.gam = c.template take<float>(s.C);
        if (bytes) *bytes = c.used;
        return m;
    }
};

/* grid (NC, H, B), GDN_THREADS_WIDE: U becomes V' in place (kVp: it is V' already, the
 * forward's, and W, states go unread); dVl [B, H, NC, C, dv] ACT = P^T dO (the dh pass
 * adds Kd dh^T to it in fp32 and rounds the sum, an mma operand, again). */
template <typename T, bool kFix, bool kVp>
__global__ void __launch_bounds__(GDN_THREADS_WIDE) gdn_bwd_v_kernel(GdnShape s, const T *__restrict__ q, const T *__restrict__ k,
                                                                     const T *__restrict__ d_o, const T *__restrict__ W,
                                                                     T *__restrict__ U, const float *__restrict__ gam_g,
                                                                     const T *__restrict__ states, T *__restrict__ dVl) {
    constexpr bool kTC = sizeof(T) == 2;
    gdn_fix_shape<kFix>(s);
    int c = blockIdx.x, h = blockIdx.y, b = blockIdx.z, C = s.C, dk = s.dk, dv = s.dv;
    int L = s.rows(c);
    const int ldk = sm_ld<T>(dk), ldv = sm_ld<T>(dv), ldc = sm_ld<T>(C);
    size_t bhc = s.bhc(b, h, c);
    BwdVSmem<T> sm = BwdVSmem<T>::template carve<true>(gdn_smem(), s, kVp, nullptr);
    /* the operand tiles in two cp.async groups: Q and K, then the rest, which
     * lands while P is formed */
    T *Uc = U + bhc * C * dv;
    stage_rows(sm.Q, ldk, q + s.tok(b, c * C, h) * dk, (size_t)s.H * dk, L, C, dk);
    stage_rows(sm.K, ldk, k + s.tok(b, c * C, h) * dk, (size_t)s.H * dk, L, C, dk);
    cp_async_commit();
    if constexpr (!kVp) stage_rows(sm.W, ldk, W + bhc * C * dk, (size_t)dk, C, C, dk);
    stage_rows(sm.dO, ldv, d_o + s.tok(b, c * C, h) * dv, (size_t)s.H * dv, L, C, dv);
    if constexpr (!kVp) stage_rows(sm.Us, ldv, (const T *)Uc, (size_t)dv, C, C, dv);
    cp_async_commit();
    for (int i = threadIdx.x; i < C; i += blockDim.x) sm.gam[i] = gam_g[bhc * C + i];
    cp_async_wait<1>(); /* Q, K */
    block_sync();
    float scale = s.scale;
    /* 16 x 16 tiles a warp here, unlike the forward's WY and output kernels: 16 x 32 ones made
     * this kernel's launch 1.5 % longer on an H100 (docs/cuda-gdn.md, the 8-warp kernels) */
    for_tiles_n<2>(C, C, [&](int m0, int n1) {
        float acc2[2][4] = {};
        tile_mma_n<kTC, 2>(acc2, sm_view<T>(sm.Q, ldk), sm_view_t<T>(sm.K, ldk), m0, n1, dk);
        for (int sb = 0; sb < 2; sb++) {
            int n0 = n1 + 8 * sb;
            float *acc = acc2[sb];
            for (int e = 0; e < 4; e++) {
                int i = acc_row(m0, e), j = acc_col(n0, e);
                sm.PT[j * ldc + i] = from_f<T>(j <= i ? scale * exp_approx(sm.gam[i] - sm.gam[j]) * acc[e] : 0.f);
            }
        }
    });
    cp_async_wait<0>(); /* dO (W, U) */
    block_sync(); /* Q, K dead */
    if constexpr (!kVp) {
        stage_rows(sm.hs, ldk, states + bhc * dv * dk, (size_t)dk, dv, dv, dk);
        cp_async_commit();
        cp_async_wait<0>();
        block_sync();
    }
    T *dvl = dVl + bhc * C * dv;
    for_tiles_n<2>(C, dv, [&](int m0, int n1) {
        if constexpr (!kVp) {
            float acc2[2][4] = {};
            tile_mma_n<kTC, 2>(acc2, sm_view<T>(sm.W, ldk), sm_view_t<T>(sm.hs, ldk), m0, n1, dk);
            for (int sb = 0; sb < 2; sb++) {
                int n0 = n1 + 8 * sb;
                float *acc = acc2[sb];
                int r = acc_row(m0, 0), cc = acc_col(n0, 0);
                for (int half = 0; half < 2; half++) {
                    float u0, u1;
                    load_pair(sm.Us + (size_t)(r + 8 * half) * ldv + cc, &u0, &u1);
                    store_pair(Uc + (size_t)(r + 8 * half) * dv + cc, u0 - acc[2 * half], u1 - acc[2 * half + 1]);
                }
            }
        }
        float d[2][4] = {};
        tile_mma_n<kTC, 2>(d, sm_view<T>(sm.PT, ldc), sm_view<T>(sm.dO, ldv), m0, n1, C);
        for (int sb = 0; sb < 2; sb++) store_acc(dvl, dv, m0, n1 + 8 * sb, d[sb]);
    });
}

/* ------------------------------------------------------------------ 3. sequential dh pass */

template <typename T> struct BwdStateSmem {
    T *K, *Q, *W, *dO, *dOT, *dVT, *dh, *dV, *hs;
    float *gam, *red;
    template <bool kBlockBase = false> __host__ __device__ static BwdStateSmem carve(char *base, const GdnShape &s, size_t *bytes) {
        SmemCarveT<kBlockBase> c(base);
        BwdStateSmem m;
        int BV = s.BV;
        size_t tile_k = (size_t)s.C * sm_ld<T>(s.dk);
        m.K = c.template take<T>(tile_k);
        m.Q = c.template take<T>(tile_k);
        m.W = c.template take<T>(tile_k);
        m.dO = c.template take<T>((size_t)s.C * sm_ld<T>(BV));   /* the slab's columns of dO [C][BV] */
        m.dOT = c.template take<T>((size_t)BV * sm_ld<T>(s.C));  /* scale e^gam_i dO_i of the slab, transposed [BV][C] */
        m.dVT = c.template take<T>((size_t)BV * sm_ld<T>(s.C));  /* dV' of the slab (the mma operand copy), [BV][C] */
        m.dh = c.template take<T>((size_t)BV * sm_ld<T>(s.dk));  /* the slab of dh (the mma operand copy) */
        m.dV = c.template take<T>((size_t)s.C * sm_ld<T>(BV)); /* the slab's columns of the local dV' [C][BV] */
        m.hs = c.template take<T>((size_t)BV * sm_ld<T>(s.dk)); /* the slab of the state entering the chunk (ACT, as kept) */
        m.gam = c.template take<float>(s.C);
        m.red = c.template take<float>(32);
        if (bytes) *bytes = c.used;
        return m;
    }
};

/* The dh pass's copies of chunk c, in two cp.async groups: what its first phase
 * reads (k, the dV' and dO slabs, gam, the state slab h for the dgam_L term),
 * then what its second reads (q, W). */
template <typename T>
__device__ __forceinline__ void bwd_state_prefetch1(const BwdStateSmem<T> &sm, const GdnShape &s, const T *k, const T *d_o,
                                                    const T *dV, const float *gam_g, const T *states, int b,
                                                    int h, int c, int r0) {
    const size_t bhc = s.bhc(b, h, c);
    const int C = s.C, dk = s.dk, dv = s.dv, BV = s.BV, L = s.rows(c);
    stage_rows(sm.K, sm_ld<T>(dk), k + s.tok(b, c * C, h) * dk, (size_t)s.H * dk, L, C, dk);
    stage_rows(sm.dO, sm_ld<T>(BV), d_o + s.tok(b, c * C, h) * dv + r0, (size_t)s.H * dv, L, C, BV);
    stage_rows(sm.dV, sm_ld<T>(BV), dV + bhc * C * dv + r0, (size_t)dv, C, C, BV);
    stage_rows(sm.gam, C, gam_g + bhc * C, (size_t)C, 1, 1, C);
    stage_rows(sm.hs, sm_ld<T>(s.dk), states + bhc * dv * s.dk + (size_t)r0 * s.dk, (size_t)s.dk, BV, BV, s.dk);
    cp_async_commit();
}
template <typename T>
__device__ __forceinline__ void bwd_state_prefetch2(const BwdStateSmem<T> &sm, const GdnShape &s, const T *q, const T *W,
                                                    int b, int h, int c) {
    const size_t bhc = s.bhc(b, h, c);
    const int C = s.C, dk = s.dk;
    stage_rows(sm.Q, sm_ld<T>(dk), q + s.tok(b, c * C, h) * dk, (size_t)s.H * dk, s.rows(c), C, dk);
    stage_rows(sm.W, sm_ld<T>(dk), W + bhc * C * dk, (size_t)dk, C, C, dk);
    cp_async_commit();
}

/* grid (dv / BV, H, B), kWarps warps. dV [B, H, NC, C, dv] ACT: local dV' in, full dV' out
 * (in place: a block reads and writes only its slab's columns; the local kernel uses
 * it only as an mma operand).
 * dhs [B, H, NC, dv, dk] ACT: the gradient of the state leaving each chunk (in bf16
 * mode the local kernel only uses it as an mma operand: the same bits as rounding there).
 * hsum [B, H, NC, dv / BV]: e^gam_L sum(dh o h) over the slab (h: the state entering).
 * Per chunk, last first: dV' += Kd dh^T with Kd = diag(e^(gam_L - gam)) K (the
 * scale applied to the product), dh <- e^gam_L dh + (diag(scale e^gam) dO)^T Q -
 * dV'^T W. The previous chunk's copies run during each phase (two groups). */
template <typename T, int kWarps, bool kFix>
__global__ void __launch_bounds__(kWarps * 32, kWarps == 8 ? 2 : 0) gdn_bwd_state_kernel(GdnShape s, const T *__restrict__ q, const T *__restrict__ k,
                                                                    const T *__restrict__ d_o, const T *__restrict__ W,
                                                                    const float *__restrict__ gam_g,
                                                                    const T *__restrict__ states, T *__restrict__ dV,
                                                                    T *__restrict__ dhs, float *__restrict__ hsum) {
    constexpr bool kTC = sizeof(T) == 2;
    gdn_fix_shape<kFix, kWarps>(s);
    int h = blockIdx.y, b = blockIdx.z, C = s.C, dk = s.dk, dv = s.dv, nslab = gridDim.x;
    int BV = s.BV, r0 = blockIdx.x * BV;
    const int ldk = sm_ld<T>(dk), ldc = sm_ld<T>(C), ldb = sm_ld<T>(BV), ldl = sm_ld<T>(BV);
    BwdStateSmem<T> sm = BwdStateSmem<T>::template carve<kFix>(gdn_smem(), s, nullptr);
    int warp = threadIdx.x >> 5, nw = blockDim.x >> 5, tn = dk >> 3, nt = (BV >> 4) * tn;
    constexpr int kTiles = kSlabTiles<kWarps>;
    float acc[kTiles][4];
#pragma unroll
    for (int u = 0; u < kTiles; u++)
        for (int e = 0; e < 4; e++) acc[u][e] = 0.f;
    bwd_state_prefetch1(sm, s, k, d_o, dV, gam_g, states, b, h, s.NC - 1, r0);
    bwd_state_prefetch2(sm, s, q, W, b, h, s.NC - 1);
    for (int c = s.NC - 1; c >= 0; c--) {
        size_t bhc = s.bhc(b, h, c);
        slab_store<kTiles>(acc, sm.dh, ldk, dhs + bhc * dv * dk + (size_t)r0 * dk, BV, dk);
        cp_async_wait<1>(); /* the first group (k, dV', dO, gam, h) of chunk c */
        block_sync();
        /* e^gam_L sum(dh o h) over this slab: the state-decay term of dgam_L
         * (warp sums here, their fixed-order total after the next barrier) */
        float part = 0;
        GridStep ts(warp, nw, tn); /* tile i = warp + u nw is (ts.q, ts.r) */
#pragma unroll
        for (int u = 0; u < kTiles; u++, ts.next()) {
            int i = warp + u * nw;
            if (i < nt)
                for (int e = 0; e < 4; e++)
                    part += acc[u][e] * to_f(sm.hs[acc_row(ts.q << 4, e) * ldk + acc_col(ts.r << 3, e)]);
        }
        part = warp_sum(part);
        if ((threadIdx.x & 31) == 0) sm.red[warp] = part;
        const float gl = sm.gam[C - 1];
        for_elems(C, BV, [&](int r, int j) {
            sm.dOT[j * ldc + r] = from_f<T>(s.scale * exp_approx(sm.gam[r]) * to_f(sm.dO[r * ldb + j]));
        });
        T *dvc = dV + bhc * C * dv + r0;
        /* 16 x 16 tiles: one A fragment for two mma, two independent chains a warp */
        for_tiles_n<2>(C, BV, [&](int m0, int n1) {
            float p2[2][4] = {};
            tile_mma_n<kTC, 2>(p2, sm_view<T>(sm.K, ldk), sm_view_t<T>(sm.dh, ldk), m0, n1, dk);
            for (int sb = 0; sb < 2; sb++) {
                int n0 = n1 + 8 * sb;
                float *p = p2[sb];
                for (int e = 0; e < 4; e++) {
                    int r = acc_row(m0, e), cc = acc_col(n0, e);
                    float x = to_f(sm.dV[r * ldl + cc]) + exp_approx(gl - sm.gam[r]) * p[e];
                    p[e] = x;
                    sm.dVT[cc * ldc + r] = from_f<T>(x);
                }
                store_acc(dvc, dv, m0, n0, p);
            }
        });
        cp_async_wait<0>(); /* the second group (q, W) of chunk c */
        block_sync(); /* also: h (sm.hs) read, the warp sums in sm.red */
        if (threadIdx.x == 0) {
            float t = 0;
            for (int w = 0; w < nw; w++) t += sm.red[w];
            hsum[bhc * nslab + blockIdx.x] = exp_approx(gl) * t;
        }
        if (c > 0) bwd_state_prefetch1(sm, s, k, d_o, dV, gam_g, states, b, h, c - 1, r0);
        float eL = exp_approx(gl);
        if (slab_bands(dk)) {
            constexpr int G = kSlabBand<kWarps>;
            slab_band_update<kWarps, kTiles>(acc, BV, eL, [&](float(*ab)[4], int m0) {
                float m[G][4] = {};
                tile_mma_strided<kTC, G>(ab, sm_view<T>(sm.dOT, ldc), sm_view<T>(sm.Q, ldk), m0, warp << 3, nw << 3, C);
                tile_mma_strided<kTC, G>(m, sm_view<T>(sm.dVT, ldc), sm_view<T>(sm.W, ldk), m0, warp << 3, nw << 3, C);
#pragma unroll
                for (int j = 0; j < G; j++)
                    for (int e = 0; e < 4; e++) ab[j][e] -= m[j][e];
            });
        } else {
            GridStep tu(warp, nw, tn); /* tile i = warp + u nw is (tu.q, tu.r) */
#pragma unroll
            for (int u = 0; u < kTiles; u++, tu.next()) {
                int i = warp + u * nw;
                if (i < nt) {
                    int m0 = tu.q << 4, n0 = tu.r << 3;
                    float m[4] = {0, 0, 0, 0};
                    for (int e = 0; e < 4; e++) acc[u][e] *= eL;
                    tile_mma<kTC>(acc[u], sm_view<T>(sm.dOT, ldc), sm_view<T>(sm.Q, ldk), m0, n0, C);
                    tile_mma<kTC>(m, sm_view<T>(sm.dVT, ldc), sm_view<T>(sm.W, ldk), m0, n0, C);
                    for (int e = 0; e < 4; e++) acc[u][e] -= m[e];
                }
            }
        }
        block_sync(); /* Q and W are free */
        if (c > 0) bwd_state_prefetch2(sm, s, q, W, b, h, c - 1);
    }
}

/* ------------------------------------------------------------------ 4. local gradients */

template <typename T> struct BwdLocalSmem {
    /* whole kernel */
    T *K, *HS; /* HS: the state h as kept (bf16 mode only) */
    float *dK;
    LocalRows r;
    /* Two overlays. Phase a's own tiles, then in their place the first tiles of
     * phases c .. f, copied while phase b runs: */
    T *Q, *dO, *S2b; /* S2b: dS rounded to T, the mma operand (the same bits as rounding at the fragment) */
    T *dVp, *V, *A;
    /* phase b's tiles, then in their place what phases c .. f form: */
    T *Vp, *DH; /* DH: dh' (bf16 mode only) */
    T *dW, *Xb, *Yb; /* Xb, Yb: C x C mma operands in T: dA, then G; A^T dA (stored rounded, as S2b) */
    template <bool kBlockBase = false> __host__ __device__ static BwdLocalSmem carve(char *base, const GdnShape &s, size_t *bytes) {
        SmemCarveT<kBlockBase> c(base);
        BwdLocalSmem m;
        LocalLd<T> ld(s);
        size_t Cd = (size_t)s.C * ld.k, Cv = (size_t)s.C * ld.v, CC = (size_t)s.C * ld.a;
        m.K = c.template take<T>(Cd);
        m.HS = c.template take<T>(sizeof(T) == 2 ? (size_t)s.dv * ld.k : 0);
        m.dK = c.template take<float>((size_t)s.C * ld.fk);
        m.r = LocalRows::carve(c, s.C);
        SmemCarveT<kBlockBase> a = c.rest(), cf = c.rest();
        m.Q = a.template take<T>(Cd);
        m.dO = a.template take<T>(Cv);
        m.S2b = a.template take<T>(CC);
        m.dVp = cf.template take<T>(Cv);
        m.V = cf.template take<T>(Cv);
        m.A = cf.template take<T>(CC);
        c.past(a, cf);
        SmemCarveT<kBlockBase> b = c.rest(), prod = c.rest();
        m.Vp = b.template take<T>(Cv);
        m.DH = b.template take<T>(sizeof(T) == 2 ? (size_t)s.dv * ld.k : 0);
        m.dW = prod.template take<T>(Cd);
        m.Xb = prod.template take<T>(CC);
        m.Yb = prod.template take<T>(CC);
        c.past(b, prod);
        if (bytes) *bytes = c.used;
        return m;
    }
};

/* grid (NC, H, B), GDN_THREADS_BWD threads (>= 2 C). kLocalUnroll 1: every k loop
 * stays a loop (tile_mma_n's kUnroll 1): unrolled, the kernel's code missed the instruction
 * cache (23 % of the stall samples on the H200) and the layer at width 1536 took
 * 10.38 ms (B 16 x T 2048) and 10.46 (B 4 x T 8192) against 9.61 and 9.57 this way.
 * The k loops software-pipelined (two steps unrolled) and the kernel split in two
 * (fp32 partials between them) were measured and dropped in session 14: no gain past
 * a step's noise (docs/cuda-gdn.md, "The local backward's other forms"). */
template <typename T, bool kFix>
__global__ void __launch_bounds__(GDN_THREADS_BWD, 1)
    gdn_bwd_local_kernel(GdnShape s, const T *__restrict__ q, const T *__restrict__ k, const T *__restrict__ v,
                         const float *__restrict__ beta, const T *__restrict__ d_o, const float *__restrict__ gam_g,
                         const T *__restrict__ A_g, const T *__restrict__ Vp_g, const T *__restrict__ dV_g,
                         const T *__restrict__ states, const T *__restrict__ dhs, const float *__restrict__ hsum,
                         T *__restrict__ dq, T *__restrict__ dk_out, T *__restrict__ dv_out, float *__restrict__ dg,
                         float *__restrict__ dbeta) {
    constexpr bool kTC = sizeof(T) == 2;
    constexpr int kNT = kGdnTileN<kFix>; /* the C x d products; the C x C ones stay 16 x 16 (16 warps) */
    gdn_fix_shape<kFix>(s);
    int c = blockIdx.x, h = blockIdx.y, b = blockIdx.z, C = s.C, dk = s.dk, dv = s.dv;
    int L = s.rows(c), tid = threadIdx.x, nslab = dv / s.BV;
    size_t bhc = s.bhc(b, h, c);
    float scale = s.scale;
    BwdLocalSmem<T> sm = BwdLocalSmem<T>::template carve<true>(gdn_smem(), s, nullptr);
    const LocalLd<T> ld(s);
    const T *hc = states + bhc * dv * dk;
    const T *dhc = dhs + bhc * dv * dk;
    size_t ldk = (size_t)s.H * dk, ldv = (size_t)s.H * dv;
    /* dK, summed over phases a, b, c and f: in kFix each warp's one 16 x 32 tile of it (the same
     * tile in every for_tiles_n<kNT>(C, dk, ..) below) stays in registers, in the same order of
     * fp32 adds as through sm.dK (the general kernel's), which the kFix kernel leaves unused */
    static_assert((64 / 16) * (128 / (8 * kGdnTileN<true>)) == GDN_THREADS_BWD / 32, "kFix: one dK tile a warp");
    float dkr[kNT][4] = {};
    auto dK_at = [&](int m0, int n0, int sb, int e) -> float & {
        if constexpr (kFix)
            return dkr[sb][e];
        else
            return sm.dK[acc_row(m0, e) * ld.fk + acc_col(n0, e)];
    };
    /* the operand tiles of phases a and b in two cp.async groups: phase a's S and dS
     * (K, Q, dO, V'), then the states (h as the checkpoint keeps it, in ACT: it stays
     * for phase c; dh' beside it), which land while phase a's first pass runs */
    stage_rows(sm.K, ld.k, k + s.tok(b, c * C, h) * dk, ldk, L, C, dk);
    stage_rows(sm.Q, ld.k, q + s.tok(b, c * C, h) * dk, ldk, L, C, dk);
    stage_rows(sm.dO, ld.v, d_o + s.tok(b, c * C, h) * dv, ldv, L, C, dv);
    stage_rows(sm.Vp, ld.v, Vp_g + bhc * C * dv, (size_t)dv, C, C, dv);
    cp_async_commit();
    if (kTC) {
        stage_rows(sm.HS, ld.k, hc, (size_t)dk, dv, dv, dk);
        stage_rows(sm.DH, ld.k, dhc, (size_t)dk, dv, dv, dk);
    }
    cp_async_commit();
    for (int i = tid; i < C; i += blockDim.x) {
        sm.r.gam[i] = gam_g[bhc * C + i];
        sm.r.bet[i] = i < L ? beta[s.tok(b, c * C + i, h)] : 0.f;
        sm.r.dgam[i] = 0.f;
        sm.r.dbet[i] = 0.f;
    }
    cp_async_wait<1>(); /* the first group: K, Q, dO, V' */
    block_sync();

    /* a. dS = scale (dO V'^T) o e^(gam_i - gam_j), i >= j, to S2b; dgam from P: + row sums,
     * - column sums of dS o Q K^T, as partials from the accumulators */
    local_ds_pass<T>(s, ld, sm.Q, sm.K, sm.dO, sm.Vp, sm.S2b, sm.r);
    cp_async_wait<0>(); /* the second group: h, dh' */
    block_sync();
    local_ds_sums(C, sm.r);
    /* dq = scale e^gam dO h + dS K (the first term's row dot with q feeds dgam) */
    T *dqc = dq + s.tok(b, c * C, h) * dk;
    for_tiles_n<kNT>(C, dk, [&](int m0, int n1) {
        float acc[kNT][4] = {};
        mma_state<kTC, kNT, kLocalUnroll>(acc, sm_view<T>(sm.dO, ld.v), sm.HS, ld.k, hc, dk, m0, n1, dv);
        for (int sb = 0; sb < kNT; sb++) {
            float pv[4];
            for (int e = 0; e < 4; e++) {
                int r = acc_row(m0, e);
                acc[sb][e] *= scale * exp_approx(sm.r.gam[r]);
                pv[e] = acc[sb][e] * to_f(sm.Q[r * ld.k + acc_col(n1 + 8 * sb, e)]);
            }
            tile_row_partials(sm.r.part, GDN_PART_LD, m0, n1 + 8 * sb, pv);
        }
        tile_mma_n<kTC, kNT, kLocalUnroll>(acc, sm_view<T>(sm.S2b, ld.a), sm_view<T>(sm.K, ld.k), m0, n1, C);
        for (int sb = 0; sb < kNT; sb++) store_acc_rows(dqc, ldk, m0, n1 + 8 * sb, acc[sb], L);
    });
    /* dk = dS^T Q (first term) */
    for_tiles_n<kNT>(C, dk, [&](int m0, int n1) {
        float acc2[kNT][4] = {};
        tile_mma_n<kTC, kNT, kLocalUnroll>(acc2, sm_view_t<T>(sm.S2b, ld.a), sm_view<T>(sm.Q, ld.k), m0, n1, C);
#pragma unroll
        for (int sb = 0; sb < kNT; sb++)
#pragma unroll
            for (int e = 0; e < 4; e++) dK_at(m0, n1 + 8 * sb, sb, e) = acc2[sb][e];
    });
    block_sync(); /* Q, dO and dS are dead: phase c's first tiles are copied over them while b runs */
    stage_rows(sm.dVp, ld.v, dV_g + bhc * C * dv, (size_t)dv, C, C, dv);
    stage_rows(sm.V, ld.v, v + s.tok(b, c * C, h) * dv, ldv, L, C, dv);
    stage_rows(sm.A, ld.a, A_g + bhc * C * C, (size_t)C, C, C, C);
    cp_async_commit();
    if (tid < C) sm.r.dgam[tid] += sm.r.e1[tid] - sm.r.e2[tid] + part_sum(sm.r.part, tid, dk / 8);
    /* b. the state leaving the chunk: X = V' dh_next; dk_i += e^(gam_L - gam_i) X_i */
    float gl = sm.r.gam[C - 1];
    for_tiles_n<kNT>(C, dk, [&](int m0, int n1) {
        float acc[kNT][4] = {};
        mma_state<kTC, kNT, kLocalUnroll>(acc, sm_view<T>(sm.Vp, ld.v), sm.DH, ld.k, dhc, dk, m0, n1, dv);
#pragma unroll
        for (int sb = 0; sb < kNT; sb++) {
            float pv[4];
#pragma unroll
            for (int e = 0; e < 4; e++) {
                int r = acc_row(m0, e), cc = acc_col(n1 + 8 * sb, e);
                float x = exp_approx(gl - sm.r.gam[r]) * acc[sb][e];
                dK_at(m0, n1 + 8 * sb, sb, e) += x;
                pv[e] = x * to_f(sm.K[r * ld.k + cc]);
            }
            tile_row_partials(sm.r.part2, GDN_PART_LD, m0, n1 + 8 * sb, pv);
        }
    });
    block_sync();
    if (tid < C) {
        float x = part_sum(sm.r.part2, tid, dk / 8);
        sm.r.dgam[tid] -= x;
        sm.r.e1[tid] = x;
    }
    cp_async_wait<0>(); /* dV', V, A */
    block_sync(); /* phases a, b done: their memory is reused below */

    /* c. dW = -dV' h; dK~ = A^T dW; dB~ = A^T dV'; dA = dW K~^T + dV' B~^T */
    if (tid == 0) {
        float t = 0;
        for (int i = 0; i < C; i++) t += sm.r.e1[i];
        for (int j = 0; j < nslab; j++) t += hsum[bhc * nslab + j];
        sm.r.dgam[L - 1] += t;
    }
    for_tiles_n<kNT>(C, dk, [&](int m0, int n1) {
        float acc[kNT][4] = {};
        mma_state<kTC, kNT, kLocalUnroll>(acc, sm_view<T>(sm.dVp, ld.v), sm.HS, ld.k, hc, dk, m0, n1, dv);
        for (int sb = 0; sb < kNT; sb++)
            for (int e = 0; e < 4; e++) sm.dW[acc_row(m0, e) * ld.k + acc_col(n1 + 8 * sb, e)] = from_f<T>(-acc[sb][e]);
    });
    block_sync();
    for_tiles_n<kNT>(C, dk, [&](int m0, int n1) {
        float acc2[kNT][4] = {};
        tile_mma_n<kTC, kNT, kLocalUnroll>(acc2, sm_view_t<T>(sm.A, ld.a), sm_view<T>(sm.dW, ld.k), m0, n1, C);
#pragma unroll
        for (int sb = 0; sb < kNT; sb++) {
            int n0 = n1 + 8 * sb;
            float *acc = acc2[sb];
            float pv[4];
#pragma unroll
            for (int e = 0; e < 4; e++) {
                int r = acc_row(m0, e), cc = acc_col(n0, e);
                dK_at(m0, n0, sb, e) += sm.r.bet[r] * exp_approx(sm.r.gam[r]) * acc[e];
                pv[e] = acc[e] * to_f(sm.K[r * ld.k + cc]);
            }
            tile_row_partials(sm.r.part, GDN_PART_LD, m0, n0, pv);
        }
    });
    T *dvc = dv_out + s.tok(b, c * C, h) * dv;
    for_tiles_n<kNT>(C, dv, [&](int m0, int n1) {
        float acc2[kNT][4] = {};
        tile_mma_n<kTC, kNT, kLocalUnroll>(acc2, sm_view_t<T>(sm.A, ld.a), sm_view<T>(sm.dVp, ld.v), m0, n1, C);
        for (int sb = 0; sb < kNT; sb++) {
            int n0 = n1 + 8 * sb;
            float *acc = acc2[sb];
            float pv[4], o[4];
            for (int e = 0; e < 4; e++) {
                int r = acc_row(m0, e), cc = acc_col(n0, e);
                o[e] = sm.r.bet[r] * acc[e];
                pv[e] = acc[e] * to_f(sm.V[r * ld.v + cc]);
            }
            store_acc_rows(dvc, ldv, m0, n0, o, L); /* column pairs: one store where there were two */
            tile_row_partials(sm.r.part2, GDN_PART_LD, m0, n0, pv);
        }
    });
    local_da_pass<T>(s, ld, sm.dW, sm.K, sm.dVp, sm.V, sm.Xb, sm.r);
    block_sync();
    if (tid < C) {
        float p = part_sum(sm.r.part, tid, dk / 8), p2 = part_sum(sm.r.part2, tid, dv / 8);
        const float eg = exp_approx(sm.r.gam[tid]);
        sm.r.dbet[tid] += eg * p + p2;
        sm.r.dgam[tid] += sm.r.bet[tid] * eg * p;
    }
    /* e. dM = -(A^T dA) A^T, its second product in one pass with f's K K^T: G, F */
    local_atda_pass<T>(s, ld, sm.A, sm.Xb, sm.Yb);
    block_sync();
    local_dm_pass<T>(s, ld, sm.Yb, sm.A, sm.K, sm.Xb, sm.r);
    block_sync();
    local_dm_sums(C, sm.r);
    /* f. dK += G K + G^T K */
    for_tiles_n<kNT>(C, dk, [&](int m0, int n1) {
        float acc2[kNT][4] = {};
        tile_mma_n<kTC, kNT, kLocalUnroll>(acc2, sm_view<T>(sm.Xb, ld.a), sm_view<T>(sm.K, ld.k), m0, n1, C);
        tile_mma_n<kTC, kNT, kLocalUnroll>(acc2, sm_view_t<T>(sm.Xb, ld.a), sm_view<T>(sm.K, ld.k), m0, n1, C);
#pragma unroll
        for (int sb = 0; sb < kNT; sb++)
#pragma unroll
            for (int e = 0; e < 4; e++) dK_at(m0, n1 + 8 * sb, sb, e) += acc2[sb][e];
    });
    block_sync();
    if (tid < C) sm.r.dgam[tid] -= sm.r.e2[tid];
    block_sync();
    /* g. outputs; dg_j = sum_{i >= j} dgam_i inside the chunk */
    T *dkc = dk_out + s.tok(b, c * C, h) * dk;
    if constexpr (kFix)
        for_tiles_n<kNT>(C, dk, [&](int m0, int n1) {
#pragma unroll
            for (int sb = 0; sb < kNT; sb++) store_acc_rows(dkc, ldk, m0, n1 + 8 * sb, dkr[sb], L);
        });
    else
        store_rows_f32(dkc, ldk, sm.dK, ld.fk, L, dk); /* 16 bytes a store (one element a store: 3.4 % of the instructions) */
    local_write_dg(s, b, h, c, sm.r, dg, dbeta);
}

/* ------------------------------------------------------------------ host */

/* kept: the checkpoint holds the forward's gam, W, V' and A (gdn_wy_kept): no WY
 * launch, and the V' kernel forms only the local dV' */
template <typename T, bool kFix>
static void core_backward(gf_backend *be, const GdnShape &s, bool kept, gf_buf dq, gf_buf dk, gf_buf dv, gf_buf dg,
                          gf_buf dbeta, gf_buf d_o, gf_buf q, gf_buf k, gf_buf v, gf_buf g, gf_buf beta, gf_buf ckpt) {
    const char *op = "gdn_core_backward";
    cudaStream_t st = cuda_stream(be);
    (void)st;
    size_t nbhc = (size_t)s.B * s.H * s.NC;
    int nslab = s.dv / s.BV;
    void *gam = nullptr, *W = nullptr, *U = nullptr, *A = nullptr, *dV = nullptr, *dhs = nullptr, *hsum = nullptr;
    bool ok = kept || (gdn_scratch(be, &gam, nbhc * s.C * sizeof(float), op) &&
                       gdn_scratch(be, &W, nbhc * s.C * s.dk * sizeof(T), op) &&
                       gdn_scratch(be, &U, nbhc * s.C * s.dv * sizeof(T), op) &&
                       gdn_scratch(be, &A, nbhc * s.C * s.C * sizeof(T), op));
    const KeptWy<T> kw = kept ? KeptWy<T>::at((float *)ckpt.ptr, s) : KeptWy<T>{(float *)gam, (T *)W, (T *)U, (T *)A};
    ok = ok && gdn_scratch(be, &dV, nbhc * s.C * s.dv * sizeof(T), op) &&
              gdn_scratch(be, &dhs, nbhc * s.dv * s.dk * sizeof(T), op) &&
              gdn_scratch(be, &hsum, nbhc * nslab * sizeof(float), op);
    size_t smw, smv, sms, sml;
    WySmem<T>::carve(nullptr, s, &smw);
    BwdVSmem<T>::carve(nullptr, s, kept, &smv);
    BwdStateSmem<T>::carve(nullptr, s, &sms);
    BwdLocalSmem<T>::carve(nullptr, s, &sml);
    const int warps = gdn_state_warps(s.BV);
    auto state_kernel = warps == 8 ? gdn_bwd_state_kernel<T, 8, kFix> : gdn_bwd_state_kernel<T, 4, kFix>;
    auto local_kernel = gdn_bwd_local_kernel<T, kFix>;
    auto wy_kernel = gdn_wy_kernel<T, kFix>;
    auto v_kernel = kept ? gdn_bwd_v_kernel<T, kFix, true> : gdn_bwd_v_kernel<T, kFix, false>;
    ok = ok && gdn_smem_limit(be, wy_kernel, smw, op) && gdn_smem_limit(be, v_kernel, smv, op) &&
         gdn_smem_limit(be, state_kernel, sms, op) && gdn_smem_limit(be, local_kernel, sml, op);
    if (ok) {
        const T *qp = (const T *)q.ptr, *kp = (const T *)k.ptr, *vp = (const T *)v.ptr, *op_ = (const T *)d_o.ptr;
        const T *ck = (const T *)ckpt.ptr; /* the states, in ACT */
        dim3 chunks(s.NC, s.H, s.B), slabs(nslab, s.H, s.B);
        if (!kept) {
            GDN_LAUNCH(wy_kernel, chunks, dim3(GDN_THREADS_WIDE), smw, st, s, kp, vp, (const float *)g.ptr,
                       (const float *)beta.ptr, kw.W, kw.U, kw.gam, kw.A);
            CUDA_CHECK_LAUNCH(be, "gdn_core_backward (wy)");
        }
        GDN_LAUNCH(v_kernel, chunks, dim3(GDN_THREADS_WIDE), smv, st, s, qp, kp, op_, (const T *)kw.W, kw.U,
                   (const float *)kw.gam, ck, (T *)dV);
        CUDA_CHECK_LAUNCH(be, "gdn_core_backward (V')");
        GDN_LAUNCH(state_kernel, slabs, dim3(32 * warps), sms, st, s, qp, kp, op_, (const T *)kw.W,
                   (const float *)kw.gam, ck, (T *)dV, (T *)dhs, (float *)hsum);
        CUDA_CHECK_LAUNCH(be, "gdn_core_backward (state pass)");
        GDN_LAUNCH(local_kernel, chunks, dim3(GDN_THREADS_BWD), sml, st, s, qp, kp, vp, (const float *)beta.ptr, op_,
                   (const float *)kw.gam, (const T *)kw.A, (const T *)kw.U, (const T *)dV, ck, (const T *)dhs,
                   (const float *)hsum, (T *)dq.ptr, (T *)dk.ptr, (T *)dv.ptr, (float *)dg.ptr, (float *)dbeta.ptr);
        CUDA_CHECK_LAUNCH(be, "gdn_core_backward (local)");
    }
    gdn_scratch_free(be, gam);
    gdn_scratch_free(be, W);
    gdn_scratch_free(be, U);
    gdn_scratch_free(be, A);
    gdn_scratch_free(be, dV);
    gdn_scratch_free(be, dhs);
    gdn_scratch_free(be, hsum);
}

extern "C" void cuda_gdn_core_backward(gf_backend *be, gf_buf dq, gf_buf dk, gf_buf dv, gf_buf dg, gf_buf dbeta,
                                       gf_buf d_o, gf_buf q, gf_buf k, gf_buf v, gf_buf g, gf_buf beta, gf_buf ckpt,
                                       const gf_gdn_shape *s) {
    const char *op = "gdn_core_backward";
    GdnShape gs;
    const bool pad = gdn_needs_pad(s);
    gf_gdn_shape sp = *s; /* the shape the kernels will see */
    sp.dk = (s->dk + 15) & ~15;
    sp.dv = (s->dv + 15) & ~15;
    if (!gdn_core_args(be, &gs, pad ? &sp : s, op)) return;
    gf_dtype act = be->act;
    gf_buf acts[] = {dq, dk, dv, d_o, q, k, v};
    const char *an[] = {"dq", "dk", "dv", "d_o", "q", "k", "v"};
    for (int i = 0; i < 7; i++)
        if (!gdn_present(be, acts[i], op, an[i]) || !gdn_dtype_is(be, acts[i], act, op, an[i])) return;
    gf_buf f32s[] = {dg, dbeta, g, beta, ckpt};
    const char *fn[] = {"dg", "dbeta", "g", "beta", "ckpt"};
    for (int i = 0; i < 5; i++)
        if (!gdn_present(be, f32s[i], op, fn[i]) || !gdn_dtype_is(be, f32s[i], GF_F32, op, fn[i])) return;
    const bool kept = gdn_wy_kept(s, ckpt);
    if (pad)
        gdn_core_backward_padded(be, dq, dk, dv, dg, dbeta, d_o, q, k, v, g, beta, ckpt, s);
    else if (act == GF_BF16)
        (gdn_use_fixed(be, gs) ? core_backward<bf16, true> : core_backward<bf16, false>)(
            be, gs, kept, dq, dk, dv, dg, dbeta, d_o, q, k, v, g, beta, ckpt);
    else
        core_backward<float, false>(be, gs, kept, dq, dk, dv, dg, dbeta, d_o, q, k, v, g, beta, ckpt);
}
