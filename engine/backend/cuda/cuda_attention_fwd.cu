/* Causal GQA attention, forward, on the tensor cores (flash-attention-2
 * style): bf16 q, k, v; fp32 scores, online softmax and output accumulation;
 * the per-head statistics of METHOD.md section 4 in the same pass, never a
 * T x T matrix.
 *
 * Blocking. A block owns BR = 64 query rows of one (sequence, KV head): the
 * rows of the whole query group packed as (t, head of the group), row
 * r -> t = r / G, head = kvh G + r % G, so each key/value tile read into
 * shared memory serves every head that reads it (and a decode step, T = 1,
 * fills G rows instead of 1). Four warps own 16 rows each. Key/value tiles
 * of BC = 64 rows stream through a double buffer filled by cp.async while
 * the previous tile is computed. Per tile and warp: S = Q K^T (mma m16n8k16,
 * K fragments by ldmatrix), mask (key j > query position i), online softmax
 * in log2 units, O += P V (P from the S accumulators repacked as bf16 A
 * fragments, V fragments by ldmatrix.trans).
 *
 * Statistics (STATS): each thread keeps, for its two rows, partial sums over
 * its columns of e = 2^(x - m), e (x - m) and e (i - j), key 0 excluded and
 * its score kept apart, plus the diagonal's score; all rescale with the
 * running max (attention.cuh, attn_finish_row, says how they become the five
 * statistics). The (i - j) sum is formed per tile as (i - jb) sum e - sum e c
 * with c = j - jb a compile-time column offset, one multiply-add per element. */
#include "backend/cuda/cuda_attention.cuh"
#include "backend/cuda/cuda_mma.cuh"

#define BR 64
#define BC 64
#define NWARPS 4

template <int HD> struct fwd_smem {
    static constexpr int LDS = HD + 8; /* row stride in bf16: 16 bytes of padding, conflict-free ldmatrix */
    static constexpr int Q = BR * LDS, KV = BC * LDS;
    static constexpr size_t bytes = (size_t)(Q + 4 * KV) * sizeof(bf16); /* Q, K[2], V[2] */
};

