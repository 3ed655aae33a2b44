/* Gated DeltaNet core forward on CUDA (be_gdn_core): the chunked WY form in
 * three launches (chunk-local WY in parallel, the sequential state pass split
 * over slabs of state rows, outputs in parallel) and a recurrent kernel for
 * decode (small T). docs/cuda-gdn.md has the design and the FLOP counts. */
#include "backend/cuda/cuda_table.h"
#include "backend/cuda/cuda_gdn_chunk.cuh"
#include "backend/cuda/cuda_gdn_host.cuh"
#include "backend/cuda/cuda_gdn_pad.cuh"
extern "C" {
#include "core/error.h" /* a C header without C++ guards */
}

/* ------------------------------------------------------------------ state pass */

/* W, k, the U slab and gam of chunks c and c + 1 (double buffers: chunk c + 1's copies
 * land during all of chunk c's step) */
template <typename T> struct StateSmem {
    T *W0, *W1, *K0, *K1, *Us0, *Us1, *hs, *VpT;
    float *gam0, *gam1;
    /* chunk c's buffers (selects, not an indexed array: that would live in local memory) */
    __device__ T *W(int c) const { return (c & 1) ? W1 : W0; }
    __device__ T *K(int c) const { return (c & 1) ? K1 : K0; }
    __device__ T *Us(int c) const { return (c & 1) ? Us1 : Us0; }
    __device__ float *gam(int c) const { return (c & 1) ? gam1 : gam0; }
    template <bool kBlockBase = false> __host__ __device__ static StateSmem carve(char *base, const GdnShape &s, size_t *bytes) {
        SmemCarveT<kBlockBase> c(base);
        StateSmem m;
        int BV = s.BV;
        m.W0 = c.template take<T>((size_t)s.C * sm_ld<T>(s.dk));
        m.W1 = c.template take<T>((size_t)s.C * sm_ld<T>(s.dk));
        m.K0 = c.template take<T>((size_t)s.C * sm_ld<T>(s.dk));
        m.K1 = c.template take<T>((size_t)s.C * sm_ld<T>(s.dk));
        m.Us0 = c.template take<T>((size_t)s.C * sm_ld<T>(BV)); /* the slab's columns of U */
        m.Us1 = c.template take<T>((size_t)s.C * sm_ld<T>(BV));
        m.hs = c.template take<T>((size_t)BV * sm_ld<T>(s.dk));   /* the slab of the state entering the chunk */
        m.VpT = c.template take<T>((size_t)BV * sm_ld<T>(s.C));   /* exp(gam_L - gam_i) V'_i of the slab, transposed [BV][C] */
        m.gam0 = c.template take<float>(s.C);
        m.gam1 = c.template take<float>(s.C);
        if (bytes) *bytes = c.used;
        return m;
    }
};

/* Starts copying chunk c's W, U slab, k and gam into shared memory (buffers c & 1). */
template <typename T>
__device__ __forceinline__ void state_prefetch(const StateSmem<T> &sm, const GdnShape &s, const T *k, const T *W, const T *U,
                                               const float *gam_g, int b, int h, int c, int r0) {
    const size_t bhc = s.bhc(b, h, c);
    const int C = s.C, dk = s.dk, BV = s.BV;
    stage_rows(sm.W(c), sm_ld<T>(dk), W + bhc * C * dk, (size_t)dk, C, C, dk);
    stage_rows(sm.Us(c), sm_ld<T>(BV), U + bhc * C * s.dv + r0, (size_t)s.dv, C, C, BV);
    stage_rows(sm.K(c), sm_ld<T>(dk), k + s.tok(b, c * C, h) * dk, (size_t)s.H * dk, s.rows(c), C, dk);
    stage_rows(sm.gam(c), C, gam_g + bhc * C, (size_t)C, 1, 1, C);
    cp_async_commit();
}

