/* The GDN core backward's local gradients as two kernels (a variant of the fused
 * gdn_bwd_local_kernel, forced with gf_backend_variants.gdn_local = 2, or 3 with
 * software-pipelined k loops).
 *
 * The fused kernel runs one 177 KB block of 16 warps a multiprocessor through
 * ~13 barrier-separated phases; nothing covers a phase's tail. Its phases form
 * two chains that share only read-only tiles and the sums of dq, dK and dgam:
 *   ab (reads dh, not h): dS = scale (dO V'^T) o e^(gam_i - gam_j), the dq term
 *      dS K, dK = dS^T Q + e^(gam_L - gam) V' dh, their dgam terms;
 *   cf (reads h and A): dq's state term scale e^gam dO h, dW = -dV' h, dv,
 *      dA, dM = -A^T dA A^T, G, the rest of dK, dbeta and dgam, the outputs.
 * Here each chain is a kernel of 8 warps whose block fits twice in a
 * multiprocessor's shared memory (C 64, d 128, bf16: ab 107.0 KB, cf 115.2 KB),
 * so two blocks at different phases share it. ab hands cf its sums in fp32
 * scratch: dq's dS K term and dK's partial [B, H, NC, C, dk], dgam's partial
 * [B, H, NC, C] (2 x 32 KB a chunk written and read again: the price of the split).
 * Both kernels reuse every tile's memory as soon as its last reader is done; the
 * comments at each phase say what is live. Every sum is the fused kernel's, some
 * in another order (dq's two terms, dgam's), so they agree within rounding. */
#include "backend/cuda/cuda_table.h"
#include "backend/cuda/cuda_gdn_host.cuh"
#include "backend/cuda/cuda_gdn_local.cuh"

#define GDN_THREADS_SPLIT 256 /* 8 warps (>= 2 C), two blocks a multiprocessor: 128 registers at most */

/* ------------------------------------------------------------------ chain ab */

template <typename T> struct SplitAbSmem {
    T *K, *Q, *Vp, *S2b;
    T *dO, *dh; /* dh over dO once phase a is done (bf16 mode; its rows past dO's are staged at the start) */
    LocalRows r;
    __host__ __device__ static SplitAbSmem carve(char *base, const GdnShape &s, size_t *bytes) {
        SmemCarve c(base);
        SplitAbSmem m;
        LocalLd<T> ld(s);
        const size_t Cd = (size_t)s.C * ld.k, Cv = (size_t)s.C * ld.v, dh = sizeof(T) == 2 ? (size_t)s.dv * ld.k : 0;
        m.K = c.take<T>(Cd);
        m.Q = c.take<T>(Cd);
        m.Vp = c.take<T>(Cv);
        m.S2b = c.take<T>((size_t)s.C * ld.a);
        SmemCarve o = c.rest(), d = c.rest();
        m.dO = o.take<T>(Cv);
        m.dh = d.take<T>(dh);
        c.past(o, d);
        m.r = LocalRows::carve(c, s.C);
        if (bytes) *bytes = c.used;
        return m;
    }
};

/* First row of dh's staged copy (bf16 mode) that does not overlap dO; dv when
 * every row does. */
template <typename T> __device__ __forceinline__ int split_dh_free_row(const GdnShape &s, const LocalLd<T> &ld) {
    const int r = (s.C * ld.v + ld.k - 1) / ld.k;
    return r < s.dv ? r : s.dv;
}

/* grid (NC, H, B), GDN_THREADS_SPLIT threads. dQp, dKp [B, H, NC, C, dk] F32: dS K and
 * dS^T Q + e^(gam_L - gam) V' dh; dgp [B, H, NC, C] F32: dgam's terms of this chain
 * (row L - 1 also holds the e^(gam_L - gam) V' dh o K total of dgam_L). */