template <int HD, bool STATS>
__global__ void __launch_bounds__(NWARPS * 32) attn_fwd_mma_kernel(const attn_fwd_params p) {
    constexpr int LDS = fwd_smem<HD>::LDS, CPR = HD / 8; /* 16-byte chunks per row */
    extern __shared__ __align__(16) unsigned char smem_raw[];
    bf16 *Qs = (bf16 *)smem_raw;
    bf16 *Ks = Qs + fwd_smem<HD>::Q;
    bf16 *Vs = Ks + 2 * fwd_smem<HD>::KV;

    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, gid = lane >> 2, tig = lane & 3;
    const int kvh = blockIdx.x, b = blockIdx.y, tile = p.n_tiles - 1 - (int)blockIdx.z; /* heaviest first */
    const int G = p.G, r0 = tile * BR, n_keys = p.pos0 + p.T;
    const bf16 *q = (const bf16 *)p.q, *k = (const bf16 *)p.k, *v = (const bf16 *)p.v;

    const int r_last = min(r0 + BR, p.rows) - 1;
    const int n_kt = (p.pos0 + r_last / G) / BC + 1; /* key tiles up to the block's last query position */

    /* Q tile: rows (t, head) -> q[b, t, head, :]; rows past the end are zero */
    for (int c = tid; c < BR * CPR; c += NWARPS * 32) {
        const int row = c / CPR, col = (c % CPR) * 8, r = r0 + row;
        const bool ok = r < p.rows;
        const int t = ok ? r / G : 0, h = kvh * G + (ok ? r % G : 0);
        cp_async16(Qs + row * LDS + col, q + (((size_t)b * p.T + t) * p.H + h) * HD + col, ok);
    }
    auto load_kv = [&](int kt, int buf) {
        bf16 *kd = Ks + buf * fwd_smem<HD>::KV, *vd = Vs + buf * fwd_smem<HD>::KV;
        for (int c = tid; c < BC * CPR; c += NWARPS * 32) {
            const int row = c / CPR, col = (c % CPR) * 8, j = kt * BC + row;
            const bool ok = j < n_keys;
            const size_t off = (((size_t)b * p.S + (ok ? j : 0)) * p.KV + kvh) * HD + col;
            cp_async16(kd + row * LDS + col, k + off, ok);
            cp_async16(vd + row * LDS + col, v + off, ok);
        }
    };
    load_kv(0, 0);
    cp_async_commit();

    /* this thread's two rows: a = gid, b = gid + 8 of the warp's 16 */
    const int rw0 = r0 + warp * 16;
    const bool warp_live = rw0 < p.rows;
    const int ra = rw0 + gid, rb = ra + 8;
    const int ia = p.pos0 + ra / G, ib = p.pos0 + rb / G;
    const int iw_min = p.pos0 + rw0 / G, iw_max = p.pos0 + min(rw0 + 15, p.rows - 1) / G;

    uint32_t qf[HD / 16][4];
    float o[HD / 8][4];
#pragma unroll
    for (int i = 0; i < HD / 8; i++) o[i][0] = o[i][1] = o[i][2] = o[i][3] = 0.0f;
    float m_a = -INFINITY, m_b = -INFINITY, l_a = 0, l_b = 0; /* STATS: l excludes key 0 */
    float w_a = 0, w_b = 0, d_a = 0, d_b = 0;
    float xd_a = MASKED_SCORE, xd_b = MASKED_SCORE, x0_a = MASKED_SCORE, x0_b = MASKED_SCORE;

    for (int kt = 0; kt < n_kt; kt++) {
        const int buf = kt & 1;
        if (kt + 1 < n_kt) load_kv(kt + 1, buf ^ 1);
        cp_async_commit();
        cp_async_wait<1>(); /* tile kt (and Q) landed; kt + 1 may still be in flight */
        __syncthreads();
        if (kt == 0 && warp_live) {
#pragma unroll
            for (int kk = 0; kk < HD / 16; kk++)
                ldsm_x4(qf[kk], Qs + (warp * 16 + (lane & 15)) * LDS + kk * 16 + (lane >> 4) * 8);
        }
        if (warp_live && kt * BC <= iw_max) {
            const bf16 *Kb = Ks + buf * fwd_smem<HD>::KV, *Vb = Vs + buf * fwd_smem<HD>::KV;
            float s[BC / 8][4];
#pragma unroll
            for (int i = 0; i < BC / 8; i++) s[i][0] = s[i][1] = s[i][2] = s[i][3] = 0.0f;
#pragma unroll
            for (int kk = 0; kk < HD / 16; kk++) {
#pragma unroll
                for (int np = 0; np < BC / 16; np++) {
                    uint32_t bk[4];
                    ldsm_x4(bk, Kb + (np * 16 + (lane >> 4) * 8 + (lane & 7)) * LDS + kk * 16 + ((lane >> 3) & 1) * 8);
                    mma_bf16(s[2 * np], qf[kk], bk[0], bk[1]);
                    mma_bf16(s[2 * np + 1], qf[kk], bk[2], bk[3]);
                }
            }
            /* scale to log2 units; mask keys past each row's position (only tiles
             * reaching the warp's first position need it; they hold every diagonal) */
            const int jb = kt * BC + tig * 2;
            const bool masked = kt * BC + BC - 1 >= iw_min;
#pragma unroll
            for (int nt = 0; nt < BC / 8; nt++)
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    const int j = jb + nt * 8 + e;
                    float xa = s[nt][e] * p.scale_log2, xb = s[nt][2 + e] * p.scale_log2;
                    if (masked) {
                        if (STATS) {
                            if (j == ia) xd_a = xa;
                            if (j == ib) xd_b = xb;
                        }
                        if (j > ia) xa = MASKED_SCORE;
                        if (j > ib) xb = MASKED_SCORE;
                    }
                    s[nt][e] = xa;
                    s[nt][2 + e] = xb;
                }
            const bool has_key0 = STATS && kt == 0 && tig == 0;
            if (has_key0) {
                x0_a = s[0][0];
                x0_b = s[0][2];
            }
            float mx_a = MASKED_SCORE, mx_b = MASKED_SCORE;
#pragma unroll
            for (int nt = 0; nt < BC / 8; nt++) {
                mx_a = fmaxf(mx_a, fmaxf(s[nt][0], s[nt][1]));
                mx_b = fmaxf(mx_b, fmaxf(s[nt][2], s[nt][3]));
            }
            const float mn_a = fmaxf(m_a, quad_max(mx_a)), mn_b = fmaxf(m_b, quad_max(mx_b));
            const float al_a = exp2f(m_a - mn_a), al_b = exp2f(m_b - mn_b); /* 0 on the first tile */
            float rs_a = 0, rs_b = 0, ws_a = 0, ws_b = 0, cs_a = 0, cs_b = 0;
#pragma unroll
            for (int nt = 0; nt < BC / 8; nt++)
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    const float ya = s[nt][e] - mn_a, yb = s[nt][2 + e] - mn_b;
                    const float pa = exp2f(ya), pb = exp2f(yb);
                    s[nt][e] = pa;
                    s[nt][2 + e] = pb;
                    if (STATS) {
                        const bool key0 = nt == 0 && e == 0 && has_key0;
                        const float ea = key0 ? 0.0f : pa, eb = key0 ? 0.0f : pb;
                        rs_a += ea;
                        rs_b += eb;
                        ws_a += ea * ya;
                        ws_b += eb * yb;
                        cs_a += ea * (float)(nt * 8 + e);
                        cs_b += eb * (float)(nt * 8 + e);
                    } else {
                        rs_a += pa;
                        rs_b += pb;
                    }
                }
            if (STATS) {
                /* w is relative to the max: moving the max from m to mn shifts every term by (m - mn) */
                w_a = kt == 0 ? ws_a : al_a * (w_a + (m_a - mn_a) * l_a) + ws_a;
                w_b = kt == 0 ? ws_b : al_b * (w_b + (m_b - mn_b) * l_b) + ws_b;
                d_a = d_a * al_a + (float)(ia - jb) * rs_a - cs_a;
                d_b = d_b * al_b + (float)(ib - jb) * rs_b - cs_b;
            }
            l_a = l_a * al_a + rs_a;
            l_b = l_b * al_b + rs_b;
            m_a = mn_a;
            m_b = mn_b;
#pragma unroll
            for (int dt = 0; dt < HD / 8; dt++) {
                o[dt][0] *= al_a;
                o[dt][1] *= al_a;
                o[dt][2] *= al_b;
                o[dt][3] *= al_b;
            }
#pragma unroll
            for (int kk = 0; kk < BC / 16; kk++) {
                const uint32_t a[4] = {pack_bf16(s[2 * kk][0], s[2 * kk][1]), pack_bf16(s[2 * kk][2], s[2 * kk][3]),
                                       pack_bf16(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                                       pack_bf16(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
                for (int dp = 0; dp < HD / 16; dp++) {
                    uint32_t bv[4];
                    ldsm_x4_t(bv, Vb + (kk * 16 + ((lane >> 3) & 1) * 8 + (lane & 7)) * LDS + dp * 16 + (lane >> 4) * 8);
                    mma_bf16(o[2 * dp], a, bv[0], bv[1]);
                    mma_bf16(o[2 * dp + 1], a, bv[2], bv[3]);
                }
            }
        }
        __syncthreads(); /* everyone is done with buffer kt before kt + 2 is loaded into it */
    }
    cp_async_wait<0>();

    /* ---- finish: the quad's partial sums, normalize, store, statistics */
    float *rowstat = (float *)smem_raw; /* [BR][GF_STAT_COUNT], over Q (no longer read) */
    if (warp_live) {
        l_a = quad_sum(l_a);
        l_b = quad_sum(l_b);
        float L_a = l_a, L_b = l_b;
        attn_row_stats sa, sb;
        if (STATS) {
            w_a = quad_sum(w_a);
            w_b = quad_sum(w_b);
            d_a = quad_sum(d_a);
            d_b = quad_sum(d_b);
            xd_a = quad_max(xd_a);
            xd_b = quad_max(xd_b);
            x0_a = __shfl_sync(0xffffffffu, x0_a, lane & ~3);
            x0_b = __shfl_sync(0xffffffffu, x0_b, lane & ~3);
            sa = attn_finish_row(m_a, l_a, w_a, d_a, x0_a, xd_a, ia);
            sb = attn_finish_row(m_b, l_b, w_b, d_b, x0_b, xd_b, ib);
            L_a = sa.L;
            L_b = sb.L;
        }
        const float inv_a = 1.0f / L_a, inv_b = 1.0f / L_b;
        float ss_a = 0, ss_b = 0;
#pragma unroll
        for (int dt = 0; dt < HD / 8; dt++) {
            o[dt][0] *= inv_a;
            o[dt][1] *= inv_a;
            o[dt][2] *= inv_b;
            o[dt][3] *= inv_b;
            ss_a += o[dt][0] * o[dt][0] + o[dt][1] * o[dt][1];
            ss_b += o[dt][2] * o[dt][2] + o[dt][3] * o[dt][3];
        }
        bf16 *out = (bf16 *)p.out;
#pragma unroll
        for (int half = 0; half < 2; half++) {
            const int r = half ? rb : ra;
            if (r >= p.rows) continue;
            const int t = r / G, h = kvh * G + r % G;
            bf16 *dst = out + (((size_t)b * p.T + t) * p.H + h) * HD + tig * 2;
#pragma unroll
            for (int dt = 0; dt < HD / 8; dt++)
                *(uint32_t *)(dst + dt * 8) = half ? pack_bf16(o[dt][2], o[dt][3]) : pack_bf16(o[dt][0], o[dt][1]);
            const float m = half ? m_b : m_a, L = half ? L_b : L_a;
            if (p.lse && tig == 0) p.lse[((size_t)b * p.H + h) * p.T + t] = (m + log2f(L)) * LN2_F;
        }
        if (STATS) {
            ss_a = quad_sum(ss_a);
            ss_b = quad_sum(ss_b);
            if (tig == 0) {
                float *ra_s = rowstat + (warp * 16 + gid) * GF_STAT_COUNT;
                float *rb_s = rowstat + (warp * 16 + gid + 8) * GF_STAT_COUNT;
                ra_s[GF_STAT_DISTANCE] = sa.dist;
                ra_s[GF_STAT_ENTROPY] = sa.ent;
                ra_s[GF_STAT_OUT_RMS] = sqrtf(ss_a / HD);
                ra_s[GF_STAT_DIST_NOSINK] = sa.nosink;
                ra_s[GF_STAT_SINK] = sa.sink;
                rb_s[GF_STAT_DISTANCE] = sb.dist;
                rb_s[GF_STAT_ENTROPY] = sb.ent;
                rb_s[GF_STAT_OUT_RMS] = sqrtf(ss_b / HD);
                rb_s[GF_STAT_DIST_NOSINK] = sb.nosink;
                rb_s[GF_STAT_SINK] = sb.sink;
            }
        }
    }
    if (STATS) {
        __syncthreads();
        /* per head of the group: the block's rows of that head, summed in double
         * into its row of stat_parts (every column written, zeros included) */
        double *part = p.stat_parts + ((size_t)b * p.n_tiles + tile) * p.H * GF_STAT_COUNT;
        for (int idx = tid; idx < G * GF_STAT_COUNT; idx += NWARPS * 32) {
            const int gl = idx / GF_STAT_COUNT, st = idx % GF_STAT_COUNT;
            double sum = 0;
            for (int row = ((gl - r0 % G) % G + G) % G; row < BR && r0 + row < p.rows; row += G)
                sum += rowstat[row * GF_STAT_COUNT + st];
            part[(kvh * G + gl) * GF_STAT_COUNT + st] = sum;
        }
    }
}

template <int HD, bool STATS> static void launch(gf_backend *be, const attn_fwd_params &p) {
    const size_t bytes = fwd_smem<HD>::bytes;
    cudaFuncSetAttribute(attn_fwd_mma_kernel<HD, STATS>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
    dim3 grid((unsigned)p.KV, (unsigned)p.B, (unsigned)p.n_tiles);
    attn_fwd_mma_kernel<HD, STATS><<<grid, NWARPS * 32, bytes, cuda_stream(be)>>>(p);
}

static int n_tiles_of(const attn_fwd_params &p) { return (int)(((size_t)p.T * p.G + BR - 1) / BR); }

bool attn_fwd_mma_takes(gf_backend *be, const attn_fwd_params &p) {
    return be->act == GF_BF16 && (p.hd == 64 || p.hd == 128) && cuda_aligned16(p.q) && cuda_aligned16(p.k) &&
           cuda_aligned16(p.v) && cuda_aligned16(p.out) && (size_t)p.T * p.G < ((size_t)1 << 31) &&
           n_tiles_of(p) <= 65535 && p.B <= 65535;
}

size_t attn_fwd_mma_parts(const attn_fwd_params &p) { return (size_t)p.B * n_tiles_of(p); }

void attn_fwd_mma_launch(gf_backend *be, const attn_fwd_params &p_in) {
    attn_fwd_params p = p_in;
    p.rows = p.T * p.G;
    p.n_tiles = n_tiles_of(p);
    const bool stats = p.stats != NULL;
    if (p.hd == 64) stats ? launch<64, true>(be, p) : launch<64, false>(be, p);
    else stats ? launch<128, true>(be, p) : launch<128, false>(be, p);
}
