/* Causal attention, backward, on Hopper's wgmma (cuda_wgmma.cuh): the
 * algorithm of cuda_attention_bwd.cu (its comment says it in full), with the
 * block's four warps as one warpgroup and every product one chain of wgmma
 * reading its shared-memory operands itself:
 *   S^T = K Q^T, dP^T = V dO^T    A = K, V (64 keys, K-major), B = Q, dO
 *                                 (64 rows as N, K-major): 8 k steps each
 *   dV += P^T dO, dK += dS^T Q    A = P^T, dS^T from registers (the S^T, dP^T
 *                                 accumulators repacked), B = dO, Q MN-major
 *   dQ = dS K                     A = dS^T in shared memory read transposed
 *                                 (MN-major), B = K MN-major; added to the
 *                                 fp32 dq buffer with atomics as before.
 * Tiles are 128-byte swizzled (cuda_wgmma.cuh), 1024-byte aligned. A row tile
 * is computed by the whole warpgroup or not at all (a wgmma is one instruction
 * of all four warps): a warp whose keys all come after the tile's last row
 * computes probabilities that its causal mask makes exactly 0.
 * Built for sm_90a alone (the Makefile): the backward on a compute capability
 * 9.0 device unless a check, a benchmark or GRAFT_CUDA_ATTN_BWD=mma asks for
 * the mma.sync kernel (cuda_backend.cu settles it at open). */
#include "backend/cuda/cuda_attention_bwd_parts.cuh"
#include "backend/cuda/cuda_mma.cuh"
#include "backend/cuda/cuda_wgmma.cuh"

#define WBR 64 /* query rows a tile */
#define WBC 64 /* keys a block */

/* Shared memory in bytes: K, V [HD / 64 blocks][64 keys][64], Q, dO the same with rows, twice
 * (row tile rt in buffer rt % 2: the next tile's copies land while this one is computed; NEXT
 * bytes between the buffers), dS^T [64 keys][64 rows], then lse (log2 units) and D of the
 * tile's rows; 1 KiB for the alignment. 105.5 KiB at HD 128: two blocks a multiprocessor, as
 * the registers allow. */
template <int HD> struct bwd_wg_smem {
    static constexpr int TILE = 64 * HD * 2, DS = WBC * WBR * 2;
    static constexpr int K = 0, V = TILE, Q = 2 * TILE, G = 3 * TILE, NEXT = 2 * TILE, S = 6 * TILE, F = 6 * TILE + DS;
    static constexpr size_t bytes = (size_t)F + 2 * WBR * sizeof(float) + 1024;
};