template <typename T, bool kFix, int kU>
__global__ void __launch_bounds__(GDN_THREADS_SPLIT, 2)
    gdn_bwd_ab_kernel(GdnShape s, GdnLocalIn<T> in, float *__restrict__ dQp, float *__restrict__ dKp,
                      float *__restrict__ dgp) {
    constexpr bool kTC = sizeof(T) == 2;
    gdn_fix_shape<kFix>(s);
    const int c = blockIdx.x, h = blockIdx.y, b = blockIdx.z, C = s.C, dk = s.dk, dv = s.dv;
    const int L = s.rows(c), tid = threadIdx.x;
    const size_t bhc = s.bhc(b, h, c), ldk = (size_t)s.H * dk, ldv = (size_t)s.H * dv;
    SplitAbSmem<T> sm = SplitAbSmem<T>::carve(gdn_smem(), s, nullptr);
    const LocalLd<T> ld(s);
    const T *dhc = in.dhs + bhc * dv * dk;
    const int r0 = split_dh_free_row<T>(s, ld);
    /* live: K, Q, V', dO and dh's rows past dO (a second group) */
    stage_rows(sm.K, ld.k, in.k + s.tok(b, c * C, h) * dk, ldk, L, C, dk);
    stage_rows(sm.Q, ld.k, in.q + s.tok(b, c * C, h) * dk, ldk, L, C, dk);
    stage_rows(sm.dO, ld.v, in.d_o + s.tok(b, c * C, h) * dv, ldv, L, C, dv);
    stage_rows(sm.Vp, ld.v, in.Vp + bhc * C * dv, (size_t)dv, C, C, dv);
    gdn_cp_commit();
    if (kTC && r0 < dv) stage_rows(sm.dh + (size_t)r0 * ld.k, ld.k, dhc + (size_t)r0 * dk, (size_t)dk, dv - r0, dv - r0, dk);
    gdn_cp_commit();
    for (int i = tid; i < C; i += blockDim.x) sm.r.gam[i] = in.gam[bhc * C + i];
    gdn_cp_wait<1>();
    block_sync();

    /* a. dS to S2b; dgam's P terms: + row sums, - column sums of dS o Q K^T */
    local_ds_pass<T, kU>(s, ld, sm.Q, sm.K, sm.dO, sm.Vp, sm.S2b, sm.r);
    block_sync(); /* dO dead: the rest of dh takes its place while dq's term is formed */
    if (kTC) stage_rows(sm.dh, ld.k, dhc, (size_t)dk, r0, r0, dk);
    gdn_cp_commit();
    local_ds_sums(C, sm.r);
    /* dq's dS K term (cf adds scale e^gam dO h and rounds) */
    float *dqp = dQp + bhc * C * dk;
    for_tiles_n<2>(C, dk, [&](int m0, int n1) {
        float acc[2][4] = {};
        tile_mma_n<kTC, 2, kU>(acc, sm_view<T>(sm.S2b, ld.a), sm_view<T>(sm.K, ld.k), m0, n1, C);
        for (int sb = 0; sb < 2; sb++) store_acc(dqp, dk, m0, n1 + 8 * sb, acc[sb]);
    });
    gdn_cp_wait_all();
    block_sync();

    /* b. dK = dS^T Q + X, X_i = e^(gam_L - gam_i) (V' dh)_i; dgam_i -= X_i . K_i */
    const float gl = sm.r.gam[C - 1];
    float *dkp = dKp + bhc * C * dk;
    for_tiles_n<2>(C, dk, [&](int m0, int n1) {
        float a1[2][4] = {}, a2[2][4] = {};
        tile_mma_n<kTC, 2, kU>(a1, sm_view_t<T>(sm.S2b, ld.a), sm_view<T>(sm.Q, ld.k), m0, n1, C);
        mma_state<kTC, 2, kU>(a2, sm_view<T>(sm.Vp, ld.v), sm.dh, ld.k, dhc, dk, m0, n1, dv);
        for (int sb = 0; sb < 2; sb++) {
            float pv[4];
            for (int e = 0; e < 4; e++) {
                int r = acc_row(m0, e), cc = acc_col(n1 + 8 * sb, e);
                float x = gdn_exp(gl - sm.r.gam[r]) * a2[sb][e];
                a1[sb][e] += x;
                pv[e] = x * to_f(sm.K[r * ld.k + cc]);
            }
            tile_row_partials(sm.r.part, GDN_PART_LD, m0, n1 + 8 * sb, pv);
            store_acc(dkp, dk, m0, n1 + 8 * sb, a1[sb]);
        }
    });
    block_sync();
    if (tid < C) {
        float x = part_sum(sm.r.part, tid, dk / 8);
        sm.r.dgam[tid] = sm.r.e1[tid] - sm.r.e2[tid] - x;
        sm.r.e1[tid] = x;
    }
    block_sync();
    if (tid < C) { /* dgam_L also gains the X . K total (the fused kernel adds it in its phase c) */
        float d = sm.r.dgam[tid];
        if (tid == L - 1)
            for (int i = 0; i < C; i++) d += sm.r.e1[i];
        dgp[bhc * C + tid] = d;
    }
}

