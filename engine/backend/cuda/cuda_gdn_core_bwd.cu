/* Gated DeltaNet core backward on CUDA (be_gdn_core_backward), chunked:
 *   1. WY per chunk again (W, U, A = (I + M)^-1, gam), all chunks in parallel;
 *   2. per chunk in parallel: V' = U - W h^T from the checkpointed state h, and the
 *      local part of dV' = scale Lower(e^(gam_i - gam_j) Q K^T)^T dO;
 *   3. the sequential pass, last chunk first, over slabs of state rows: dh (the
 *      gradient of the state leaving the chunk) -> dV' += Kd dh^T,
 *      dh <- e^gam_L dh + dO^T (scale e^gam Q) - dV'^T W;
 *   4. per chunk in parallel: dq, dk, dv, dbeta, dg from everything above.
 * docs/cuda-gdn.md derives every term. */
#include "backend/cuda/cuda_gdn.h"
#include "backend/cuda/cuda_gdn_chunk.cuh"
#include "backend/cuda/cuda_gdn_host.cuh"
#include "backend/cuda/cuda_gdn_pad.cuh"

/* ------------------------------------------------------------------ 2. V' and local dV' */

template <typename T> struct BwdVSmem {
    T *Q, *K, *W, *dO;
    float *P, *gam;
    __host__ __device__ static BwdVSmem carve(char *base, const GdnShape &s, size_t *bytes) {
        SmemCarve c(base);
        BwdVSmem m;
        m.Q = c.take<T>((size_t)s.C * s.dk);
        m.K = c.take<T>((size_t)s.C * s.dk);
        m.W = c.take<T>((size_t)s.C * s.dk);
        m.dO = c.take<T>((size_t)s.C * s.dv);
        m.P = c.take<float>((size_t)s.C * s.C);
        m.gam = c.take<float>(s.C);
        if (bytes) *bytes = c.used;
        return m;
    }
};

/* grid (NC, H, B): U becomes V' in place; dVl [B, H, NC, C, dv] F32 = P^T dO. */
template <typename T>
__global__ void __launch_bounds__(GDN_THREADS) gdn_bwd_v_kernel(GdnShape s, const T *__restrict__ q, const T *__restrict__ k,
                                                                const T *__restrict__ d_o, const T *__restrict__ W,
                                                                T *__restrict__ U, const float *__restrict__ gam_g,
                                                                const float *__restrict__ states, float *__restrict__ dVl) {
    constexpr bool kTC = sizeof(T) == 2;
    int c = blockIdx.x, h = blockIdx.y, b = blockIdx.z, C = s.C, dk = s.dk, dv = s.dv;
    int L = s.rows(c);
    size_t bhc = s.bhc(b, h, c);
    BwdVSmem<T> sm = BwdVSmem<T>::carve(gdn_smem(), s, nullptr);
    load_rows(sm.Q, q + s.tok(b, c * C, h) * dk, (size_t)s.H * dk, L, C, dk, (const float *)nullptr);
    load_rows(sm.K, k + s.tok(b, c * C, h) * dk, (size_t)s.H * dk, L, C, dk, (const float *)nullptr);
    load_rows(sm.W, W + bhc * C * dk, (size_t)dk, C, C, dk, (const float *)nullptr);
    load_rows(sm.dO, d_o + s.tok(b, c * C, h) * dv, (size_t)s.H * dv, L, C, dv, (const float *)nullptr);
    for (int i = threadIdx.x; i < C; i += blockDim.x) sm.gam[i] = gam_g[bhc * C + i];
    block_sync();
    float scale = s.scale;
    for_tiles(C, C, [&](int m0, int n0) {
        float acc[4] = {0, 0, 0, 0};
        tile_mma<kTC>(acc, view<T>(sm.Q, dk, 1), view<T>(sm.K, 1, dk), m0, n0, dk);
        for (int e = 0; e < 4; e++) {
            int i = acc_row(m0, e), j = acc_col(n0, e);
            sm.P[i * C + j] = j <= i ? scale * expf(sm.gam[i] - sm.gam[j]) * acc[e] : 0.f;
        }
    });
    block_sync();
    const float *hc = states + bhc * dv * dk;
    T *Uc = U + bhc * C * dv;
    float *dvl = dVl + bhc * C * dv;
    for_tiles(C, dv, [&](int m0, int n0) {
        float acc[4] = {0, 0, 0, 0};
        tile_mma<kTC>(acc, view<T>(sm.W, dk, 1), view<float>(hc, 1, dk), m0, n0, dk);
        for (int e = 0; e < 4; e++) {
            size_t at = (size_t)acc_row(m0, e) * dv + acc_col(n0, e);
            Uc[at] = from_f<T>(to_f(Uc[at]) - acc[e]);
        }
        float d[4] = {0, 0, 0, 0};
        tile_mma<kTC>(d, view<float>(sm.P, 1, C), view<T>(sm.dO, dv, 1), m0, n0, C);
        for (int e = 0; e < 4; e++) dvl[(size_t)acc_row(m0, e) * dv + acc_col(n0, e)] = d[e];
    });
}

