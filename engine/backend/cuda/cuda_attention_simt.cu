/* Exact attention on the ordinary cores: fp32 arithmetic over f32 or bf16
 * storage, any head dim up to 256. It runs the checking mode (ACT = f32),
 * and the shapes the tensor-core kernels do not take (head dims other than 64
 * and 128, unaligned views). One warp per query row: lanes take 32 keys at a
 * time for the scores, then the head dims for the weighted sum of values.
 * The statistics use the same sums as the tensor-core kernel
 * (attention.cuh), here with the distance of each key directly. */
#include "backend/cuda/cuda_attention.cuh"

#define WARPS 4
#define MAX_HD 256
#define PER_LANE (MAX_HD / 32)

template <typename T, bool STATS> __global__ void __launch_bounds__(WARPS * 32) attn_fwd_simt_kernel(const attn_fwd_params p) {
    __shared__ float qs[WARPS][MAX_HD];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, hd = p.hd;
    const size_t row = (size_t)blockIdx.x * WARPS + warp; /* (b, t, h) */
    if (row >= (size_t)p.B * p.T * p.H) return;
    const int h = (int)(row % p.H), t = (int)((row / p.H) % p.T), b = (int)(row / ((size_t)p.H * p.T));
    const int kvh = h / p.G, i = p.pos0 + t;
    const T *qr = (const T *)p.q + row * hd;
    for (int d = lane; d < hd; d += 32) qs[warp][d] = to_f(qr[d]) * p.scale_log2;
    __syncwarp();
    const size_t kstride = (size_t)p.KV * hd;
    const T *kb = (const T *)p.k + ((size_t)b * p.S * p.KV + kvh) * hd;
    const T *vb = (const T *)p.v + ((size_t)b * p.S * p.KV + kvh) * hd;

    float o[PER_LANE];
#pragma unroll
    for (int u = 0; u < PER_LANE; u++) o[u] = 0;
    float m = -INFINITY, l = 0, w = 0, dsum = 0, xd = MASKED_SCORE, x0 = MASKED_SCORE;
    for (int j0 = 0; j0 <= i; j0 += 32) {
        const int j = j0 + lane;
        float x = MASKED_SCORE;
        if (j <= i) {
            const T *kr = kb + (size_t)j * kstride;
            float acc = 0;
            for (int d = 0; d < hd; d++) acc += qs[warp][d] * to_f(kr[d]);
            x = acc;
        }
        if (STATS) {
            if (j == i) xd = x;
            if (j == 0) x0 = x;
        }
        const float mn = fmaxf(m, warp_max(x));
        const float al = exp2f(m - mn), y = x - mn, pj = exp2f(y);
        if (STATS) {
            const float e = j == 0 ? 0.0f : pj;
            w = j0 == 0 ? e * y : al * (w + (m - mn) * l) + e * y;
            dsum = dsum * al + e * (float)(i - j);
            l = l * al + e;
        } else {
            l = l * al + pj;
        }
        m = mn;
#pragma unroll
        for (int u = 0; u < PER_LANE; u++) o[u] *= al;
        const int jn = min(32, i - j0 + 1);
        for (int jj = 0; jj < jn; jj++) {
            const float pw = __shfl_sync(0xffffffffu, pj, jj);
            const T *vr = vb + (size_t)(j0 + jj) * kstride;
#pragma unroll
            for (int u = 0; u < PER_LANE; u++) {
                const int d = lane + 32 * u;
                if (d < hd) o[u] += pw * to_f(vr[d]);
            }
        }
    }
    l = warp_sum(l);
    float L = l;
    attn_row_stats st;
    if (STATS) {
        w = warp_sum(w);
        dsum = warp_sum(dsum);
        xd = warp_max(xd);
        x0 = __shfl_sync(0xffffffffu, x0, 0);
        st = attn_finish_row(m, l, w, dsum, x0, xd, i);
        L = st.L;
    }
    const float inv = 1.0f / L;
    float ss = 0;
    T *orow = (T *)p.out + row * hd;
#pragma unroll
    for (int u = 0; u < PER_LANE; u++) {
        const int d = lane + 32 * u;
        if (d < hd) {
            const float y = o[u] * inv;
            orow[d] = from_f<T>(y);
            ss += y * y;
        }
    }
    if (p.lse && lane == 0) p.lse[((size_t)b * p.H + h) * p.T + t] = (m + log2f(L)) * LN2_F;
    if (STATS) {
        ss = warp_sum(ss);
        if (lane == 0) { /* stat_parts [B T, H * 5]: this row's own entries */
            double *sp = p.stat_parts + row * GF_STAT_COUNT;
            sp[GF_STAT_DISTANCE] = st.dist;
            sp[GF_STAT_ENTROPY] = st.ent;
            sp[GF_STAT_OUT_RMS] = sqrtf(ss / hd);
            sp[GF_STAT_DIST_NOSINK] = st.nosink;
            sp[GF_STAT_SINK] = st.sink;
        }
    }
}