/* ------------------------------------------------------------------ chain cf */

template <typename T> struct SplitCfSmem {
    T *K;
    T *dO, *V;   /* V takes dO's place once dq's term is formed */
    T *Q, *dW;   /* dW takes Q's (each element by the thread that read Q there) */
    T *dVp, *Yb; /* A^T dA (Yb) takes dV''s once dA is formed */
    T *h, *A, *Xb; /* A and dA / G (Xb) take the bf16 copy of h's place */
    LocalRows r;
    __host__ __device__ static SplitCfSmem carve(char *base, const GdnShape &s, size_t *bytes) {
        SmemCarve c(base);
        SplitCfSmem m;
        LocalLd<T> ld(s);
        const size_t Cd = (size_t)s.C * ld.k, Cv = (size_t)s.C * ld.v, CC = (size_t)s.C * ld.a;
        const size_t hs = sizeof(T) == 2 ? (size_t)s.dv * ld.k : 0;
        m.K = c.take<T>(Cd);
        m.dO = m.V = c.take<T>(Cv);
        m.Q = m.dW = c.take<T>(Cd);
        SmemCarve dv = c.rest(), yb = c.rest();
        m.dVp = dv.take<T>(Cv);
        m.Yb = yb.take<T>(CC);
        c.past(dv, yb);
        SmemCarve st = c.rest(), ax = c.rest();
        m.h = st.take<T>(hs);
        m.A = ax.take<T>(CC);
        m.Xb = ax.take<T>(CC);
        c.past(st, ax);
        m.r = LocalRows::carve(c, s.C);
        if (bytes) *bytes = c.used;
        return m;
    }
};

/* grid (NC, H, B), GDN_THREADS_SPLIT threads, after gdn_bwd_ab_kernel: its dQp, dKp,
 * dgp in, the local gradients out. */