/* grid (dv / BV, H, B), kWarps warps (gdn_state_warps: 8, with launch bounds for two
 * blocks a multiprocessor, for slabs of 32 rows; 4 for 16): rows [r0, r0 + BV) of the state of one (b, h),
 * chunk after chunk: store it (states), V' = U - W h^T (written over U),
 * h <- e^gam_L h + (diag(e^(gam_L - gam)) V')^T K. The slab stays in fp32
 * registers; its bf16 copy in shared memory is the operand of W h^T. The next
 * chunk's W, U, k, gam are copied (cp.async) during all of this chunk's step.
 * state_io [B, H, dv, dk]: initial state in, final state out (NULL: zero, dropped). */
template <typename T, int kWarps, bool kFix>
__global__ void __launch_bounds__(kWarps * 32, kWarps == 8 ? 2 : 0) gdn_state_kernel(GdnShape s, const T *__restrict__ k, const T *__restrict__ W,
                                                                T *__restrict__ U, const float *__restrict__ gam_g,
                                                                T *__restrict__ states, float *__restrict__ state_io) {
    constexpr bool kTC = sizeof(T) == 2;
    gdn_fix_shape<kFix, kWarps>(s);
    int h = blockIdx.y, b = blockIdx.z, C = s.C, dk = s.dk, dv = s.dv;
    int BV = s.BV, r0 = blockIdx.x * BV;
    const int ldk = sm_ld<T>(dk), ldc = sm_ld<T>(C), ldb = sm_ld<T>(BV);
    StateSmem<T> sm = StateSmem<T>::template carve<true>(gdn_smem(), s, nullptr);
    int warp = threadIdx.x >> 5, nw = blockDim.x >> 5, tn = dk >> 3, nt = (BV >> 4) * tn;
    constexpr int kTiles = kSlabTiles<kWarps>;
    float acc[kTiles][4];
    float *io = state_io ? state_io + (((size_t)b * s.H + h) * dv + r0) * dk : nullptr;
    state_prefetch(sm, s, k, W, U, gam_g, b, h, 0, r0);
    GridStep ts(warp, nw, tn); /* tile i = warp + u nw is (ts.q, ts.r) */
#pragma unroll
    for (int u = 0; u < kTiles; u++, ts.next()) {
        int i = warp + u * nw;
        if (i < nt)
            for (int e = 0; e < 4; e++)
                acc[u][e] = io ? io[(size_t)acc_row(ts.q << 4, e) * dk + acc_col(ts.r << 3, e)] : 0.f;
    }
    for (int c = 0; c < s.NC; c++) {
        size_t bhc = s.bhc(b, h, c);
        const float *gam = sm.gam(c);
        slab_store<kTiles>(acc, sm.hs, ldk, states + bhc * dv * dk + (size_t)r0 * dk, BV, dk);
        cp_async_wait<0>();
        block_sync(); /* chunk c's W, U, k, gam and the slab copy are in place; chunk c - 1's buffers are free */
        if (c + 1 < s.NC) state_prefetch(sm, s, k, W, U, gam_g, b, h, c + 1, r0);
        const float gl = gam[C - 1];
        T *Uc = U + bhc * C * dv + r0;
        /* 16 x 16 tiles (BV is 16 or 32): one A fragment for two mma, two chains a warp */
        for_tiles_n<2>(C, BV, [&](int m0, int n1) {
            float p2[2][4] = {};
            tile_mma_n<kTC, 2>(p2, sm_view<T>(sm.W(c), ldk), sm_view_t<T>(sm.hs, ldk), m0, n1, dk);
            int r = acc_row(m0, 0);
            for (int sb = 0; sb < 2; sb++) {
                const float *p = p2[sb];
                int cc = acc_col(n1 + 8 * sb, 0);
                for (int half = 0; half < 2; half++) {
                    int rr = r + 8 * half;
                    float u0, u1;
                    load_pair(sm.Us(c) + rr * ldb + cc, &u0, &u1);
                    T v0 = from_f<T>(u0 - p[2 * half]), v1 = from_f<T>(u1 - p[2 * half + 1]);
                    store_pair(Uc + (size_t)rr * dv + cc, to_f(v0), to_f(v1));
                    float kd = exp_approx(gl - gam[rr]);
                    sm.VpT[cc * ldc + rr] = from_f<T>(to_f(v0) * kd);
                    sm.VpT[(cc + 1) * ldc + rr] = from_f<T>(to_f(v1) * kd);
                }
            }
        });
        block_sync(); /* V'^T in place; the slab copy is free */
        float eL = exp_approx(gl);
        if (slab_bands(dk)) {
            slab_band_update<kWarps, kTiles>(acc, BV, eL, [&](float(*ab)[4], int m0) {
                tile_mma_strided<kTC, kSlabBand<kWarps>>(ab, sm_view<T>(sm.VpT, ldc), sm_view<T>(sm.K(c), ldk), m0,
                                                         warp << 3, nw << 3, C);
            });
        } else {
            GridStep ts(warp, nw, tn); /* tile i = warp + u nw is (ts.q, ts.r) */
#pragma unroll
            for (int u = 0; u < kTiles; u++, ts.next()) {
                int i = warp + u * nw;
                if (i < nt) {
                    for (int e = 0; e < 4; e++) acc[u][e] *= eL;
                    tile_mma<kTC>(acc[u], sm_view<T>(sm.VpT, ldc), sm_view<T>(sm.K(c), ldk), ts.q << 4, ts.r << 3, C);
                }
            }
        }
        /* no barrier: the next writes of VpT and of this K buffer come after the next chunk's one */
    }
    if (io) {
        GridStep ts(warp, nw, tn); /* tile i = warp + u nw is (ts.q, ts.r) */
#pragma unroll
        for (int u = 0; u < kTiles; u++, ts.next()) {
            int i = warp + u * nw;
            if (i < nt) store_acc(io, dk, ts.q << 4, ts.r << 3, acc[u]);
        }
    }
}

