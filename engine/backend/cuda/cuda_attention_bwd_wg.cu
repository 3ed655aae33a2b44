/* Causal attention, backward, on Hopper's wgmma (cuda_wgmma.cuh): the
 * algorithm of cuda_attention_bwd.cu (its comment says it in full), with each
 * group of four warps as one warpgroup and every product one chain of wgmma
 * reading its shared-memory operands itself:
 *   S^T = K Q^T, dP^T = V dO^T    A = K, V (64 keys, K-major), B = Q, dO
 *                                 (64 rows as N, K-major): 8 k steps each
 *   dV += P^T dO, dK += dS^T Q    A = P^T, dS^T from registers (the S^T, dP^T
 *                                 accumulators repacked), B = dO, Q MN-major
 *   dQ = dS K                     A = dS^T in shared memory read transposed
 *                                 (MN-major), B = K MN-major; added to the
 *                                 fp32 dq buffer with atomics as before.
 * Two shapes (NWG, ATTN_BWD_* in cuda_attention_cfg.h):
 *   NWG 1  one warpgroup, a block of 64 keys;
 *   NWG 2  two warpgroups, a block of 128 keys, 64 each (head dim 128 only):
 *          they share each row tile's Q and dO copies, and dQ's chain runs
 *          over all 128 keys (both dS^T tiles), each warpgroup taking 64 of
 *          dQ's columns. Per (key, row) pair that halves the Q / dO traffic
 *          and the dQ atomics, which kept NWG 1 at the L2's limit (Nsight
 *          Compute on an H100, the hybrid step's shape: L2 93.8 % busy,
 *          tensor pipes 25 %; docs/cuda.md, "The Hopper shapes").
 * Tiles are 128-byte swizzled (cuda_wgmma.cuh), 1024-byte aligned. A row tile
 * is computed by a whole warpgroup or not at all (a wgmma is one instruction
 * of all four warps): a warp whose keys all come after the tile's last row
 * computes probabilities that its causal mask makes exactly 0, and a
 * warpgroup whose 64 keys all do (NWG 2's second, at the block's first row
 * tile) skips the tile's products and writes a zero dS^T.
 * Built for sm_90a alone (the Makefile): the backward on a compute capability
 * 9.0 device unless a check, a benchmark or GRAFT_CUDA_ATTN_BWD=mma asks for
 * the mma.sync kernel (cuda_backend.cu settles it at open). */
#include "backend/cuda/cuda_attention_bwd_parts.cuh"
#include "backend/cuda/cuda_mma.cuh"
#include "backend/cuda/cuda_wgmma.cuh"

#define WBR 64 /* query rows a tile */
#define WBC 64 /* keys a warpgroup */

/* Shared memory in bytes: K, V of the block's keys as NWG tiles each [HD / 64 blocks][64 keys][64],
 * Q, dO the same with rows, twice (row tile rt in buffer rt % 2: the next tile's copies land while
 * this one is computed; NEXT bytes between the buffers), dS^T as NWG tiles [64 keys][64 rows], then
 * lse (log2 units) and D of the tile's rows; 1 KiB for the alignment. At HD 128: 105.5 KiB for
 * NWG 1 (two blocks a multiprocessor, as the registers allow), 145.5 KiB for NWG 2 (one). */
template <int HD, int NWG> struct bwd_wg_smem {
    static constexpr int TILE = 64 * HD * 2, DS = WBC * WBR * 2;
    static constexpr int K = 0, V = NWG * TILE, Q = 2 * NWG * TILE, G = Q + TILE, NEXT = 2 * TILE, S = Q + 4 * TILE,
                         F = S + NWG * DS;
    static constexpr size_t bytes = (size_t)F + 2 * WBR * sizeof(float) + 1024;
};