template <typename T, bool kFix, int kU>
__global__ void __launch_bounds__(GDN_THREADS_SPLIT, 2)
    gdn_bwd_cf_kernel(GdnShape s, GdnLocalIn<T> in, GdnLocalOut<T> out, const float *__restrict__ dQp,
                      const float *__restrict__ dKp, const float *__restrict__ dgp) {
    constexpr bool kTC = sizeof(T) == 2;
    gdn_fix_shape<kFix>(s);
    const int c = blockIdx.x, h = blockIdx.y, b = blockIdx.z, C = s.C, dk = s.dk, dv = s.dv;
    const int L = s.rows(c), tid = threadIdx.x, nslab = dv / s.BV;
    const size_t bhc = s.bhc(b, h, c), ldk = (size_t)s.H * dk, ldv = (size_t)s.H * dv;
    const float scale = s.scale;
    SplitCfSmem<T> sm = SplitCfSmem<T>::carve(gdn_smem(), s, nullptr);
    const LocalLd<T> ld(s);
    const float *hc = in.states + bhc * dv * dk;
    /* live: K, dO, Q, dV', h */
    stage_rows(sm.K, ld.k, in.k + s.tok(b, c * C, h) * dk, ldk, L, C, dk);
    stage_rows(sm.dO, ld.v, in.d_o + s.tok(b, c * C, h) * dv, ldv, L, C, dv);
    stage_rows(sm.Q, ld.k, in.q + s.tok(b, c * C, h) * dk, ldk, L, C, dk);
    stage_rows(sm.dVp, ld.v, in.dV + bhc * C * dv, (size_t)dv, C, C, dv);
    gdn_cp_commit();
    if (kTC) load_rows(sm.h, ld.k, hc, (size_t)dk, dv, dv, dk, (const float *)nullptr);
    for (int i = tid; i < C; i += blockDim.x) {
        sm.r.gam[i] = in.gam[bhc * C + i];
        sm.r.bet[i] = i < L ? in.beta[s.tok(b, c * C + i, h)] : 0.f;
        float d = dgp[bhc * C + i];
        if (i == L - 1)
            for (int j = 0; j < nslab; j++) d += in.hsum[bhc * nslab + j]; /* dgam_L's state-decay term */
        sm.r.dgam[i] = d;
        sm.r.dbet[i] = 0.f;
    }
    gdn_cp_wait_all();
    block_sync();

    /* c1. one pass over the C x dk tiles for both products with h: dq = scale e^gam dO h
     * + dS K (ab's), whose first term's row dot with q feeds dgam; dW = -dV' h */
    const float *dqp = dQp + bhc * C * dk;
    T *dqc = out.dq + s.tok(b, c * C, h) * dk;
    for_tiles_n<2>(C, dk, [&](int m0, int n1) {
        float a1[2][4] = {}, a2[2][4] = {};
        mma_state<kTC, 2, kU>(a1, sm_view<T>(sm.dO, ld.v), sm.h, ld.k, hc, dk, m0, n1, dv);
        mma_state<kTC, 2, kU>(a2, sm_view<T>(sm.dVp, ld.v), sm.h, ld.k, hc, dk, m0, n1, dv);
        for (int sb = 0; sb < 2; sb++) {
            const int n0 = n1 + 8 * sb;
            float pv[4], dq[4];
            acc_load(dqp, dk, m0, n0, dq); /* ab's dS K */
            for (int e = 0; e < 4; e++) {
                const int r = acc_row(m0, e), cc = acc_col(n0, e);
                const float x = scale * gdn_exp(sm.r.gam[r]) * a1[sb][e];
                pv[e] = x * to_f(sm.Q[r * ld.k + cc]);
                sm.dW[r * ld.k + cc] = from_f<T>(-a2[sb][e]); /* Q's element read above: dW takes it */
                dq[e] = x + dq[e];
            }
            tile_row_partials(sm.r.part, GDN_PART_LD, m0, n0, pv);
            store_acc_rows(dqc, ldk, m0, n0, dq, L);
        }
    });
    block_sync(); /* dO, Q, h dead: V and A take their places */
    stage_rows(sm.V, ld.v, in.v + s.tok(b, c * C, h) * dv, ldv, L, C, dv);
    stage_rows(sm.A, ld.a, in.A + bhc * C * C, (size_t)C, C, C, C);
    gdn_cp_commit();
    if (tid < C) sm.r.dgam[tid] += part_sum(sm.r.part, tid, dk / 8);
    gdn_cp_wait_all();
    block_sync();

    /* c2. dv = beta A^T dV' (its row dot with v feeds dbeta); dA = dW K~^T + dV' B~^T to Xb */
    T *dvc = out.dv + s.tok(b, c * C, h) * dv;
    for_tiles_n<2>(C, dv, [&](int m0, int n1) {
        float acc2[2][4] = {};
        tile_mma_n<kTC, 2, kU>(acc2, sm_view_t<T>(sm.A, ld.a), sm_view<T>(sm.dVp, ld.v), m0, n1, C);
        for (int sb = 0; sb < 2; sb++) {
            const int n0 = n1 + 8 * sb;
            float pv[4], o[4];
            for (int e = 0; e < 4; e++) {
                const int r = acc_row(m0, e), cc = acc_col(n0, e);
                o[e] = sm.r.bet[r] * acc2[sb][e];
                pv[e] = acc2[sb][e] * to_f(sm.V[r * ld.v + cc]);
            }
            store_acc_rows(dvc, ldv, m0, n0, o, L);
            tile_row_partials(sm.r.part2, GDN_PART_LD, m0, n0, pv);
        }
    });
    local_da_pass<T, kU>(s, ld, sm.dW, sm.K, sm.dVp, sm.V, sm.Xb, sm.r);
    block_sync(); /* V, dV' dead */
    if (tid < C) sm.r.dbet[tid] += part_sum(sm.r.part2, tid, dv / 8);

    /* e. dM = -(A^T dA) A^T, its second product in one pass with f's K K^T: G, F */
    local_atda_pass<T, kU>(s, ld, sm.A, sm.Xb, sm.Yb);
    block_sync();
    local_dm_pass<T, kU>(s, ld, sm.Yb, sm.A, sm.K, sm.Xb, sm.r);
    block_sync();
    local_dm_sums(C, sm.r);
    /* g. dK = ab's partial + beta e^gam A^T dW + G K + G^T K, straight to dk; A^T dW's
     * row dot with K feeds dbeta and dgam */
    const float *dkp = dKp + bhc * C * dk;
    T *dkc = out.dk + s.tok(b, c * C, h) * dk;
    for_tiles_n<2>(C, dk, [&](int m0, int n1) {
        float w[2][4] = {}, g[2][4] = {};
        tile_mma_n<kTC, 2, kU>(w, sm_view_t<T>(sm.A, ld.a), sm_view<T>(sm.dW, ld.k), m0, n1, C);
        tile_mma_n<kTC, 2, kU>(g, sm_view<T>(sm.Xb, ld.a), sm_view<T>(sm.K, ld.k), m0, n1, C);
        tile_mma_n<kTC, 2, kU>(g, sm_view_t<T>(sm.Xb, ld.a), sm_view<T>(sm.K, ld.k), m0, n1, C);
        for (int sb = 0; sb < 2; sb++) {
            const int n0 = n1 + 8 * sb;
            float pv[4], o[4];
            acc_load(dkp, dk, m0, n0, o); /* ab's dK partial */
            for (int e = 0; e < 4; e++) {
                const int r = acc_row(m0, e), cc = acc_col(n0, e);
                o[e] = (o[e] + sm.r.bet[r] * gdn_exp(sm.r.gam[r]) * w[sb][e]) + g[sb][e];
                pv[e] = w[sb][e] * to_f(sm.K[r * ld.k + cc]);
            }
            store_acc_rows(dkc, ldk, m0, n0, o, L);
            tile_row_partials(sm.r.part2, GDN_PART_LD, m0, n0, pv);
        }
    });
    block_sync();
    if (tid < C) {
        const float p = part_sum(sm.r.part2, tid, dk / 8), eg = gdn_exp(sm.r.gam[tid]);
        sm.r.dbet[tid] += eg * p;
        sm.r.dgam[tid] += sm.r.bet[tid] * eg * p - sm.r.e2[tid];
    }
    block_sync();
    local_write_dg(s, b, h, c, sm.r, out.dg, out.dbeta);
}