size_t attn_fwd_simt_parts(const attn_fwd_params &p) { return (size_t)p.B * p.T; }

void attn_fwd_simt_launch(gf_backend *be, const attn_fwd_params &p) {
    const size_t rows = (size_t)p.B * p.T * p.H;
    const unsigned grid = (unsigned)((rows + WARPS - 1) / WARPS);
    const bool bf = be->act == GF_BF16, stats = p.stats != NULL;
    cudaStream_t s = cuda_stream(be);
    if (bf) cuda_launch(grid, WARPS * 32, 0, s, stats ? attn_fwd_simt_kernel<bf16, true> : attn_fwd_simt_kernel<bf16, false>, p);
    else cuda_launch(grid, WARPS * 32, 0, s, stats ? attn_fwd_simt_kernel<float, true> : attn_fwd_simt_kernel<float, false>, p);
}

/* ------------------------------------------------------------- backward */

/* dq[b, t, h] = scale sum_{j <= t} dS_tj k_j, dS = P (dP - D), recomputed per key (pos0 = 0, S = T). */
template <typename T> __global__ void __launch_bounds__(WARPS * 32) attn_bwd_dq_simt_kernel(const attn_bwd_params p) {
    __shared__ float qs[WARPS][MAX_HD], gs[WARPS][MAX_HD];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, hd = p.hd;
    const size_t row = (size_t)blockIdx.x * WARPS + warp;
    if (row >= (size_t)p.B * p.T * p.H) return;
    const int h = (int)(row % p.H), t = (int)((row / p.H) % p.T), b = (int)(row / ((size_t)p.H * p.T));
    const int kvh = h / p.G;
    for (int d = lane; d < hd; d += 32) {
        qs[warp][d] = to_f(((const T *)p.q)[row * hd + d]);
        gs[warp][d] = to_f(((const T *)p.dout)[row * hd + d]);
    }
    __syncwarp();
    const float lse = p.lse[((size_t)b * p.H + h) * p.T + t], Dt = p.Dr[row];
    const size_t kstride = (size_t)p.KV * hd;
    const T *kb = (const T *)p.k + ((size_t)b * p.T * p.KV + kvh) * hd;
    const T *vb = (const T *)p.v + ((size_t)b * p.T * p.KV + kvh) * hd;
    float acc[PER_LANE];
#pragma unroll
    for (int u = 0; u < PER_LANE; u++) acc[u] = 0;
    for (int j0 = 0; j0 <= t; j0 += 32) {
        const int j = j0 + lane;
        float ds = 0;
        if (j <= t) {
            const T *kr = kb + (size_t)j * kstride, *vr = vb + (size_t)j * kstride;
            float s = 0, dp = 0;
            for (int d = 0; d < hd; d++) {
                s += qs[warp][d] * to_f(kr[d]);
                dp += gs[warp][d] * to_f(vr[d]);
            }
            const float pj = expf(s * p.scale - lse);
            ds = pj * (dp - Dt);
        }
        const int jn = min(32, t - j0 + 1);
        for (int jj = 0; jj < jn; jj++) {
            const float c = __shfl_sync(0xffffffffu, ds, jj);
            const T *kr = kb + (size_t)(j0 + jj) * kstride;
#pragma unroll
            for (int u = 0; u < PER_LANE; u++) {
                const int d = lane + 32 * u;
                if (d < hd) acc[u] += c * to_f(kr[d]);
            }
        }
    }
#pragma unroll
    for (int u = 0; u < PER_LANE; u++) {
        const int d = lane + 32 * u;
        if (d < hd) ((T *)p.dq)[row * hd + d] = from_f<T>(acc[u] * p.scale);
    }
}