template <int HD> __global__ void __launch_bounds__(128, 1) attn_bwd_wg_kernel(const attn_bwd_params p) {
    constexpr int CPR = HD / 8, ROWB = 64 * 128; /* 16-byte chunks a row; bytes between column blocks */
    CUDA_DYNAMIC_SMEM(smem_raw);
    unsigned char *sm = smem_raw + ((1024u - (smem_u32(smem_raw) & 1023u)) & 1023u);
    unsigned char *Ks = sm + bwd_wg_smem<HD>::K, *Vs = sm + bwd_wg_smem<HD>::V, *Qs = sm + bwd_wg_smem<HD>::Q;
    unsigned char *Gs = sm + bwd_wg_smem<HD>::G, *Ss = sm + bwd_wg_smem<HD>::S;
    float *lse2 = (float *)(sm + bwd_wg_smem<HD>::F), *Dsm = lse2 + WBR;
    const uint32_t ka = smem_u32(Ks), va = smem_u32(Vs), sa_ = smem_u32(Ss);

    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, gid = lane >> 2, tig = lane & 3;
    const int h = blockIdx.x, b = blockIdx.y, jt = blockIdx.z;
    const int T = p.T, j0 = jt * WBC, kvh = h / p.G;
    const bf16 *q = (const bf16 *)p.q, *k = (const bf16 *)p.k, *v = (const bf16 *)p.v, *dout = (const bf16 *)p.dout;

    /* K and V of the block's keys (rows past T zero) */
    for (int c = tid; c < WBC * CPR; c += 128) {
        const int row = c / CPR, ch = c % CPR, j = j0 + row;
        const bool ok = j < T;
        const size_t off = (((size_t)b * T + (ok ? j : 0)) * p.KV + kvh) * HD + ch * 8;
        cp_async16(Ks + swz128_offset(WBC, row, ch), k + off, ok);
        cp_async16(Vs + swz128_offset(WBC, row, ch), v + off, ok);
    }
    cp_async_commit();

    float dka[HD / 8][4], dva[HD / 8][4];
#pragma unroll
    for (int i = 0; i < HD / 8; i++) dka[i][0] = dka[i][1] = dka[i][2] = dka[i][3] = dva[i][0] = dva[i][1] =
        dva[i][2] = dva[i][3] = 0.0f;
    const int ja = j0 + warp * 16 + gid, jb = ja + 8; /* this thread's keys (the accumulators' rows) */
    const int n_rt = (T + WBR - 1) / WBR;

    /* Q and dO chunks: row ld_row + rr, chunk tid % CPR; rr steps keep row % 8, so the swizzled offset is
     * formed once */
    constexpr int LROWS = 128 / CPR;
    static_assert(LROWS % 8 == 0, "a thread's rows keep their swizzle");
    const int ld_row = tid / CPR;
    const uint32_t ld_smem = swz128_offset(WBR, ld_row, tid % CPR);
    const size_t ld_off = ((size_t)b * T * p.H + h) * HD + (tid % CPR) * 8; /* row 0's chunk */
    /* row tile rt's Q and dO into buffer rt % 2, as one cp.async group (committed empty past the last
     * tile, so that the wait below always leaves the newest group in flight) */
    auto stage_row_tile = [&](int rt) {
        if (rt < n_rt) {
            const uint32_t buf = (uint32_t)(rt & 1) * bwd_wg_smem<HD>::NEXT;
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
        const uint32_t buf = (uint32_t)(rt & 1) * bwd_wg_smem<HD>::NEXT;
        const uint32_t qa = smem_u32(Qs) + buf, ga_ = smem_u32(Gs) + buf;
        /* the other buffer was last read by the previous tile's dV, dK wgmma, waited for before
         * the barrier that ended it */
        stage_row_tile(rt + 1);
        cp_async_wait<1>(); /* this tile's Q, dO (and K, V) landed; the next tile's may be in flight */
        fence_proxy_async(); /* the copies, visible to wgmma's operand reads */
        __syncthreads();

        /* S^T = K Q^T and dP^T = V dO^T, both chains in flight together */
        float sa[WBR / 8][4], ga[WBR / 8][4];
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < HD / 16; kk++) {
            const uint32_t o = (uint32_t)(kk >> 2) * ROWB + (uint32_t)(kk & 3) * 32;
            wgmma_ss<WBR, false>(&sa[0][0], wgmma_desc(ka + o, 16, 1024), wgmma_desc(qa + o, 16, 1024), kk > 0);
        }
#pragma unroll
        for (int kk = 0; kk < HD / 16; kk++) {
            const uint32_t o = (uint32_t)(kk >> 2) * ROWB + (uint32_t)(kk & 3) * 32;
            wgmma_ss<WBR, false>(&ga[0][0], wgmma_desc(va + o, 16, 1024), wgmma_desc(ga_ + o, 16, 1024), kk > 0);
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
            *(uint32_t *)(Ss + swz128_offset(WBC, ka_, nt) + tig * 4) = as[nt / 2][(nt & 1) * 2];
            *(uint32_t *)(Ss + swz128_offset(WBC, kb_, nt) + tig * 4) = as[nt / 2][(nt & 1) * 2 + 1];
        }
        wgmma_fence();
#pragma unroll
        for (int kr = 0; kr < WBR / 16; kr++) {
            wgmma_rs<HD, true>(&dva[0][0], ap[kr], wgmma_desc(ga_ + kr * 16 * 128, ROWB, 1024), true);
            wgmma_rs<HD, true>(&dka[0][0], as[kr], wgmma_desc(qa + kr * 16 * 128, ROWB, 1024), true);
        }
        wgmma_commit();
        wgmma_wait<0>(); /* dV, dK done: ap and as may go */
        wgmma_reg_fence_all(dva);
        wgmma_reg_fence_all(dka);
        fence_proxy_async();
        __syncthreads();

        /* dQ rows r0 .. r0 + 63 (the warp's 16: rows 16 warp + gid, + 8) = dS K: 4 k steps of 16 keys */
        float dq[HD / 8][4];
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < WBC / 16; kk++)
            wgmma_ss<HD, true, true>(&dq[0][0], wgmma_desc(sa_ + kk * 16 * 128, ROWB, 1024),
                                     wgmma_desc(ka + kk * 16 * 128, ROWB, 1024), kk > 0);
        wgmma_commit();
        /* lse and D were last read before the barrier above: the next tile's, while dQ's wgmma runs */
        if (rt + 1 < n_rt) load_row_stats(rt + 1);
        wgmma_wait<0>();
        wgmma_reg_fence_all(dq);
        attn_bwd_add_dq<HD>(dq, p, b, h, r0 + warp * 16 + gid, tig);
        __syncthreads(); /* dS^T, lse and D are rewritten by the next row tile, this buffer of Q, dO by the one after */
    }

    attn_bwd_store_dkdv<HD>(dka, dva, p, b, h, ja, tig);
}

bool attn_bwd_wg_launch(gf_backend *be, const attn_bwd_params &p) {
    dim3 grid;
    if (!attn_bwd_grid(p, WBC, &grid)) return false;
    if (p.hd == 64) attn_bwd_run(be, attn_bwd_wg_kernel<64>, grid, 128, bwd_wg_smem<64>::bytes, p);
    else attn_bwd_run(be, attn_bwd_wg_kernel<128>, grid, 128, bwd_wg_smem<128>::bytes, p);
    return true;
}