/* ------------------------------------------------------------------ host */

template <typename T, bool kFix, int kU>
static bool local_split(gf_backend *be, const GdnShape &s, const GdnLocalIn<T> &in, const GdnLocalOut<T> &out) {
    const char *op = "gdn_core_backward";
    cudaStream_t st = cuda_stream(be);
    (void)st;
    const size_t nbhc = (size_t)s.B * s.H * s.NC;
    void *dQp = nullptr, *dKp = nullptr, *dgp = nullptr;
    size_t sma, smc;
    SplitAbSmem<T>::carve(nullptr, s, &sma);
    SplitCfSmem<T>::carve(nullptr, s, &smc);
    auto ab = gdn_bwd_ab_kernel<T, kFix, kU>;
    auto cf = gdn_bwd_cf_kernel<T, kFix, kU>;
    bool ok = gdn_scratch(be, &dQp, nbhc * s.C * s.dk * sizeof(float), op) &&
              gdn_scratch(be, &dKp, nbhc * s.C * s.dk * sizeof(float), op) &&
              gdn_scratch(be, &dgp, nbhc * s.C * sizeof(float), op) && gdn_smem_limit(be, ab, sma, op) &&
              gdn_smem_limit(be, cf, smc, op);
    if (ok) {
        const dim3 chunks(s.NC, s.H, s.B);
        GDN_LAUNCH(ab, chunks, dim3(GDN_THREADS_SPLIT), sma, st, s, in, (float *)dQp, (float *)dKp, (float *)dgp);
        CUDA_CHECK_LAUNCH(be, "gdn_core_backward (local, chain ab)");
        GDN_LAUNCH(cf, chunks, dim3(GDN_THREADS_SPLIT), smc, st, s, in, out, (const float *)dQp, (const float *)dKp,
                   (const float *)dgp);
        CUDA_CHECK_LAUNCH(be, "gdn_core_backward (local, chain cf)");
    }
    gdn_scratch_free(be, dQp);
    gdn_scratch_free(be, dKp);
    gdn_scratch_free(be, dgp);
    return ok;
}

/* pipelined: the k loops software-pipelined, two steps unrolled (kloop_pipelined; the
 * fused kernel spilled with it at 128 registers, these kernels have room) */
template <typename T, bool kFix>
bool gdn_local_split(gf_backend *be, const GdnShape &s, const GdnLocalIn<T> &in, const GdnLocalOut<T> &out,
                     bool pipelined) {
    return pipelined ? local_split<T, kFix, 2>(be, s, in, out) : local_split<T, kFix, 1>(be, s, in, out);
}

template bool gdn_local_split<bf16, true>(gf_backend *, const GdnShape &, const GdnLocalIn<bf16> &,
                                          const GdnLocalOut<bf16> &, bool);
template bool gdn_local_split<bf16, false>(gf_backend *, const GdnShape &, const GdnLocalIn<bf16> &,
                                           const GdnLocalOut<bf16> &, bool);
template bool gdn_local_split<float, false>(gf_backend *, const GdnShape &, const GdnLocalIn<float> &,
                                            const GdnLocalOut<float> &, bool);
