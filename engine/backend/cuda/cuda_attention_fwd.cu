/* Causal GQA attention, forward, on the tensor cores: the mma.sync block
 * shapes of cuda_attention_cfg.h (the kernel: cuda_attention_fwd_kernel.cuh),
 * the combine kernel of the key-range split, and the plan that picks a shape,
 * tiles and splits for a call. */
#include "backend/cuda/cuda_attention_fwd_kernel.cuh"

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
/* The mma.sync shapes of cuda_attention_cfg.h: rows per block and keys per
 * tile (for the plan), and the launch of each; the Hopper shapes follow them
 * in the positions the backend keeps (shape_at). */
#define ATTN_FWD_SHAPE(i, nw, sl, bc, ns, minb, fold, ov, text) \
    {16 * (nw) * (sl), (bc), launch_cfg<fwd_cfg<(nw), (sl), (bc), (ns), (minb), (fold)>>},
static const fwd_shape fwd_shapes[] = {ATTN_FWD_CONFIG_LIST(ATTN_FWD_SHAPE)};
#undef ATTN_FWD_SHAPE
static_assert(sizeof fwd_shapes / sizeof fwd_shapes[0] == ATTN_FWD_MMA_CONFIGS, "ATTN_FWD_MMA_CONFIGS is the list's length");
static const fwd_shape &shape_at(int pos) {
    return pos < ATTN_FWD_MMA_CONFIGS ? fwd_shapes[pos] : attn_fwd_wg_shapes[pos - ATTN_FWD_MMA_CONFIGS];
}

/* attn_fwd_cfg_pos at compile time: the defaults' positions in the list */
#define ATTN_FWD_ID(i, nw, sl, bc, ns, minb, fold, ov, text) (i),
static constexpr int fwd_ids[] = {ATTN_FWD_ALL_CONFIG_LIST(ATTN_FWD_ID)};
#undef ATTN_FWD_ID
static constexpr int fwd_pos(int id, int k = 0) {
    return k == ATTN_FWD_CONFIGS ? -1 : fwd_ids[k] == id ? k : fwd_pos(id, k + 1);
}
static constexpr int POS_STATS = fwd_pos(ATTN_FWD_DEFAULT_STATS), POS_PLAIN = fwd_pos(ATTN_FWD_DEFAULT_PLAIN),
                     POS_FEW_ROWS = fwd_pos(ATTN_FWD_DEFAULT_FEW_ROWS), POS_HOPPER_STATS = fwd_pos(ATTN_FWD_HOPPER_STATS),
                     POS_HOPPER_PLAIN = fwd_pos(ATTN_FWD_HOPPER_PLAIN);
static_assert(POS_STATS >= 0 && POS_PLAIN >= 0 && POS_FEW_ROWS >= 0 && POS_HOPPER_STATS >= 0 && POS_HOPPER_PLAIN >= 0,
              "the defaults are in the list");
static_assert(POS_STATS < ATTN_FWD_MMA_CONFIGS && POS_PLAIN < ATTN_FWD_MMA_CONFIGS &&
                  POS_FEW_ROWS < ATTN_FWD_MMA_CONFIGS,
              "the defaults off Hopper run on every GPU");

/* The position in the list of the shape a check or benchmark forced
 * (gf_backend_variants, checked at open; -1 when none), or of the product's
 * shape for this call. */
static int cfg_for(gf_backend *be, const attn_fwd_params &p) {
    const int c = cuda_st(be)->attn_cfg;
    if (c >= 0) return c;
    const bool hopper = cuda_has_wgmma(&cuda_of(be)->prop);
    const int plain = hopper ? POS_HOPPER_PLAIN : POS_PLAIN, stats = hopper ? POS_HOPPER_STATS : POS_STATS;
    /* decode first: with statistics cfg 2 took 0.122 ms for a step over 8191 keys, cfg 0 0.069 */
    if ((size_t)p.T * p.G < (size_t)shape_at(plain).br) return POS_FEW_ROWS;
    return p.stats ? stats : plain;
}

void attn_fwd_mma_plan(gf_backend *be, attn_fwd_params &p) {
    p.cfg = cfg_for(be, p);
    const int br = shape_at(p.cfg).br, bc = shape_at(p.cfg).bc;
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
    shape_at(p.cfg).launch(be, p);
    if (p.n_split > 1) {
        const unsigned grid = (unsigned)((size_t)p.B * p.KV * p.rows);
        const size_t smem = combine_smem(p);
        void (*combine)(const attn_fwd_params) = p.stats ? attn_fwd_combine_kernel<true> : attn_fwd_combine_kernel<false>;
        cuda_allow_smem((const void *)combine, smem);
        cuda_launch(grid, COMBINE_WARPS * 32, smem, cuda_stream(be), combine, p);
    }
}