/* ------------------------------------------------------------------ outputs */

template <typename T> struct OutSmem {
    T *Q, *K, *Vp, *P, *hs;
    float *gam;
    template <bool kBlockBase = false> __host__ __device__ static OutSmem carve(char *base, const GdnShape &s, size_t *bytes) {
        SmemCarveT<kBlockBase> c(base);
        OutSmem m;
        m.Q = c.template take<T>((size_t)s.C * sm_ld<T>(s.dk));
        m.K = c.template take<T>((size_t)s.C * sm_ld<T>(s.dk));
        m.Vp = c.template take<T>((size_t)s.C * sm_ld<T>(s.dv));
        m.P = c.template take<T>((size_t)s.C * sm_ld<T>(s.C));
        m.hs = c.template take<T>((size_t)s.dv * sm_ld<T>(s.dk)); /* the chunk's checkpoint, as the mma operand */
        m.gam = c.template take<float>(s.C);
        if (bytes) *bytes = c.used;
        return m;
    }
};

/* grid (NC, H, B), GDN_THREADS_WIDE: O = scale [diag(e^gam) Q h^T + Lower(e^(gam_i -
 * gam_j) Q K^T) V']. Every operand (the checkpoint, in ACT, included) is copied
 * from global memory once into shared memory, in two cp.async groups: Q and K,
 * then V' and the state, which land while Q K^T is formed. */