/* ------------------------------------------------------------------ 3. sequential dh pass */

template <typename T> struct BwdStateSmem {
    T *Kd, *Qg, *W, *dO;
    float *dV, *dh, *gam, *red;
    __host__ __device__ static BwdStateSmem carve(char *base, const GdnShape &s, size_t *bytes) {
        SmemCarve c(base);
        BwdStateSmem m;
        int BV = gdn_slab(s.dv);
        m.Kd = c.take<T>((size_t)s.C * s.dk);   /* exp(gam_L - gam_i) k_i */
        m.Qg = c.take<T>((size_t)s.C * s.dk);   /* scale exp(gam_i) q_i */
        m.W = c.take<T>((size_t)s.C * s.dk);
        m.dO = c.take<T>((size_t)s.C * BV);     /* the slab's columns of dO */
        m.dV = c.take<float>((size_t)s.C * BV); /* the slab's columns of dV' */
        m.dh = c.take<float>((size_t)BV * s.dk);
        m.gam = c.take<float>(s.C);
        m.red = c.take<float>(32);
        if (bytes) *bytes = c.used;
        return m;
    }
};

/* grid (dv / BV, H, B). dV [B, H, NC, C, dv] F32: local dV' in, full dV' out.
 * dhs [B, H, NC, dv, dk] F32: the gradient of the state leaving each chunk.
 * hsum [B, H, NC, dv / BV]: e^gam_L sum(dh o h) over the slab (h: the state entering). */