template <int HD, int NWG> __global__ void __launch_bounds__(128 * NWG, 1) attn_bwd_wg_kernel(const attn_bwd_params p) {
    using L = bwd_wg_smem<HD, NWG>;
    constexpr int THREADS = 128 * NWG, KEYS = WBC * NWG; /* a block's threads and keys */
    constexpr int CPR = HD / 8, ROWB = 64 * 128; /* 16-byte chunks a row; bytes between column blocks */
    constexpr int DQN = HD / NWG;                /* dQ's columns a warpgroup computes */
    static_assert(DQN == 64 || DQN == 128, "a warpgroup's dQ is a wgmma of N 64 or 128");
    CUDA_DYNAMIC_SMEM(smem_raw);
    unsigned char *sm = smem_raw + ((1024u - (smem_u32(smem_raw) & 1023u)) & 1023u);
    unsigned char *Ks = sm + L::K, *Vs = sm + L::V, *Qs = sm + L::Q, *Gs = sm + L::G, *Ss = sm + L::S;
    float *lse2 = (float *)(sm + L::F), *Dsm = lse2 + WBR;

    const int tid = threadIdx.x, warp = (tid >> 5) & 3, lane = tid & 31, gid = lane >> 2, tig = lane & 3;
    /* the warpgroup's index through a shuffle: ptxas then knows it is the same in every lane and builds
     * the descriptors of this warpgroup's K and V tiles in uniform registers */
    const int wg = __shfl_sync(0xffffffffu, tid >> 7, 0);
    const int h = blockIdx.x, b = blockIdx.y, jt = blockIdx.z;
    const int T = p.T, j0 = jt * KEYS, kvh = h / p.G;
    const bf16 *q = (const bf16 *)p.q, *k = (const bf16 *)p.k, *v = (const bf16 *)p.v, *dout = (const bf16 *)p.dout;
    /* this warpgroup's K, V and dS^T tiles; dQ reads every warpgroup's */
    const uint32_t ka = smem_u32(Ks) + (uint32_t)wg * L::TILE, va = smem_u32(Vs) + (uint32_t)wg * L::TILE;
    const uint64_t kd = wgmma_desc(ka, 16, 1024), vd = wgmma_desc(va, 16, 1024); /* stepped: wgmma_desc_at */
    unsigned char *Sw = Ss + wg * L::DS;

    /* K and V of the block's keys (rows past T zero), 64 keys a tile */
    for (int c = tid; c < KEYS * CPR; c += THREADS) {
        const int row = c / CPR, ch = c % CPR, j = j0 + row;
        const bool ok = j < T;
        const size_t off = (((size_t)b * T + (ok ? j : 0)) * p.KV + kvh) * HD + ch * 8;
        const uint32_t at = (uint32_t)(row / WBC) * L::TILE + swz128_offset(WBC, row % WBC, ch);
        cp_async16(Ks + at, k + off, ok);
        cp_async16(Vs + at, v + off, ok);
    }
    cp_async_commit();

    float dka[HD / 8][4], dva[HD / 8][4];
#pragma unroll
    for (int i = 0; i < HD / 8; i++) dka[i][0] = dka[i][1] = dka[i][2] = dka[i][3] = dva[i][0] = dva[i][1] =
        dva[i][2] = dva[i][3] = 0.0f;
    const int jw = j0 + wg * WBC;                 /* this warpgroup's first key */
    const int ja = jw + warp * 16 + gid, jb = ja + 8; /* this thread's keys (the accumulators' rows) */
    const int n_rt = (T + WBR - 1) / WBR;

    /* Q and dO chunks: row ld_row + rr, chunk tid % CPR; rr steps keep row % 8, so the swizzled offset is
     * formed once */
    constexpr int LROWS = THREADS / CPR;
    static_assert(LROWS % 8 == 0, "a thread's rows keep their swizzle");
    const int ld_row = tid / CPR;
    const uint32_t ld_smem = swz128_offset(WBR, ld_row, tid % CPR);
    const size_t ld_off = ((size_t)b * T * p.H + h) * HD + (tid % CPR) * 8; /* row 0's chunk */
    /* row tile rt's Q and dO into buffer rt % 2, as one cp.async group (committed empty past the last
     * tile, so that the wait below always leaves the newest group in flight) */
    auto stage_row_tile = [&](int rt) {
        if (rt < n_rt) {
            const uint32_t buf = (uint32_t)(rt & 1) * L::NEXT;
#pragma unroll
            for (int rr = 0; rr < WBR; rr += LROWS) {
                const int t = rt * WBR + ld_row + rr;
                const bool ok = t < T;
                const size_t off = ld_off + (size_t)(unsigned)(ok ? t : 0) * (unsigned)(p.H * HD);
                cp_async16(Qs + buf + ld_smem + rr * 128, q + off, ok);
                cp_async16(Gs + buf + ld_smem + rr * 128, dout + off, ok);
            }
        }
        cp_async_commit();
    };
    /* row tile rt's lse (log2 units) and D; past the end P = 0 */
    auto load_row_stats = [&](int rt) {
        if (tid < WBR) {
            const int t = rt * WBR + tid;
            const bool ok = t < T;
            lse2[tid] = ok ? p.lse[((size_t)b * p.H + h) * T + t] * LOG2E_F : INFINITY;
            Dsm[tid] = ok ? p.Dr[((size_t)b * T + t) * p.H + h] : 0.0f;
        }
    };
    stage_row_tile(j0 / WBR);
    load_row_stats(j0 / WBR);
    for (int rt = j0 / WBR; rt < n_rt; rt++) {
        const int r0 = rt * WBR;
        const uint32_t buf = (uint32_t)(rt & 1) * L::NEXT;
        const uint32_t qa = smem_u32(Qs) + buf, ga_ = smem_u32(Gs) + buf;
        const uint64_t qd = wgmma_desc(qa, 16, 1024), gd = wgmma_desc(ga_, 16, 1024); /* K-major */
        const uint64_t qdm = wgmma_desc(qa, ROWB, 1024), gdm = wgmma_desc(ga_, ROWB, 1024); /* MN-major */
        /* the other buffer was last read by the previous tile's dV, dK wgmma, waited for before
         * the barrier that ended it */
        stage_row_tile(rt + 1);
        cp_async_wait<1>(); /* this tile's Q, dO (and K, V) landed; the next tile's may be in flight */
        fence_proxy_async(); /* the copies, visible to wgmma's operand reads */
        __syncthreads();

        if (r0 + WBR - 1 < jw) {
            /* every key of this warpgroup comes after the tile's rows: P = dS = 0, nothing to add to dV, dK */
#pragma unroll
            for (int nt = 0; nt < WBR / 8; nt++) {
                *(uint32_t *)(Sw + swz128_offset(WBC, warp * 16 + gid, nt) + tig * 4) = 0u;
                *(uint32_t *)(Sw + swz128_offset(WBC, warp * 16 + gid + 8, nt) + tig * 4) = 0u;
            }
        } else {
            /* S^T = K Q^T and dP^T = V dO^T, both chains in flight together */
            float sa[WBR / 8][4], ga[WBR / 8][4];
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < HD / 16; kk++) {
                const uint32_t o = (uint32_t)(kk >> 2) * ROWB + (uint32_t)(kk & 3) * 32;
                wgmma_ss<WBR, false>(&sa[0][0], wgmma_desc_at(kd, o), wgmma_desc_at(qd, o), kk > 0);
            }
#pragma unroll
            for (int kk = 0; kk < HD / 16; kk++) {
                const uint32_t o = (uint32_t)(kk >> 2) * ROWB + (uint32_t)(kk & 3) * 32;
                wgmma_ss<WBR, false>(&ga[0][0], wgmma_desc_at(vd, o), wgmma_desc_at(gd, o), kk > 0);
            }
            wgmma_commit();
            wgmma_wait<0>();
            wgmma_reg_fence_all(sa);
            wgmma_reg_fence_all(ga);

            attn_bwd_probs(sa, ga, ja, jb, tig, r0, lse2, Dsm, p.scale_log2);
            /* dV += P^T dO, dK += dS^T Q over the tile's rows (4 k steps of 16 rows, dO and Q MN-major) */
            uint32_t ap[WBR / 16][4], as[WBR / 16][4];
#pragma unroll
            for (int kr = 0; kr < WBR / 16; kr++) {
                acc_to_a(ap[kr], sa[2 * kr], sa[2 * kr + 1]);
                acc_to_a(as[kr], ga[2 * kr], ga[2 * kr + 1]);
            }
            /* dS^T into shared memory, [key][row] swizzled (dQ's A, read transposed), before the wgmma that
             * read as are issued: the packed pairs are the accumulator layout's (key, rows 8 nt + 2 tig ..+1) */
#pragma unroll
            for (int nt = 0; nt < WBR / 8; nt++) {
                const int ka_ = warp * 16 + gid, kb_ = ka_ + 8;
                *(uint32_t *)(Sw + swz128_offset(WBC, ka_, nt) + tig * 4) = as[nt / 2][(nt & 1) * 2];
                *(uint32_t *)(Sw + swz128_offset(WBC, kb_, nt) + tig * 4) = as[nt / 2][(nt & 1) * 2 + 1];
            }
            wgmma_fence();
#pragma unroll
            for (int kr = 0; kr < WBR / 16; kr++) {
                wgmma_rs<HD, true>(&dva[0][0], ap[kr], wgmma_desc_at(gdm, kr * 16 * 128), true);
                wgmma_rs<HD, true>(&dka[0][0], as[kr], wgmma_desc_at(qdm, kr * 16 * 128), true);
            }
            wgmma_commit();
            wgmma_wait<0>(); /* dV, dK done: ap and as may go */
            wgmma_reg_fence_all(dva);
            wgmma_reg_fence_all(dka);
        }
        fence_proxy_async();
        __syncthreads(); /* every warpgroup's dS^T written */

        /* dQ rows r0 .. r0 + 63 (the warp's 16: rows 16 warp + gid, + 8), columns c0 .. c0 + DQN - 1 =
         * dS K over the block's keys: 4 k steps of 16 keys a tile; K's column block c0 / 64 */
        const int c0 = wg * DQN;
        float dq[DQN / 8][4];
        const uint64_t sd = wgmma_desc(smem_u32(Ss), ROWB, 1024),
                       kcd = wgmma_desc(smem_u32(Ks) + (uint32_t)(c0 / 64) * ROWB, ROWB, 1024);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < KEYS / 16; kk++) {
            const uint32_t tile = (uint32_t)(kk >> 2), o = (uint32_t)(kk & 3) * 16 * 128;
            wgmma_ss<DQN, true, true>(&dq[0][0], wgmma_desc_at(sd, tile * L::DS + o),
                                      wgmma_desc_at(kcd, tile * L::TILE + o), kk > 0);
        }
        wgmma_commit();
        /* lse and D were last read before the barrier above: the next tile's, while dQ's wgmma runs */
        if (rt + 1 < n_rt) load_row_stats(rt + 1);
        wgmma_wait<0>();
        wgmma_reg_fence_all(dq);
        attn_bwd_add_dq<HD, DQN>(dq, p, b, h, r0 + warp * 16 + gid, tig, c0);
        __syncthreads(); /* dS^T, lse and D are rewritten by the next row tile, this buffer of Q, dO by the one after */
    }

    attn_bwd_add_dkdv<HD>(dka, dva, p, b, h, ja, tig);
}

bool attn_bwd_wg_launch(gf_backend *be, const attn_bwd_params &p, bool two_groups) {
    dim3 grid;
    if (p.hd == 128 && two_groups) {
        if (!attn_bwd_grid(p, 2 * WBC, &grid)) return false;
        attn_bwd_run(be, attn_bwd_wg_kernel<128, 2>, grid, 256, bwd_wg_smem<128, 2>::bytes, p);
        return true;
    }
    if (!attn_bwd_grid(p, WBC, &grid)) return false;
    if (p.hd == 64) attn_bwd_run(be, attn_bwd_wg_kernel<64, 1>, grid, 128, bwd_wg_smem<64, 1>::bytes, p);
    else attn_bwd_run(be, attn_bwd_wg_kernel<128, 1>, grid, 128, bwd_wg_smem<128, 1>::bytes, p);
    return true;
}