template <typename T, bool kFix>
__global__ void __launch_bounds__(GDN_THREADS_WIDE) gdn_out_kernel(GdnShape s, const T *__restrict__ q, const T *__restrict__ k,
                                                                   const T *__restrict__ Vp, const float *__restrict__ gam_g,
                                                                   const T *__restrict__ states, T *__restrict__ o) {
    constexpr bool kTC = sizeof(T) == 2;
    constexpr int kNT = kGdnTileN<kFix>;
    gdn_fix_shape<kFix>(s);
    int c = blockIdx.x, h = blockIdx.y, b = blockIdx.z, C = s.C, dk = s.dk, dv = s.dv;
    int L = s.rows(c);
    const int ldk = sm_ld<T>(dk), ldv = sm_ld<T>(dv), ldc = sm_ld<T>(C);
    size_t bhc = s.bhc(b, h, c);
    OutSmem<T> sm = OutSmem<T>::template carve<true>(gdn_smem(), s, nullptr);
    stage_rows(sm.Q, ldk, q + s.tok(b, c * C, h) * dk, (size_t)s.H * dk, L, C, dk);
    stage_rows(sm.K, ldk, k + s.tok(b, c * C, h) * dk, (size_t)s.H * dk, L, C, dk);
    cp_async_commit();
    stage_rows(sm.Vp, ldv, Vp + bhc * C * dv, (size_t)dv, C, C, dv);
    stage_rows(sm.hs, ldk, states + bhc * dv * dk, (size_t)dk, dv, dv, dk);
    cp_async_commit();
    for (int i = threadIdx.x; i < C; i += blockDim.x) sm.gam[i] = gam_g[bhc * C + i];
    cp_async_wait<1>(); /* Q, K */
    block_sync();
    float scale = s.scale;
    for_tiles_n<kNT>(C, C, [&](int m0, int n1) {
        float acc2[kNT][4] = {};
        tile_mma_n<kTC, kNT>(acc2, sm_view<T>(sm.Q, ldk), sm_view_t<T>(sm.K, ldk), m0, n1, dk);
        for (int sb = 0; sb < kNT; sb++) {
            int n0 = n1 + 8 * sb;
            float *acc = acc2[sb];
            for (int e = 0; e < 4; e++) {
                int i = acc_row(m0, e), j = acc_col(n0, e);
                sm.P[i * ldc + j] = from_f<T>(j <= i ? scale * exp_approx(sm.gam[i] - sm.gam[j]) * acc[e] : 0.f);
            }
        }
    });
    cp_async_wait<0>(); /* V', the state */
    block_sync();
    T *oc = o + s.tok(b, c * C, h) * dv;
    for_tiles_n<kNT>(C, dv, [&](int m0, int n1) {
        float acc2[kNT][4] = {};
        tile_mma_n<kTC, kNT>(acc2, sm_view<T>(sm.Q, ldk), sm_view_t<T>(sm.hs, ldk), m0, n1, dk);
        for (int sb = 0; sb < kNT; sb++)
            for (int e = 0; e < 4; e++) acc2[sb][e] *= scale * exp_approx(sm.gam[acc_row(m0, e)]);
        tile_mma_n<kTC, kNT>(acc2, sm_view<T>(sm.P, ldc), sm_view<T>(sm.Vp, ldv), m0, n1, C);
        for (int sb = 0; sb < kNT; sb++) store_acc_rows(oc, (size_t)s.H * dv, m0, n1 + 8 * sb, acc2[sb], L);
    });
}

/* ------------------------------------------------------------------ recurrent */

/* Token by token, one warp per state row: grid (dv / 4, H, B), 4 warps a
 * block. Row r of the state [dv, dk] of one (sequence, head) evolves alone
 * (u = S_r . k, S_r <- a S_r + beta (v_r - a u) k, o_r = scale S_r . q), so a
 * warp keeps its row in registers (lane j holds columns j, j + 32, ...) and
 * needs no barrier. A decode step (T = 1) is then B H dv / 4 blocks reading
 * and writing the state once: the memory-latency-bound (H, B) grid of one
 * block per head it replaces spent ~73 us a step at B 1 on a 12-head layer.
 * ckpt (optional) gets the state entering each chunk (rounded to T). */