template <typename T>
__global__ void __launch_bounds__(GDN_THREADS) gdn_bwd_state_kernel(GdnShape s, const T *__restrict__ q, const T *__restrict__ k,
                                                                    const T *__restrict__ d_o, const T *__restrict__ W,
                                                                    const float *__restrict__ gam_g,
                                                                    const float *__restrict__ states, float *__restrict__ dV,
                                                                    float *__restrict__ dhs, float *__restrict__ hsum) {
    constexpr bool kTC = sizeof(T) == 2;
    int h = blockIdx.y, b = blockIdx.z, C = s.C, dk = s.dk, dv = s.dv, nslab = gridDim.x;
    int BV = gdn_slab(dv), r0 = blockIdx.x * BV;
    BwdStateSmem<T> sm = BwdStateSmem<T>::carve(gdn_smem(), s, nullptr);
    int warp = threadIdx.x >> 5, nw = blockDim.x >> 5, tn = dk >> 3, nt = (BV >> 4) * tn;
    float acc[GDN_SLAB_TILES][4];
#pragma unroll
    for (int u = 0; u < GDN_SLAB_TILES; u++)
        for (int e = 0; e < 4; e++) acc[u][e] = 0.f;
    for (int c = s.NC - 1; c >= 0; c--) {
        size_t bhc = s.bhc(b, h, c);
        int L = s.rows(c);
        const float *gc = gam_g + bhc * C;
        float gl = gc[C - 1];
        slab_store(acc, sm.dh, dhs + bhc * dv * dk + (size_t)r0 * dk, BV, dk);
        /* e^gam_L sum(dh o h) over this slab: the state-decay term of dgam_L */
        const float *hc = states + bhc * dv * dk + (size_t)r0 * dk;
        float part = 0;
#pragma unroll
        for (int u = 0; u < GDN_SLAB_TILES; u++) {
            int i = warp + u * nw;
            if (i < nt)
                for (int e = 0; e < 4; e++)
                    part += acc[u][e] * hc[(size_t)acc_row((i / tn) << 4, e) * dk + acc_col((i % tn) << 3, e)];
        }
        part = warp_sum(part);
        if ((threadIdx.x & 31) == 0) sm.red[warp] = part;
        const T *qc = q + s.tok(b, c * C, h) * dk, *kc = k + s.tok(b, c * C, h) * dk;
        for (int i = threadIdx.x; i < C * dk; i += blockDim.x) {
            int r = i / dk, j = i - r * dk;
            bool in = r < L;
            size_t at = (size_t)r * s.H * dk + j;
            sm.Kd[i] = from_f<T>(in ? expf(gl - gc[r]) * to_f(kc[at]) : 0.f);
            sm.Qg[i] = from_f<T>(in ? s.scale * expf(gc[r]) * to_f(qc[at]) : 0.f);
        }
        load_rows(sm.W, W + bhc * C * dk, (size_t)dk, C, C, dk, (const float *)nullptr);
        const T *oc = d_o + s.tok(b, c * C, h) * dv + r0;
        float *dvc = dV + bhc * C * dv + r0;
        for (int i = threadIdx.x; i < C * BV; i += blockDim.x) {
            int r = i / BV, j = i - r * BV;
            sm.dO[i] = from_f<T>(r < L ? to_f(oc[(size_t)r * s.H * dv + j]) : 0.f);
            sm.dV[i] = dvc[(size_t)r * dv + j];
        }
        block_sync();
        if (threadIdx.x == 0) {
            float t = 0;
            for (int w = 0; w < nw; w++) t += sm.red[w];
            hsum[bhc * nslab + blockIdx.x] = expf(gl) * t;
        }
        for_tiles(C, BV, [&](int m0, int n0) {
            float p[4] = {0, 0, 0, 0};
            tile_mma<kTC>(p, view<T>(sm.Kd, dk, 1), view<float>(sm.dh, 1, dk), m0, n0, dk);
            for (int e = 0; e < 4; e++) {
                int r = acc_row(m0, e), cc = acc_col(n0, e);
                float x = sm.dV[r * BV + cc] + p[e];
                sm.dV[r * BV + cc] = x;
                dvc[(size_t)r * dv + cc] = x;
            }
        });
        block_sync();
        float eL = expf(gl);
#pragma unroll
        for (int u = 0; u < GDN_SLAB_TILES; u++) {
            int i = warp + u * nw;
            if (i < nt) {
                int m0 = (i / tn) << 4, n0 = (i % tn) << 3;
                float m[4] = {0, 0, 0, 0};
                for (int e = 0; e < 4; e++) acc[u][e] *= eL;
                tile_mma<kTC>(acc[u], view<T>(sm.dO, 1, BV), view<T>(sm.Qg, dk, 1), m0, n0, C);
                tile_mma<kTC>(m, view<float>(sm.dV, 1, BV), view<T>(sm.W, dk, 1), m0, n0, C);
                for (int e = 0; e < 4; e++) acc[u][e] -= m[e];
            }
        }
        block_sync();
    }
}

/* ------------------------------------------------------------------ 4. local gradients */

#define GDN_PART_LD (GDN_MAX_D / 8) /* row partials: one per 8-column tile */

