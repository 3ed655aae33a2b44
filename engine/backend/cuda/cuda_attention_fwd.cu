/* Causal GQA attention, forward, on the tensor cores (flash-attention-2
 * style): bf16 q, k, v; fp32 scores, online softmax and output accumulation;
 * the per-head statistics of METHOD.md section 4 in the same pass, never a
 * T x T matrix.
 *
 * Blocking. A block owns BR = 16 NW SL query rows of one (sequence, KV
 * head): the rows of the whole query group packed as (t, head of the group),
 * row r -> t = r / G, head = kvh G + r % G, so each key/value tile read into
 * shared memory serves every head that reads it (and a decode step, T = 1,
 * fills G rows instead of 1). NW warps own 16 SL rows each: SL m16 slabs
 * (SL = 2 halves the shared-memory reads of K and V per product, the limit of
 * mma.sync on Hopper, at the price of registers; Q is then re-read from shared
 * memory instead of kept in registers). Key/value tiles of BC rows stream
 * through a ring of NS buffers filled by cp.async while earlier tiles are
 * computed (one barrier per tile). The shape is a compile-time configuration
 * (cuda_attention_cfg.h lists them; bench_attention times each). Per tile and
 * warp: S = Q K^T (mma m16n8k16, K fragments by
 * ldmatrix), mask (key j > query position i), online softmax in log2 units,
 * O += P V (P from the S accumulators repacked as bf16 A fragments, V
 * fragments by ldmatrix.trans).
 *
 * Statistics (STATS): each thread keeps, for each of its rows, partial sums
 * over its columns of e = 2^(x - m), e (x - m) and e (i - j), key 0 excluded
 * and its score kept apart, plus the diagonal's score; all rescale with the
 * running max (cuda_attention.cuh, attn_finish_row, says how they become the
 * five statistics). The (i - j) sum is formed per tile as
 * (i - jb) sum e - sum e c with c = j - jb a compile-time column offset.
 *
 * Split (SPLIT): when the grid would not fill the GPU (a decode step, a short
 * chunk after a long cache), each row tile's key tiles are cut into ranges,
 * one block each; blocks leave unnormalized partial results (O, max, sums)
 * and attn_fwd_combine_kernel merges them per row. */
#include "backend/cuda/cuda_attention.cuh"
#include "backend/cuda/cuda_attention_cfg.h"
#include "backend/cuda/cuda_mma.cuh"

#define PART_SCALARS 6 /* m, l, w, d, xd, x0 */

/* One block shape (cuda_attention_cfg.h says what each field buys). */
template <int NW_, int SL_, int BC_, int NS_, int MINB_, int FOLD_> struct fwd_cfg {
    static constexpr int NW = NW_, SL = SL_, BC = BC_, NS = NS_, MINB = MINB_;
    static constexpr bool FOLD = FOLD_ != 0;
    static constexpr int NT = NW * 32, BR = 16 * NW * SL;
};

/* Shared memory, in bf16 elements: a ring of NS (K, V) tile pairs. SL = 1
 * stages Q through the ring's last pair (the prologue fills the others) and
 * keeps it in registers after the first tile; SL > 1 keeps Q in its own
 * region in front of the ring. */
template <int HD, class C> struct fwd_smem {
    static constexpr int LDS = HD + 8; /* row stride in bf16: 16 bytes of padding, conflict-free ldmatrix */
    static constexpr int Q = C::BR * LDS, KV = C::BC * LDS, RING = C::NS * 2 * KV;
    static constexpr int Q_OFF = C::SL == 1 ? (C::NS - 1) * 2 * KV : 0;
    static constexpr int RING_OFF = C::SL == 1 ? 0 : Q;
    static constexpr int total = C::SL == 1 ? (RING > Q_OFF + Q ? RING : Q_OFF + Q) : Q + RING;
    static constexpr size_t bytes = (size_t)total * sizeof(bf16);
};