template <typename T>
__global__ void __launch_bounds__(GDN_THREADS) gdn_recurrent_kernel(GdnShape s, const T *__restrict__ q, const T *__restrict__ k,
                                                                    const T *__restrict__ v, const float *__restrict__ g,
                                                                    const float *__restrict__ beta, T *__restrict__ o,
                                                                    T *__restrict__ ckpt, float *__restrict__ state_io) {
    constexpr int PER_LANE = GDN_MAX_D / 32;
    const int lane = threadIdx.x & 31, r = blockIdx.x * (GDN_THREADS / 32) + (threadIdx.x >> 5);
    const int h = blockIdx.y, b = blockIdx.z, dk = s.dk, dv = s.dv;
    if (r >= dv) return;
    const size_t row = ((size_t)b * s.H + h) * dv * dk + (size_t)r * dk; /* [B, H, dv, dk] */
    float S[PER_LANE];
#pragma unroll
    for (int u = 0; u < PER_LANE; u++) {
        const int j = lane + 32 * u;
        S[u] = state_io && j < dk ? state_io[row + j] : 0.f;
    }
    for (int t = 0; t < s.T; t++) {
        if (ckpt && t % s.C == 0) {
            T *dst = ckpt + s.bhc(b, h, t / s.C) * dv * dk + (size_t)r * dk;
#pragma unroll
            for (int u = 0; u < PER_LANE; u++)
                if (lane + 32 * u < dk) dst[lane + 32 * u] = from_f<T>(S[u]);
        }
        const size_t it = s.tok(b, t, h);
        float qs[PER_LANE], ks[PER_LANE], dot = 0;
#pragma unroll
        for (int u = 0; u < PER_LANE; u++) {
            const int j = lane + 32 * u;
            qs[u] = j < dk ? to_f(q[it * dk + j]) : 0.f;
            ks[u] = j < dk ? to_f(k[it * dk + j]) : 0.f;
            dot += S[u] * ks[u];
        }
        const float a = exp_approx(g[it]), cc = beta[it] * (to_f(v[it * dv + r]) - a * warp_sum(dot));
        float acc = 0;
#pragma unroll
        for (int u = 0; u < PER_LANE; u++) {
            S[u] = a * S[u] + cc * ks[u];
            acc += S[u] * qs[u];
        }
        acc = warp_sum(acc);
        if (lane == 0) o[it * dv + r] = from_f<T>(s.scale * acc);
    }
    if (state_io)
#pragma unroll
        for (int u = 0; u < PER_LANE; u++)
            if (lane + 32 * u < dk) state_io[row + lane + 32 * u] = S[u];
}

/* ------------------------------------------------------------------ host */

/* Checks a core call's shape and buffers; fills the kernels' shape. */
bool gdn_core_args(gf_backend *be, GdnShape *gs, const gf_gdn_shape *s, const char *op) {
    if (s->B <= 0 || s->T <= 0 || s->H <= 0) {
        be_set_error(be, "%s: sizes must be positive (B %d, T %d, H %d)", op, s->B, s->T, s->H);
        return false;
    }
    if (s->dk <= 0 || s->dv <= 0 || s->dk > GDN_MAX_D || s->dv > GDN_MAX_D) {
        be_set_error(be, "%s: head dims must be 1 to %d (dk %d, dv %d)", op, GDN_MAX_D, s->dk, s->dv);
        return false;
    }
    if (s->dk % 16 || s->dv % 16) { /* the callers pad (cuda_gdn_pad.cu) before they get here */
        be_set_error(be, "%s: internal: head dims %d, %d reached the kernels unpadded", op, s->dk, s->dv);
        return false;
    }
    if (s->chunk != 16 && s->chunk != 32 && s->chunk != 64) {
        be_set_error(be, "%s: chunk must be 16, 32 or 64 (got %d)", op, s->chunk);
        return false;
    }
    gs->B = s->B;
    gs->T = s->T;
    gs->H = s->H;
    gs->dk = s->dk;
    gs->dv = s->dv;
    gs->C = s->chunk;
    gs->NC = (s->T + s->chunk - 1) / s->chunk;
    gs->scale = s->scale;
    gs->BV = gdn_slab(s->dv, (long)s->B * s->H, cuda_of(be)->prop.multiProcessorCount, cuda_of(be)->gdn.slab);
    return true;
}