template <typename T> struct BwdLocalSmem {
    /* whole kernel */
    T *K;
    float *dK, *gam, *bet, *dgam, *dbet, *e1, *e2, *part, *part2;
    /* phases a, b */
    T *Q, *dO, *Vp;
    float *S1, *S2;
    /* phases c .. f (same memory as a, b) */
    T *dW, *V;
    float *dVp, *A, *S3, *S4;
    __host__ __device__ static BwdLocalSmem carve(char *base, const GdnShape &s, size_t *bytes) {
        SmemCarve c(base);
        BwdLocalSmem m;
        size_t Cd = (size_t)s.C * s.dk, Cv = (size_t)s.C * s.dv, CC = (size_t)s.C * s.C;
        m.K = c.take<T>(Cd);
        m.dK = c.take<float>(Cd);
        m.gam = c.take<float>(s.C);
        m.bet = c.take<float>(s.C);
        m.dgam = c.take<float>(s.C);
        m.dbet = c.take<float>(s.C);
        m.e1 = c.take<float>(s.C);
        m.e2 = c.take<float>(s.C);
        m.part = c.take<float>((size_t)s.C * GDN_PART_LD);
        m.part2 = c.take<float>((size_t)s.C * GDN_PART_LD);
        SmemCarve x(base ? base + c.used : nullptr), y(base ? base + c.used : nullptr);
        m.Q = x.take<T>(Cd);
        m.dO = x.take<T>(Cv);
        m.Vp = x.take<T>(Cv);
        m.S1 = x.take<float>(CC);
        m.S2 = x.take<float>(CC);
        m.dVp = y.take<float>(Cv);
        m.A = y.take<float>(CC);
        m.dW = y.take<T>(Cd);
        m.V = y.take<T>(Cv);
        m.S3 = y.take<float>(CC);
        m.S4 = y.take<float>(CC);
        if (bytes) *bytes = c.used + (x.used > y.used ? x.used : y.used);
        return m;
    }
};

/* Sum of the first n entries of row r of a partials array. */
__device__ __forceinline__ float part_sum(const float *part, int r, int n) {
    float t = 0;
    for (int i = 0; i < n; i++) t += part[r * GDN_PART_LD + i];
    return t;
}