template <int HD, class C, bool STATS, bool SPLIT>
__global__ void __launch_bounds__(C::NT, C::MINB) attn_fwd_mma_kernel(const attn_fwd_params p) {
    constexpr int SL = C::SL, BC = C::BC, NS = C::NS, NT = C::NT, BR = C::BR;
    constexpr bool FOLD = C::FOLD;
    constexpr int LDS = fwd_smem<HD, C>::LDS, KVE = fwd_smem<HD, C>::KV, CPR = HD / 8; /* 16-byte chunks per row */
    constexpr int R = 2 * SL; /* rows per thread: (slab, half) -> index 2 slab + half */
    CUDA_DYNAMIC_SMEM(smem_raw);
    bf16 *Qs = (bf16 *)smem_raw + fwd_smem<HD, C>::Q_OFF;
    bf16 *ring = (bf16 *)smem_raw + fwd_smem<HD, C>::RING_OFF; /* stage s: K at 2 s KVE, V at (2 s + 1) KVE */

    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, gid = lane >> 2, tig = lane & 3;
    const int n_split = SPLIT ? p.n_split : 1;
    const int kvh = blockIdx.x, b = blockIdx.y;
    const int tile = p.n_tiles - 1 - (int)blockIdx.z / n_split; /* heaviest first */
    const int split = SPLIT ? (int)blockIdx.z % n_split : 0;
    const int G = p.G, r0 = tile * BR, n_keys = p.pos0 + p.T;
    const bf16 *q = (const bf16 *)p.q, *k = (const bf16 *)p.k, *v = (const bf16 *)p.v;

    const int r_last = min(r0 + BR, p.rows) - 1;
    const int n_kt = (p.pos0 + r_last / G) / BC + 1; /* key tiles up to the block's last query position */
    const int kt_begin = SPLIT ? min(n_kt, split * p.kt_per_split) : 0;
    const int kt_end = SPLIT ? min(n_kt, kt_begin + p.kt_per_split) : n_kt;

    /* Q tile: rows (t, head) -> q[b, t, head, :]; rows past the end are zero.
     * Committed with the first K/V tile (one group). */
    for (int c = tid; c < BR * CPR; c += NT) {
        const int row = c / CPR, col = (c % CPR) * 8, r = r0 + row;
        const bool ok = r < p.rows;
        const int t = ok ? r / G : 0, h = kvh * G + (ok ? r % G : 0);
        cp_async16(Qs + row * LDS + col, q + (((size_t)b * p.T + t) * p.H + h) * HD + col, ok);
    }
    /* K/V tiles: each thread copies the 16-byte chunks (row ld_row + rr, columns (tid % CPR) 8 ..+7) for
     * rr = 0, LROWS, 2 LROWS, ...; the addresses are formed once here and a tile adds kt BC key rows
     * (forming them per chunk in 64-bit arithmetic took a quarter of the loop's instructions). */
    constexpr int LROWS = NT / CPR; /* rows one pass of the block's threads covers */
    static_assert(NT % CPR == 0, "a pass of the block's threads covers whole rows");
    const int ld_row = tid / CPR, ld_smem = ld_row * LDS + (tid % CPR) * 8;
    const size_t ld_off = ((size_t)b * p.S * p.KV + kvh) * HD + (tid % CPR) * 8; /* key 0's chunk */
    auto load_kv = [&](int kt, int stage) {
        bf16 *kd = ring + 2 * stage * KVE + ld_smem, *vd = kd + KVE;
        const int j0 = kt * BC + ld_row;
#pragma unroll
        for (int rr = 0; rr < BC; rr += LROWS) {
            if (BC % LROWS == 0 || ld_row + rr < BC) {
                const int j = j0 + rr;
                const bool ok = j < n_keys;
                const size_t off = ld_off + (size_t)(unsigned)(ok ? j : 0) * (unsigned)(p.KV * HD);
                cp_async16(kd + rr * LDS, k + off, ok);
                cp_async16(vd + rr * LDS, v + off, ok);
            }
        }
    };
    /* prologue: tiles kt_begin .. kt_begin + NS - 2 into stages 0 .. NS - 2, one group each (empty groups
     * keep the count) */
#pragma unroll
    for (int st = 0; st < NS - 1; st++) {
        if (kt_begin + st < kt_end) load_kv(kt_begin + st, st);
        cp_async_commit();
    }

    /* this thread's rows: slab s, half h -> rw0 + 16 s + 8 h + gid */
    const int rw0 = r0 + warp * 16 * SL;
    const bool warp_live = rw0 < p.rows;
    int ri[R], pos[R];
#pragma unroll
    for (int x = 0; x < R; x++) {
        ri[x] = rw0 + 16 * (x >> 1) + 8 * (x & 1) + gid;
        pos[x] = p.pos0 + ri[x] / G;
    }
    const int iw_min = p.pos0 + rw0 / G, iw_max = p.pos0 + min(rw0 + 16 * SL - 1, p.rows - 1) / G;

    uint32_t qf[SL == 1 ? HD / 16 : 1][4]; /* SL = 1: Q fragments stay in registers */
    float o[SL][HD / 8][4];
#pragma unroll
    for (int sl = 0; sl < SL; sl++)
#pragma unroll
        for (int i = 0; i < HD / 8; i++) o[sl][i][0] = o[sl][i][1] = o[sl][i][2] = o[sl][i][3] = 0.0f;
    float m[R], l[R], w[R], d[R], xd[R], x0[R]; /* STATS: l excludes key 0 */
#pragma unroll
    for (int x = 0; x < R; x++) {
        m[x] = -INFINITY;
        l[x] = w[x] = d[x] = 0.0f;
        xd[x] = x0[x] = MASKED_SCORE;
    }

    int stage = 0; /* (kt - kt_begin) % NS: the stage tile kt is in */
    for (int kt = kt_begin; kt < kt_end; kt++) {
        cp_async_wait<NS - 2>(); /* this thread's copies of tile kt (and Q) landed; later tiles may be in flight */
        __syncthreads();         /* everyone's landed; everyone is done with tile kt - 1 */
        if (SL == 1 && kt == kt_begin) {
            if (warp_live) {
#pragma unroll
                for (int kk = 0; kk < (SL == 1 ? HD / 16 : 1); kk++)
                    ldsm_x4(qf[kk], Qs + (warp * 16 + (lane & 15)) * LDS + kk * 16 + (lane >> 4) * 8);
            }
            __syncthreads(); /* Q's stage is free: the load below may overwrite it */
        }
        /* tile kt + NS - 1 into the stage tile kt - 1 left */
        const int ld_stage = stage == 0 ? NS - 1 : stage - 1;
        if (kt + NS - 1 < kt_end) load_kv(kt + NS - 1, ld_stage);
        cp_async_commit();
        if (warp_live && kt * BC <= iw_max) {
            const bf16 *Kb = ring + 2 * stage * KVE, *Vb = Kb + KVE;
            float s[SL][BC / 8][4];
#pragma unroll
            for (int sl = 0; sl < SL; sl++)
#pragma unroll
                for (int i = 0; i < BC / 8; i++) s[sl][i][0] = s[sl][i][1] = s[sl][i][2] = s[sl][i][3] = 0.0f;
#pragma unroll
            for (int kk = 0; kk < HD / 16; kk++) {
                uint32_t qa[SL][4];
#pragma unroll
                for (int sl = 0; sl < SL; sl++) {
                    if (SL == 1) {
#pragma unroll
                        for (int i = 0; i < 4; i++) qa[sl][i] = qf[SL == 1 ? kk : 0][i];
                    } else {
                        ldsm_x4(qa[sl], Qs + (warp * 16 * SL + sl * 16 + (lane & 15)) * LDS + kk * 16 + (lane >> 4) * 8);
                    }
                }
#pragma unroll
                for (int np = 0; np < BC / 16; np++) {
                    uint32_t bk[4];
                    ldsm_x4(bk, Kb + (np * 16 + (lane >> 4) * 8 + (lane & 7)) * LDS + kk * 16 + ((lane >> 3) & 1) * 8);
#pragma unroll
                    for (int sl = 0; sl < SL; sl++) {
                        mma_bf16(s[sl][2 * np], qa[sl], bk[0], bk[1]);
                        mma_bf16(s[sl][2 * np + 1], qa[sl], bk[2], bk[3]);
                    }
                }
            }
            /* scale to log2 units; mask keys past each row's position (only tiles
             * reaching the warp's first position need it; they hold every
             * diagonal: MASKED below, a compile-time branch so that the other
             * tiles carry no mask arithmetic). FOLD leaves the scores unscaled here: the row max scales
             * after the max (the same number, rounding being monotone) and each
             * score inside y's FMA below (one FMA instead of a multiply and a
             * subtraction; y changes by float rounding only). */
            const float sc = p.scale_log2;
            const int jb = kt * BC + tig * 2;
            const bool has_key0 = STATS && kt == 0 && tig == 0;
            auto softmax = [&](auto masked_tag) {
                constexpr bool MASKED = decltype(masked_tag)::value;
#pragma unroll
                for (int x = 0; x < R; x++) {
                    const int sl = x >> 1, c2 = 2 * (x & 1); /* accumulator entries c2, c2 + 1 are this row's */
                    float mx = MASKED_SCORE;
#pragma unroll
                    for (int nt = 0; nt < BC / 8; nt++)
#pragma unroll
                        for (int e = 0; e < 2; e++) {
                            const int j = jb + nt * 8 + e;
                            float xv = FOLD ? s[sl][nt][c2 + e] : s[sl][nt][c2 + e] * sc;
                            if (MASKED) {
                                if (STATS && j == pos[x]) xd[x] = FOLD ? xv * sc : xv;
                                if (j > pos[x]) xv = MASKED_SCORE;
                            }
                            if (!FOLD || MASKED) s[sl][nt][c2 + e] = xv;
                            mx = fmaxf(mx, xv);
                        }
                    if (has_key0) x0[x] = FOLD ? s[sl][0][c2] * sc : s[sl][0][c2]; /* key 0 is never masked */
                    mx = quad_max(mx);
                    /* MASKED_SCORE (log2 units already) while the row saw no key */
                    const float mn = fmaxf(m[x], FOLD && mx != MASKED_SCORE ? mx * sc : mx);
                    /* 2^(old max - new max): 1 exactly where the max stayed, 0 on the row's first keys */
                    const float al = mn == m[x] ? 1.0f : exp2_approx(m[x] - mn);
                    float rs = 0, ws = 0, cs = 0;
#pragma unroll
                    for (int nt = 0; nt < BC / 8; nt++)
#pragma unroll
                        for (int e = 0; e < 2; e++) {
                            const float y = FOLD ? fmaf(s[sl][nt][c2 + e], sc, -mn) : s[sl][nt][c2 + e] - mn;
                            /* a masked key is exactly 0 even where a row saw no key yet (mn = MASKED) */
                            float pv = exp2_approx(y);
                            if (MASKED && jb + nt * 8 + e > pos[x]) pv = 0.0f;
                            s[sl][nt][c2 + e] = pv;
                            if (STATS) {
                                const float ev = (nt == 0 && e == 0 && has_key0) ? 0.0f : pv;
                                rs += ev;
                                ws += ev * y;
                                cs += ev * (float)(nt * 8 + e);
                            } else {
                                rs += pv;
                            }
                        }
                    if (STATS) {
                        /* w is relative to the max: moving it from m to mn shifts every term by (m - mn) */
                        w[x] = kt == kt_begin ? ws : al * (w[x] + (m[x] - mn) * l[x]) + ws;
                        d[x] = d[x] * al + (float)(pos[x] - jb) * rs - cs;
                    }
                    l[x] = l[x] * al + rs;
                    m[x] = mn;
                    /* O follows the row's max only where it moved in some row of the warp;
                     * past a row's first tiles it seldom does (HD / 4 multiplies a row saved) */
                    if (__any_sync(0xffffffffu, al != 1.0f)) {
#pragma unroll
                        for (int dt = 0; dt < HD / 8; dt++) {
                            o[sl][dt][c2] *= al;
                            o[sl][dt][c2 + 1] *= al;
                        }
                    }
                }
            };
            if (kt * BC + BC - 1 >= iw_min) softmax(bool_tag<true>{});
            else softmax(bool_tag<false>{});
#pragma unroll
            for (int kk = 0; kk < BC / 16; kk++) {
                uint32_t a[SL][4];
#pragma unroll
                for (int sl = 0; sl < SL; sl++) {
                    a[sl][0] = pack_bf16(s[sl][2 * kk][0], s[sl][2 * kk][1]);
                    a[sl][1] = pack_bf16(s[sl][2 * kk][2], s[sl][2 * kk][3]);
                    a[sl][2] = pack_bf16(s[sl][2 * kk + 1][0], s[sl][2 * kk + 1][1]);
                    a[sl][3] = pack_bf16(s[sl][2 * kk + 1][2], s[sl][2 * kk + 1][3]);
                }
#pragma unroll
                for (int dp = 0; dp < HD / 16; dp++) {
                    uint32_t bv[4];
                    ldsm_x4_t(bv, Vb + (kk * 16 + ((lane >> 3) & 1) * 8 + (lane & 7)) * LDS + dp * 16 + (lane >> 4) * 8);
#pragma unroll
                    for (int sl = 0; sl < SL; sl++) {
                        mma_bf16(o[sl][2 * dp], a[sl], bv[0], bv[1]);
                        mma_bf16(o[sl][2 * dp + 1], a[sl], bv[2], bv[3]);
                    }
                }
            }
        }
        stage = stage == NS - 1 ? 0 : stage + 1;
    }
    cp_async_wait<0>();
    __syncthreads(); /* every warp is done with the ring before the finish reuses shared memory */

    /* ---- finish: the quad's partial sums, then either the split's partials or the rows */
    float *rowstat = (float *)smem_raw; /* [BR][GF_STAT_COUNT], over the ring and Q (no longer read) */
    if (warp_live) {
#pragma unroll
        for (int x = 0; x < R; x++) {
            l[x] = quad_sum(l[x]);
            if (STATS) {
                w[x] = quad_sum(w[x]);
                d[x] = quad_sum(d[x]);
                xd[x] = quad_max(xd[x]);
                x0[x] = __shfl_sync(0xffffffffu, x0[x], lane & ~3);
            }
        }
        if (SPLIT) {
#pragma unroll
            for (int x = 0; x < R; x++) {
                const int sl = x >> 1, c2 = 2 * (x & 1), r = ri[x];
                if (r >= p.rows) continue;
                const size_t idx = (((size_t)b * p.KV + kvh) * p.rows + r) * n_split + split;
                float *po = p.part_o + idx * HD + tig * 2;
#pragma unroll
                for (int dt = 0; dt < HD / 8; dt++) *(float2 *)(po + dt * 8) = make_float2(o[sl][dt][c2], o[sl][dt][c2 + 1]);
                if (tig == 0) {
                    float *ps = p.part_s + idx * PART_SCALARS;
                    ps[0] = m[x], ps[1] = l[x], ps[2] = w[x], ps[3] = d[x], ps[4] = xd[x], ps[5] = x0[x];
                }
            }
        } else {
            bf16 *out = (bf16 *)p.out;
#pragma unroll
            for (int x = 0; x < R; x++) {
                const int sl = x >> 1, c2 = 2 * (x & 1), r = ri[x];
                float L = l[x];
                attn_row_stats st;
                if (STATS) {
                    st = attn_finish_row(m[x], l[x], w[x], d[x], x0[x], xd[x], pos[x]);
                    L = st.L;
                }
                const float inv = 1.0f / L;
                float ss = 0;
#pragma unroll
                for (int dt = 0; dt < HD / 8; dt++) {
                    o[sl][dt][c2] *= inv;
                    o[sl][dt][c2 + 1] *= inv;
                    ss += o[sl][dt][c2] * o[sl][dt][c2] + o[sl][dt][c2 + 1] * o[sl][dt][c2 + 1];
                }
                if (STATS) ss = quad_sum(ss);
                if (r >= p.rows) continue;
                const int t = r / G, h = kvh * G + r % G;
                bf16 *dst = out + (((size_t)b * p.T + t) * p.H + h) * HD + tig * 2;
#pragma unroll
                for (int dt = 0; dt < HD / 8; dt++)
                    *(uint32_t *)(dst + dt * 8) = pack_bf16(o[sl][dt][c2], o[sl][dt][c2 + 1]);
                if (p.lse && tig == 0) p.lse[((size_t)b * p.H + h) * p.T + t] = (m[x] + log2f(L)) * LN2_F;
                if (STATS && tig == 0) {
                    float *rs = rowstat + (r - r0) * GF_STAT_COUNT;
                    rs[GF_STAT_DISTANCE] = st.dist;
                    rs[GF_STAT_ENTROPY] = st.ent;
                    rs[GF_STAT_OUT_RMS] = sqrtf(ss / HD);
                    rs[GF_STAT_DIST_NOSINK] = st.nosink;
                    rs[GF_STAT_SINK] = st.sink;
                }
            }
        }
    }
    if (STATS && !SPLIT) {
        __syncthreads();
        /* per head of the group: the block's rows of that head, summed in double
         * into its row of stat_parts (every column written, zeros included) */
        double *part = p.stat_parts + ((size_t)b * p.n_tiles + tile) * p.H * GF_STAT_COUNT;
        for (int idx = tid; idx < G * GF_STAT_COUNT; idx += NT) {
            const int gl = idx / GF_STAT_COUNT, st = idx % GF_STAT_COUNT;
            double sum = 0;
            for (int row = ((gl - r0 % G) % G + G) % G; row < BR && r0 + row < p.rows; row += G)
                sum += rowstat[row * GF_STAT_COUNT + st];
            part[(kvh * G + gl) * GF_STAT_COUNT + st] = sum;
        }
    }
}