int cuda_gdn_variants(cuda_impl *im, const gf_backend_variants *v) {
    im->gdn.slab = v ? v->gdn_slab : 0;
    if (im->gdn.slab != 0 && im->gdn.slab != 16 && im->gdn.slab != 32)
        return gf_fail("GDN slab %d: the GDN kernels know 16 or 32", im->gdn.slab);
    /* a benchmark's choice of the slab height for every call, where no check forced one */
    if (!im->gdn.slab) {
        static const char *const heights[] = {"16", "32"};
        const int w = cuda_env_word("GRAFT_CUDA_GDN_SLAB", heights, 2, "16 or 32");
        if (w == -2) return -1;
        if (w >= 0) im->gdn.slab = 16 << w;
    }
    const int general = v ? v->gdn_general : 0;
    if (general != 0 && general != 1) return gf_fail("GDN general %d: 0 (chosen) or 1 (the general kernels)", general);
    im->gdn.general = general == 1;
    return 0;
}

int gdn_state_warps(int BV) { return BV == 32 ? 8 : 4; }

int gdn_slab(int dv, long heads, int sms, int asked) {
    if (dv % 32) return 16;
    if (asked) return asked;
    return heads * (dv / 32) * 2L < sms ? 16 : 32;
}

template <typename T, bool kFix>
static void core_forward(gf_backend *be, const GdnShape &s, bool recurrent, bool kept, gf_buf o, gf_buf ckpt, gf_buf state,
                         gf_buf q, gf_buf k, gf_buf v, gf_buf g, gf_buf beta) {
    const char *op = "gdn_core";
    cudaStream_t st = cuda_stream(be);
    const T *qp = (const T *)q.ptr, *kp = (const T *)k.ptr, *vp = (const T *)v.ptr;
    const float *gp = (const float *)g.ptr, *bp = (const float *)beta.ptr;
    float *io = (float *)state.ptr, *ck = (float *)ckpt.ptr; /* the states in ACT, then any WY products */
    (void)st;
    if (recurrent || s.T <= GDN_RECURRENT_MAX_T) {
        const dim3 grid((unsigned)((s.dv + GDN_THREADS / 32 - 1) / (GDN_THREADS / 32)), (unsigned)s.H, (unsigned)s.B);
        GDN_LAUNCH(gdn_recurrent_kernel<T>, grid, dim3(GDN_THREADS), 0, st, s, qp, kp, vp, gp, bp, (T *)o.ptr, (T *)ck,
                   io);
        CUDA_CHECK_LAUNCH(be, "gdn_core (recurrent)");
        return;
    }
    size_t nbhc = (size_t)s.B * s.H * s.NC;
    void *gam = nullptr, *W = nullptr, *U = nullptr, *states = nullptr;
    bool ok = kept || (gdn_scratch(be, &gam, nbhc * s.C * sizeof(float), op) &&
                       gdn_scratch(be, &W, nbhc * s.C * s.dk * sizeof(T), op) &&
                       gdn_scratch(be, &U, nbhc * s.C * s.dv * sizeof(T), op));
    ok = ok && (ck || gdn_scratch(be, &states, nbhc * s.dv * s.dk * sizeof(T), op));
    T *hs = ck ? (T *)ck : (T *)states;
    /* with the WY products kept, they go where the backward reads them (A too, which
     * only the backward needs); scratch otherwise */
    const KeptWy<T> kw = kept ? KeptWy<T>::at(ck, s) : KeptWy<T>{(float *)gam, (T *)W, (T *)U, (T *)nullptr};
    size_t smw, sms, smo;
    WySmem<T>::carve(nullptr, s, &smw);
    StateSmem<T>::carve(nullptr, s, &sms);
    OutSmem<T>::carve(nullptr, s, &smo);
    const int warps = gdn_state_warps(s.BV);
    auto state_kernel = warps == 8 ? gdn_state_kernel<T, 8, kFix> : gdn_state_kernel<T, 4, kFix>;
    auto wy_kernel = gdn_wy_kernel<T, kFix>;
    auto out_kernel = gdn_out_kernel<T, kFix>;
    ok = ok && gdn_smem_limit(be, wy_kernel, smw, op) && gdn_smem_limit(be, state_kernel, sms, op) &&
         gdn_smem_limit(be, out_kernel, smo, op);
    if (ok) {
        GDN_LAUNCH(wy_kernel, dim3(s.NC, s.H, s.B), dim3(GDN_THREADS_WIDE), smw, st, s, kp, vp, gp, bp, kw.W, kw.U,
                   kw.gam, kw.A);
        CUDA_CHECK_LAUNCH(be, "gdn_core (wy)");
        GDN_LAUNCH(state_kernel, dim3(s.dv / s.BV, s.H, s.B), dim3(32 * warps), sms, st, s, kp, (const T *)kw.W, kw.U,
                   (const float *)kw.gam, hs, io);
        CUDA_CHECK_LAUNCH(be, "gdn_core (state pass)");
        GDN_LAUNCH(out_kernel, dim3(s.NC, s.H, s.B), dim3(GDN_THREADS_WIDE), smo, st, s, qp, kp, (const T *)kw.U,
                   (const float *)kw.gam, hs, (T *)o.ptr);
        CUDA_CHECK_LAUNCH(be, "gdn_core (outputs)");
    }
    gdn_scratch_free(be, gam);
    gdn_scratch_free(be, W);
    gdn_scratch_free(be, U);
    gdn_scratch_free(be, states);
}