/* grid (NC, H, B), GDN_THREADS_BWD threads (>= 2 C). */
template <typename T>
__global__ void __launch_bounds__(GDN_THREADS_BWD)
    gdn_bwd_local_kernel(GdnShape s, const T *__restrict__ q, const T *__restrict__ k, const T *__restrict__ v,
                         const float *__restrict__ beta, const T *__restrict__ d_o, const float *__restrict__ gam_g,
                         const float *__restrict__ A_g, const T *__restrict__ Vp_g, const float *__restrict__ dV_g,
                         const float *__restrict__ states, const float *__restrict__ dhs, const float *__restrict__ hsum,
                         T *__restrict__ dq, T *__restrict__ dk_out, T *__restrict__ dv_out, float *__restrict__ dg,
                         float *__restrict__ dbeta) {
    constexpr bool kTC = sizeof(T) == 2;
    int c = blockIdx.x, h = blockIdx.y, b = blockIdx.z, C = s.C, dk = s.dk, dv = s.dv;
    int L = s.rows(c), tid = threadIdx.x, nslab = dv / gdn_slab(dv);
    size_t bhc = s.bhc(b, h, c);
    float scale = s.scale;
    BwdLocalSmem<T> sm = BwdLocalSmem<T>::carve(gdn_smem(), s, nullptr);
    const float *hc = states + bhc * dv * dk, *dhc = dhs + bhc * dv * dk;
    size_t ldk = (size_t)s.H * dk, ldv = (size_t)s.H * dv;
    load_rows(sm.K, k + s.tok(b, c * C, h) * dk, ldk, L, C, dk, (const float *)nullptr);
    load_rows(sm.Q, q + s.tok(b, c * C, h) * dk, ldk, L, C, dk, (const float *)nullptr);
    load_rows(sm.dO, d_o + s.tok(b, c * C, h) * dv, ldv, L, C, dv, (const float *)nullptr);
    load_rows(sm.Vp, Vp_g + bhc * C * dv, (size_t)dv, C, C, dv, (const float *)nullptr);
    for (int i = tid; i < C; i += blockDim.x) {
        sm.gam[i] = gam_g[bhc * C + i];
        sm.bet[i] = i < L ? beta[s.tok(b, c * C + i, h)] : 0.f;
        sm.dgam[i] = 0.f;
        sm.dbet[i] = 0.f;
    }
    block_sync();

    /* a. S1 = Q K^T; S2 = dS = scale (dO V'^T) o e^(gam_i - gam_j), i >= j */
    for_tiles(C, C, [&](int m0, int n0) {
        float a1[4] = {0, 0, 0, 0}, a2[4] = {0, 0, 0, 0};
        tile_mma<kTC>(a1, view<T>(sm.Q, dk, 1), view<T>(sm.K, 1, dk), m0, n0, dk);
        tile_mma<kTC>(a2, view<T>(sm.dO, dv, 1), view<T>(sm.Vp, 1, dv), m0, n0, dv);
        for (int e = 0; e < 4; e++) {
            int i = acc_row(m0, e), j = acc_col(n0, e);
            sm.S1[i * C + j] = a1[e];
            sm.S2[i * C + j] = j <= i ? scale * a2[e] * expf(sm.gam[i] - sm.gam[j]) : 0.f;
        }
    });
    block_sync();
    /* dgam from P: + row sums, - column sums of dS o QK^T */
    if (tid < C) {
        float t = 0;
        for (int j = 0; j < C; j++) t += sm.S2[tid * C + j] * sm.S1[tid * C + j];
        sm.e1[tid] = t;
    } else if (tid < 2 * C) {
        int j = tid - C;
        float t = 0;
        for (int i = 0; i < C; i++) t += sm.S2[i * C + j] * sm.S1[i * C + j];
        sm.e2[j] = t;
    }
    /* dq = scale e^gam dO h + dS K (the first term's row dot with q feeds dgam) */
    T *dqc = dq + s.tok(b, c * C, h) * dk;
    for_tiles(C, dk, [&](int m0, int n0) {
        float acc[4] = {0, 0, 0, 0}, pv[4];
        tile_mma<kTC>(acc, view<T>(sm.dO, dv, 1), view<float>(hc, dk, 1), m0, n0, dv);
        for (int e = 0; e < 4; e++) {
            int r = acc_row(m0, e);
            acc[e] *= scale * expf(sm.gam[r]);
            pv[e] = acc[e] * to_f(sm.Q[r * dk + acc_col(n0, e)]);
        }
        tile_row_partials(sm.part, GDN_PART_LD, m0, n0, pv);
        tile_mma<kTC>(acc, view<float>(sm.S2, C, 1), view<T>(sm.K, dk, 1), m0, n0, C);
        for (int e = 0; e < 4; e++) {
            int r = acc_row(m0, e);
            if (r < L) dqc[(size_t)r * ldk + acc_col(n0, e)] = from_f<T>(acc[e]);
        }
    });
    /* dk = dS^T Q (first term) */
    for_tiles(C, dk, [&](int m0, int n0) {
        float acc[4] = {0, 0, 0, 0};
        tile_mma<kTC>(acc, view<float>(sm.S2, 1, C), view<T>(sm.Q, dk, 1), m0, n0, C);
        for (int e = 0; e < 4; e++) sm.dK[acc_row(m0, e) * dk + acc_col(n0, e)] = acc[e];
    });
    block_sync();
    if (tid < C) sm.dgam[tid] += sm.e1[tid] - sm.e2[tid] + part_sum(sm.part, tid, dk / 8);
    /* b. the state leaving the chunk: X = V' dh_next; dk_i += e^(gam_L - gam_i) X_i */
    float gl = sm.gam[C - 1];
    for_tiles(C, dk, [&](int m0, int n0) {
        float acc[4] = {0, 0, 0, 0}, pv[4];
        tile_mma<kTC>(acc, view<T>(sm.Vp, dv, 1), view<float>(dhc, dk, 1), m0, n0, dv);
        for (int e = 0; e < 4; e++) {
            int r = acc_row(m0, e), cc = acc_col(n0, e);
            float x = expf(gl - sm.gam[r]) * acc[e];
            sm.dK[r * dk + cc] += x;
            pv[e] = x * to_f(sm.K[r * dk + cc]);
        }
        tile_row_partials(sm.part2, GDN_PART_LD, m0, n0, pv);
    });
    block_sync();
    if (tid < C) {
        float x = part_sum(sm.part2, tid, dk / 8);
        sm.dgam[tid] -= x;
        sm.e1[tid] = x;
    }
    block_sync(); /* phases a, b done: their memory is reused below */

    /* c. dW = -dV' h; dK~ = A^T dW; dB~ = A^T dV'; dA = dW K~^T + dV' B~^T */
    if (tid == 0) {
        float t = 0;
        for (int i = 0; i < C; i++) t += sm.e1[i];
        for (int j = 0; j < nslab; j++) t += hsum[bhc * nslab + j];
        sm.dgam[L - 1] += t;
    }
    load_rows(sm.dVp, dV_g + bhc * C * dv, (size_t)dv, C, C, dv, (const float *)nullptr);
    load_rows(sm.V, v + s.tok(b, c * C, h) * dv, ldv, L, C, dv, (const float *)nullptr);
    for (int i = tid; i < C * C; i += blockDim.x) sm.A[i] = A_g[bhc * C * C + i];
    block_sync();
    for_tiles(C, dk, [&](int m0, int n0) {
        float acc[4] = {0, 0, 0, 0};
        tile_mma<kTC>(acc, view<float>(sm.dVp, dv, 1), view<float>(hc, dk, 1), m0, n0, dv);
        for (int e = 0; e < 4; e++) sm.dW[acc_row(m0, e) * dk + acc_col(n0, e)] = from_f<T>(-acc[e]);
    });
    block_sync();
    for_tiles(C, dk, [&](int m0, int n0) {
        float acc[4] = {0, 0, 0, 0}, pv[4];
        tile_mma<kTC>(acc, view<float>(sm.A, 1, C), view<T>(sm.dW, dk, 1), m0, n0, C);
        for (int e = 0; e < 4; e++) {
            int r = acc_row(m0, e), cc = acc_col(n0, e);
            sm.dK[r * dk + cc] += sm.bet[r] * expf(sm.gam[r]) * acc[e];
            pv[e] = acc[e] * to_f(sm.K[r * dk + cc]);
        }
        tile_row_partials(sm.part, GDN_PART_LD, m0, n0, pv);
    });
    T *dvc = dv_out + s.tok(b, c * C, h) * dv;
    for_tiles(C, dv, [&](int m0, int n0) {
        float acc[4] = {0, 0, 0, 0}, pv[4];
        tile_mma<kTC>(acc, view<float>(sm.A, 1, C), view<float>(sm.dVp, dv, 1), m0, n0, C);
        for (int e = 0; e < 4; e++) {
            int r = acc_row(m0, e), cc = acc_col(n0, e);
            if (r < L) dvc[(size_t)r * ldv + cc] = from_f<T>(sm.bet[r] * acc[e]);
            pv[e] = acc[e] * to_f(sm.V[r * dv + cc]);
        }
        tile_row_partials(sm.part2, GDN_PART_LD, m0, n0, pv);
    });
    for_tiles(C, C, [&](int m0, int n0) {
        float a1[4] = {0, 0, 0, 0}, a2[4] = {0, 0, 0, 0};
        tile_mma<kTC>(a1, view<T>(sm.dW, dk, 1), view<T>(sm.K, 1, dk), m0, n0, dk);
        tile_mma<kTC>(a2, view<float>(sm.dVp, dv, 1), view<T>(sm.V, 1, dv), m0, n0, dv);
        for (int e = 0; e < 4; e++) {
            int i = acc_row(m0, e), j = acc_col(n0, e);
            sm.S3[i * C + j] = j <= i ? sm.bet[j] * (expf(sm.gam[j]) * a1[e] + a2[e]) : 0.f;
        }
    });
    block_sync();
    if (tid < C) {
        float p = part_sum(sm.part, tid, dk / 8), p2 = part_sum(sm.part2, tid, dv / 8), eg = expf(sm.gam[tid]);
        sm.dbet[tid] += eg * p + p2;
        sm.dgam[tid] += sm.bet[tid] * eg * p;
    }
    /* e. dM = -A^T dA A^T on the strict lower part (fp32 on the CUDA cores) */
    for_tiles(C, C, [&](int m0, int n0) {
        float acc[4] = {0, 0, 0, 0};
        tile_mma<false>(acc, view<float>(sm.A, 1, C), view<float>(sm.S3, C, 1), m0, n0, C);
        for (int e = 0; e < 4; e++) sm.S4[acc_row(m0, e) * C + acc_col(n0, e)] = acc[e];
    });
    block_sync();
    for_tiles(C, C, [&](int m0, int n0) {
        float acc[4] = {0, 0, 0, 0};
        tile_mma<false>(acc, view<float>(sm.S4, C, 1), view<float>(sm.A, 1, C), m0, n0, C);
        for (int e = 0; e < 4; e++) {
            int i = acc_row(m0, e), j = acc_col(n0, e);
            sm.S3[i * C + j] = i > j ? -acc[e] : 0.f;
        }
    });
    block_sync();
    /* f. M = beta_i e^(gam_i - gam_j) K K^T: G = dM o (beta_i e^..) -> S3, F = dM o e^.. o KK^T -> S4 */
    for_tiles(C, C, [&](int m0, int n0) {
        float acc[4] = {0, 0, 0, 0};
        tile_mma<kTC>(acc, view<T>(sm.K, dk, 1), view<T>(sm.K, 1, dk), m0, n0, dk);
        for (int e = 0; e < 4; e++) {
            int i = acc_row(m0, e), j = acc_col(n0, e);
            float f = 0, gg = 0;
            if (i > j) {
                float dm = sm.S3[i * C + j], mc = expf(sm.gam[i] - sm.gam[j]);
                f = dm * mc * acc[e];
                gg = dm * sm.bet[i] * mc;
            }
            sm.S4[i * C + j] = f;
            sm.S3[i * C + j] = gg;
        }
    });
    block_sync();
    if (tid < C) {
        float t = 0;
        for (int j = 0; j < C; j++) t += sm.S4[tid * C + j];
        sm.dbet[tid] += t;
        sm.dgam[tid] += sm.bet[tid] * t;
    } else if (tid < 2 * C) {
        int j = tid - C;
        float t = 0;
        for (int i = 0; i < C; i++) t += sm.bet[i] * sm.S4[i * C + j];
        sm.e2[j] = t;
    }
    for_tiles(C, dk, [&](int m0, int n0) {
        float acc[4] = {0, 0, 0, 0};
        tile_mma<kTC>(acc, view<float>(sm.S3, C, 1), view<T>(sm.K, dk, 1), m0, n0, C);
        tile_mma<kTC>(acc, view<float>(sm.S3, 1, C), view<T>(sm.K, dk, 1), m0, n0, C);
        for (int e = 0; e < 4; e++) sm.dK[acc_row(m0, e) * dk + acc_col(n0, e)] += acc[e];
    });
    block_sync();
    if (tid < C) sm.dgam[tid] -= sm.e2[tid];
    block_sync();
    /* g. outputs; dg_j = sum_{i >= j} dgam_i inside the chunk */
    T *dkc = dk_out + s.tok(b, c * C, h) * dk;
    for (int i = tid; i < L * dk; i += blockDim.x) {
        int r = i / dk, j = i - r * dk;
        dkc[(size_t)r * ldk + j] = from_f<T>(sm.dK[i]);
    }
    if (tid == 0) {
        float run = 0;
        for (int i = L - 1; i >= 0; i--) {
            size_t it = s.tok(b, c * C + i, h);
            run += sm.dgam[i];
            dg[it] = run;
            dbeta[it] = sm.dbet[i];
        }
    }
}