/* Merges the splits of one row: one block of COMBINE_WARPS warps per
 * (sequence, KV head, packed row). Warp 0 reads the splits' scalars (lanes
 * over splits), forms the running max and each split's weight a_s into
 * shared memory; then the warps share the splits for O (lanes over the head
 * dims) and their partial rows are summed in a fixed order. A decode step has
 * only B KV G rows and up to ~2 x the multiprocessors' count of splits: one
 * warp walking the splits one after another was memory-latency bound (73 us
 * a layer at 8k keys, B 1). Writes the output, the log-sum-exp and the row's
 * statistics into stat_parts [B T, H GF_STAT_COUNT] (the SIMT layout). */
#define COMBINE_WARPS 8
static size_t combine_smem(const attn_fwd_params &p) {
    return ((size_t)p.n_split + (size_t)COMBINE_WARPS * p.hd + 8) * sizeof(float);
}
template <bool STATS> __global__ void __launch_bounds__(COMBINE_WARPS * 32) attn_fwd_combine_kernel(const attn_fwd_params p) {
    const size_t wid = blockIdx.x; /* the row */
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, hd = p.hd, ns = p.n_split;
    const int r = (int)(wid % p.rows), kvh = (int)((wid / p.rows) % p.KV), b = (int)(wid / ((size_t)p.rows * p.KV));
    const int t = r / p.G, h = kvh * p.G + r % p.G, i = p.pos0 + t;
    const float *ps = p.part_s + wid * ns * PART_SCALARS, *po = p.part_o + wid * ns * hd;
    CUDA_DYNAMIC_SMEM(smem_raw);
    float *as = (float *)smem_raw, *orow = as + ns, *sc = orow + COMBINE_WARPS * hd; /* sc: M, l, w, d, xd */
    if (warp == 0) {
        float M = -INFINITY;
        for (int s = lane; s < ns; s += 32) M = fmaxf(M, ps[s * PART_SCALARS]);
        M = warp_max(M);
        float l = 0, w = 0, d = 0, xd = MASKED_SCORE;
        for (int s = lane; s < ns; s += 32) {
            const float *q = ps + s * PART_SCALARS;
            float a = 0;
            if (q[0] > -1e29f) { /* else this split saw no key of this row: its parts are not written */
                a = exp2f(q[0] - M);
                l += a * q[1];
                w += a * (q[2] + (q[0] - M) * q[1]);
                d += a * q[3];
                xd = fmaxf(xd, q[4]);
            }
            as[s] = a;
        }
        l = warp_sum(l), w = warp_sum(w), d = warp_sum(d), xd = warp_max(xd);
        if (lane == 0) sc[0] = M, sc[1] = l, sc[2] = w, sc[3] = d, sc[4] = xd;
    }
    __syncthreads();
    float o[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    /* unrolled with the loads unconditional (a split that saw no key left its O
     * unwritten: read, then dropped by the select) so several are in flight */
#pragma unroll 4
    for (int s = warp; s < ns; s += COMBINE_WARPS) {
        const float a = as[s];
#pragma unroll
        for (int u = 0; u < 8; u++)
            if (lane + 32 * u < hd) {
                const float v = po[(size_t)s * hd + lane + 32 * u];
                o[u] += a > 0.f ? a * v : 0.f;
            }
    }
#pragma unroll
    for (int u = 0; u < 8; u++)
        if (lane + 32 * u < hd) orow[warp * hd + lane + 32 * u] = o[u];
    __syncthreads();
    if (warp != 0) return;
    const float M = sc[0], l = sc[1];
    float L = l;
    attn_row_stats st;
    if (STATS) {
        st = attn_finish_row(M, l, sc[2], sc[3], ps[5] /* key 0 is in the first split */, sc[4], i);
        L = st.L;
    }
    const float inv = 1.0f / L;
    float ss = 0;
    bf16 *dst = (bf16 *)p.out + (((size_t)b * p.T + t) * p.H + h) * hd;
    for (int u = 0; u < 8 && lane + 32 * u < hd; u++) {
        float sum = 0;
        for (int wj = 0; wj < COMBINE_WARPS; wj++) sum += orow[wj * hd + lane + 32 * u];
        const float y = sum * inv;
        dst[lane + 32 * u] = __float2bfloat16(y);
        ss += y * y;
    }
    if (p.lse && lane == 0) p.lse[((size_t)b * p.H + h) * p.T + t] = (M + log2f(L)) * LN2_F;
    if (STATS) {
        ss = warp_sum(ss);
        if (lane == 0) {
            double *sp = p.stat_parts + (((size_t)b * p.T + t) * p.H + h) * GF_STAT_COUNT;
            sp[GF_STAT_DISTANCE] = st.dist;
            sp[GF_STAT_ENTROPY] = st.ent;
            sp[GF_STAT_OUT_RMS] = sqrtf(ss / hd);
            sp[GF_STAT_DIST_NOSINK] = st.nosink;
            sp[GF_STAT_SINK] = st.sink;
        }
    }
}

/* ------------------------------------------------------------- launch */

template <int HD, class C, bool STATS, bool SPLIT> static void launch(gf_backend *be, const attn_fwd_params &p) {
    const size_t bytes = fwd_smem<HD, C>::bytes;
    const void *kern = (const void *)attn_fwd_mma_kernel<HD, C, STATS, SPLIT>;
    cuda_allow_smem(kern, bytes);
#ifndef GRAFT_CUDA_EMU
    /* min_blocks blocks of `bytes` each need the largest shared-memory carve-out */
    if (C::MINB > 1) cudaFuncSetAttribute(kern, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared);
#endif
    dim3 grid((unsigned)p.KV, (unsigned)p.B, (unsigned)(p.n_tiles * (SPLIT ? p.n_split : 1)));
    cuda_launch(grid, C::NT, bytes, cuda_stream(be), attn_fwd_mma_kernel<HD, C, STATS, SPLIT>, p);
}

template <int HD, class C> static void launch_hd(gf_backend *be, const attn_fwd_params &p) {
    const bool stats = p.stats != NULL, split = p.n_split > 1;
    if (split) stats ? launch<HD, C, true, true>(be, p) : launch<HD, C, false, true>(be, p);
    else stats ? launch<HD, C, true, false>(be, p) : launch<HD, C, false, false>(be, p);
}

template <class C> static void launch_cfg(gf_backend *be, const attn_fwd_params &p) {
    if (p.hd == 64) launch_hd<64, C>(be, p);
    else launch_hd<128, C>(be, p);
}

/* The configurations of cuda_attention_cfg.h: rows per block and keys per tile
 * (for the plan), and the launch of each. */
struct fwd_shape {
    int br, bc;
    void (*launch)(gf_backend *, const attn_fwd_params &);
};
#define ATTN_FWD_SHAPE(i, nw, sl, bc, ns, minb, fold, text) \
    {16 * (nw) * (sl), (bc), launch_cfg<fwd_cfg<(nw), (sl), (bc), (ns), (minb), (fold)>>},
static const fwd_shape fwd_shapes[] = {ATTN_FWD_CONFIG_LIST(ATTN_FWD_SHAPE)};
#undef ATTN_FWD_SHAPE
static_assert(sizeof fwd_shapes / sizeof fwd_shapes[0] == ATTN_FWD_CONFIGS, "ATTN_FWD_CONFIGS is the list's length");

/* attn_fwd_cfg_pos at compile time: the defaults' positions in the list */
#define ATTN_FWD_ID(i, nw, sl, bc, ns, minb, fold, text) (i),
static constexpr int fwd_ids[] = {ATTN_FWD_CONFIG_LIST(ATTN_FWD_ID)};
#undef ATTN_FWD_ID
static constexpr int fwd_pos(int id, int k = 0) {
    return k == ATTN_FWD_CONFIGS ? -1 : fwd_ids[k] == id ? k : fwd_pos(id, k + 1);
}
static constexpr int POS_STATS = fwd_pos(ATTN_FWD_DEFAULT_STATS), POS_PLAIN = fwd_pos(ATTN_FWD_DEFAULT_PLAIN),
                     POS_FEW_ROWS = fwd_pos(ATTN_FWD_DEFAULT_FEW_ROWS);
static_assert(POS_STATS >= 0 && POS_PLAIN >= 0 && POS_FEW_ROWS >= 0, "the defaults are in the list");

/* The position in the list of the shape a check or benchmark forced
 * (gf_backend_variants, checked at open; -1 when none), or of the product's
 * shape for this call. */
static int cfg_for(gf_backend *be, const attn_fwd_params &p) {
    const int c = cuda_st(be)->attn_cfg;
    if (c >= 0) return c;
    /* decode first: with statistics cfg 2 took 0.122 ms for a step over 8191 keys, cfg 0 0.069 */
    if ((size_t)p.T * p.G < (size_t)fwd_shapes[POS_PLAIN].br) return POS_FEW_ROWS;
    return p.stats ? POS_STATS : POS_PLAIN;
}

void attn_fwd_mma_plan(gf_backend *be, attn_fwd_params &p) {
    p.cfg = cfg_for(be, p);
    const int br = fwd_shapes[p.cfg].br, bc = fwd_shapes[p.cfg].bc;
    p.rows = p.T * p.G;
    p.n_tiles = (p.rows + br - 1) / br;
    /* split the key range when the blocks would not fill the GPU twice over */
    const int max_kt = (p.pos0 + p.T - 1) / bc + 1, blocks = p.B * p.KV * p.n_tiles;
    const int sms = cuda_of(be)->prop.multiProcessorCount;
    int n_split = cuda_st(be)->attn_split;
    if (n_split <= 0) n_split = blocks >= sms || max_kt < 4 ? 1 : min(max_kt / 2, (2 * sms + blocks - 1) / blocks);
    if (n_split < 1) n_split = 1;
    if (n_split > max_kt) n_split = max_kt;
    p.kt_per_split = (max_kt + n_split - 1) / n_split;
    p.n_split = (max_kt + p.kt_per_split - 1) / p.kt_per_split;
    if ((size_t)p.n_tiles * p.n_split > 65535) { /* gridDim.z */
        p.n_split = 1;
        p.kt_per_split = max_kt;
    }
}

bool attn_fwd_mma_takes(gf_backend *be, const attn_fwd_params &p) {
    return be->act == GF_BF16 && (p.hd == 64 || p.hd == 128) && cuda_aligned16(p.q) && cuda_aligned16(p.k) &&
           cuda_aligned16(p.v) && cuda_aligned16(p.out) && (size_t)p.T * p.G < ((size_t)1 << 31) &&
           ((size_t)p.T * p.G + 63) / 64 <= 65535 && p.B <= 65535;
}

size_t attn_fwd_mma_parts(const attn_fwd_params &p) {
    return p.n_split > 1 ? (size_t)p.B * p.T : (size_t)p.B * p.n_tiles;
}

size_t attn_fwd_split_bytes(const attn_fwd_params &p) {
    if (p.n_split <= 1) return 0;
    return (size_t)p.B * p.KV * p.rows * p.n_split * (p.hd + PART_SCALARS) * sizeof(float);
}

void attn_fwd_mma_launch(gf_backend *be, const attn_fwd_params &p) {
    fwd_shapes[p.cfg].launch(be, p);
    if (p.n_split > 1) {
        const unsigned grid = (unsigned)((size_t)p.B * p.KV * p.rows);
        const size_t smem = combine_smem(p);
        void (*combine)(const attn_fwd_params) = p.stats ? attn_fwd_combine_kernel<true> : attn_fwd_combine_kernel<false>;
        cuda_allow_smem((const void *)combine, smem);
        cuda_launch(grid, COMBINE_WARPS * 32, smem, cuda_stream(be), combine, p);
    }
}