extern "C" void cuda_gdn_core(gf_backend *be, gf_buf o, gf_buf ckpt, gf_buf state, gf_buf q, gf_buf k, gf_buf v,
                              gf_buf g, gf_buf beta, const gf_gdn_shape *s) {
    const char *op = "gdn_core";
    GdnShape gs;
    const bool pad = gdn_needs_pad(s);
    gf_gdn_shape sp = *s; /* the shape the kernels will see */
    sp.dk = (s->dk + 15) & ~15;
    sp.dv = (s->dv + 15) & ~15;
    if (!gdn_core_args(be, &gs, pad ? &sp : s, op)) return;
    gf_dtype act = be->act;
    if (!(gdn_present(be, o, op, "o") && gdn_present(be, q, op, "q") && gdn_present(be, k, op, "k") &&
          gdn_present(be, v, op, "v") && gdn_present(be, g, op, "g") && gdn_present(be, beta, op, "beta") &&
          gdn_dtype_is(be, o, act, op, "o") && gdn_dtype_is(be, q, act, op, "q") && gdn_dtype_is(be, k, act, op, "k") &&
          gdn_dtype_is(be, v, act, op, "v") && gdn_dtype_is(be, g, GF_F32, op, "g") &&
          gdn_dtype_is(be, beta, GF_F32, op, "beta") && gdn_dtype_is(be, ckpt, GF_F32, op, "ckpt") &&
          gdn_dtype_is(be, state, GF_F32, op, "state")))
        return;
    const bool kept = gdn_wy_kept(s, ckpt);
    if (pad)
        gdn_core_padded(be, o, ckpt, state, q, k, v, g, beta, s);
    else if (act == GF_BF16)
        (gdn_use_fixed(be, gs) ? core_forward<bf16, true> : core_forward<bf16, false>)(be, gs, s->recurrent, kept, o,
                                                                                      ckpt, state, q, k, v, g, beta);
    else
        core_forward<float, false>(be, gs, s->recurrent, kept, o, ckpt, state, q, k, v, g, beta);
}