/* ------------------------------------------------------------------ host */

template <typename T>
static void core_backward(gf_backend *be, const GdnShape &s, gf_buf dq, gf_buf dk, gf_buf dv, gf_buf dg,
                          gf_buf dbeta, gf_buf d_o, gf_buf q, gf_buf k, gf_buf v, gf_buf g, gf_buf beta, gf_buf ckpt) {
    const char *op = "gdn_core_backward";
    cudaStream_t st = cuda_stream(be);
    (void)st;
    size_t nbhc = (size_t)s.B * s.H * s.NC;
    int nslab = s.dv / gdn_slab(s.dv);
    void *gam = nullptr, *W = nullptr, *U = nullptr, *A = nullptr, *dV = nullptr, *dhs = nullptr, *hsum = nullptr;
    bool ok = gdn_scratch(be, &gam, nbhc * s.C * sizeof(float), op) &&
              gdn_scratch(be, &W, nbhc * s.C * s.dk * sizeof(T), op) &&
              gdn_scratch(be, &U, nbhc * s.C * s.dv * sizeof(T), op) &&
              gdn_scratch(be, &A, nbhc * s.C * s.C * sizeof(float), op) &&
              gdn_scratch(be, &dV, nbhc * s.C * s.dv * sizeof(float), op) &&
              gdn_scratch(be, &dhs, nbhc * s.dv * s.dk * sizeof(float), op) &&
              gdn_scratch(be, &hsum, nbhc * nslab * sizeof(float), op);
    size_t smw, smv, sms, sml;
    WySmem<T>::carve(nullptr, s, &smw);
    BwdVSmem<T>::carve(nullptr, s, &smv);
    BwdStateSmem<T>::carve(nullptr, s, &sms);
    BwdLocalSmem<T>::carve(nullptr, s, &sml);
    ok = ok && gdn_smem_limit(be, gdn_wy_kernel<T>, smw, op) && gdn_smem_limit(be, gdn_bwd_v_kernel<T>, smv, op) &&
         gdn_smem_limit(be, gdn_bwd_state_kernel<T>, sms, op) && gdn_smem_limit(be, gdn_bwd_local_kernel<T>, sml, op);
    if (ok) {
        const T *qp = (const T *)q.ptr, *kp = (const T *)k.ptr, *vp = (const T *)v.ptr, *op_ = (const T *)d_o.ptr;
        const float *ck = (const float *)ckpt.ptr;
        dim3 chunks(s.NC, s.H, s.B), slabs(nslab, s.H, s.B);
        GDN_LAUNCH(gdn_wy_kernel<T>, chunks, dim3(GDN_THREADS), smw, st, s, kp, vp, (const float *)g.ptr,
                   (const float *)beta.ptr, (T *)W, (T *)U, (float *)gam, (float *)A);
        CUDA_CHECK_LAUNCH(be, "gdn_core_backward (wy)");
        GDN_LAUNCH(gdn_bwd_v_kernel<T>, chunks, dim3(GDN_THREADS), smv, st, s, qp, kp, op_, (const T *)W, (T *)U,
                   (const float *)gam, ck, (float *)dV);
        CUDA_CHECK_LAUNCH(be, "gdn_core_backward (V')");
        GDN_LAUNCH(gdn_bwd_state_kernel<T>, slabs, dim3(GDN_THREADS), sms, st, s, qp, kp, op_, (const T *)W,
                   (const float *)gam, ck, (float *)dV, (float *)dhs, (float *)hsum);
        CUDA_CHECK_LAUNCH(be, "gdn_core_backward (state pass)");
        GDN_LAUNCH(gdn_bwd_local_kernel<T>, chunks, dim3(GDN_THREADS_BWD), sml, st, s, qp, kp, vp,
                   (const float *)beta.ptr, op_, (const float *)gam, (const float *)A, (const T *)U, (const float *)dV,
                   ck, (const float *)dhs, (const float *)hsum, (T *)dq.ptr, (T *)dk.ptr, (T *)dv.ptr,
                   (float *)dg.ptr, (float *)dbeta.ptr);
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
    if (pad)
        gdn_core_backward_padded(be, dq, dk, dv, dg, dbeta, d_o, q, k, v, g, beta, ckpt, s);
    else if (act == GF_BF16)
        core_backward<bf16>(be, gs, dq, dk, dv, dg, dbeta, d_o, q, k, v, g, beta, ckpt);
    else
        core_backward<float>(be, gs, dq, dk, dv, dg, dbeta, d_o, q, k, v, g, beta, ckpt);
}