/* dk, dv [b, j, kvh] summed over the query heads of the group and rows t >= j. */
template <typename T> __global__ void __launch_bounds__(WARPS * 32) attn_bwd_dkdv_simt_kernel(const attn_bwd_params p) {
    __shared__ float ks[WARPS][MAX_HD], vs[WARPS][MAX_HD];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, hd = p.hd;
    const size_t row = (size_t)blockIdx.x * WARPS + warp; /* (b, j, kvh) */
    if (row >= (size_t)p.B * p.T * p.KV) return;
    const int kvh = (int)(row % p.KV), j = (int)((row / p.KV) % p.T), b = (int)(row / ((size_t)p.KV * p.T));
    for (int d = lane; d < hd; d += 32) {
        ks[warp][d] = to_f(((const T *)p.k)[row * hd + d]);
        vs[warp][d] = to_f(((const T *)p.v)[row * hd + d]);
    }
    __syncwarp();
    float dk[PER_LANE], dv[PER_LANE];
#pragma unroll
    for (int u = 0; u < PER_LANE; u++) dk[u] = dv[u] = 0;
    const size_t qstride = (size_t)p.H * hd;
    for (int g = 0; g < p.G; g++) {
        const int h = kvh * p.G + g;
        const T *qb = (const T *)p.q + ((size_t)b * p.T * p.H + h) * hd;
        const T *gb = (const T *)p.dout + ((size_t)b * p.T * p.H + h) * hd;
        for (int t0 = j; t0 < p.T; t0 += 32) {
            const int t = t0 + lane;
            float pt = 0, ds = 0;
            if (t < p.T) {
                const T *qr = qb + (size_t)t * qstride, *gr = gb + (size_t)t * qstride;
                float s = 0, dp = 0;
                for (int d = 0; d < hd; d++) {
                    s += to_f(qr[d]) * ks[warp][d];
                    dp += to_f(gr[d]) * vs[warp][d];
                }
                pt = expf(s * p.scale - p.lse[((size_t)b * p.H + h) * p.T + t]);
                ds = pt * (dp - p.Dr[((size_t)b * p.T + t) * p.H + h]);
            }
            const int tn = min(32, p.T - t0);
            for (int tt = 0; tt < tn; tt++) {
                const float cp = __shfl_sync(0xffffffffu, pt, tt), cs = __shfl_sync(0xffffffffu, ds, tt);
                const T *qr = qb + (size_t)(t0 + tt) * qstride, *gr = gb + (size_t)(t0 + tt) * qstride;
#pragma unroll
                for (int u = 0; u < PER_LANE; u++) {
                    const int d = lane + 32 * u;
                    if (d < hd) {
                        dv[u] += cp * to_f(gr[d]);
                        dk[u] += cs * to_f(qr[d]);
                    }
                }
            }
        }
    }
#pragma unroll
    for (int u = 0; u < PER_LANE; u++) {
        const int d = lane + 32 * u;
        if (d < hd) {
            ((T *)p.dk)[row * hd + d] = from_f<T>(dk[u] * p.scale);
            ((T *)p.dv)[row * hd + d] = from_f<T>(dv[u]);
        }
    }
}

void attn_bwd_simt_launch(gf_backend *be, const attn_bwd_params &p) {
    cudaStream_t s = cuda_stream(be);
    const unsigned gq = (unsigned)(((size_t)p.B * p.T * p.H + WARPS - 1) / WARPS);
    const unsigned gk = (unsigned)(((size_t)p.B * p.T * p.KV + WARPS - 1) / WARPS);
    if (be->act == GF_BF16) {
        cuda_launch(gq, WARPS * 32, 0, s, attn_bwd_dq_simt_kernel<bf16>, p);
        cuda_launch(gk, WARPS * 32, 0, s, attn_bwd_dkdv_simt_kernel<bf16>, p);
    } else {
        cuda_launch(gq, WARPS * 32, 0, s, attn_bwd_dq_simt_kernel<float>, p);
        cuda_launch(gk, WARPS * 32, 0, s, attn_bwd_dkdv_simt_kernel<float>, p);
    }
}
