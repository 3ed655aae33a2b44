/* Causal attention, backward, on the tensor cores (flash-attention-2 style):
 * probabilities recomputed from q, k and the forward's log-sum-exp, no T x T
 * matrix; bf16 operands, fp32 accumulation.
 *
 * A block owns BC = 64 keys of one (sequence, query head) and walks the
 * query tiles (BR = 64 rows) at and after its keys. Its four warps own 16 keys
 * each and compute, transposed so that keys are the mma's rows:
 *   S^T = K Q^T,  P^T = 2^(S^T scale log2 e - lse log2 e) (causal mask),
 *   dP^T = V dO^T,  dS^T = P^T (dP^T - D),  D_t = rowsum(dO_t * O_t),
 *   dV += P^T dO,  dK += dS^T Q       (accumulated in registers over the walk)
 * then dS^T goes through shared memory (bf16) so that each warp can take 16
 * query rows of dQ = dS K, added to an fp32 dq buffer with atomics.
 * dK and dV are added at the block's end, with atomics too, to fp32 buffers of
 * the key-value head, which the G query heads of a group share (per-head copies
 * summed afterwards moved G times their bytes, twice), so the query heads of a
 * group still spread over the machine. With G = 1 each element is added once
 * to a zero: the same bits every run. */
#include "backend/cuda/cuda_attention_bwd_parts.cuh"
#include "backend/cuda/cuda_mma.cuh"

#define BR 64
#define BC 64
#define NWARPS 4

template <int HD> struct bwd_smem {
    static constexpr int LDS = HD + 8, LDSS = BR + 8;
    static constexpr int KV = BC * LDS, Q = BR * LDS, DS = BC * LDSS;
    static constexpr size_t bytes = (size_t)(2 * KV + 2 * Q + DS) * sizeof(bf16) + 2 * BR * sizeof(float);
};

template <int HD> __global__ void __launch_bounds__(NWARPS * 32) attn_bwd_mma_kernel(const attn_bwd_params p) {
    static_assert(BR % (NWARPS * 32 / (HD / 8)) == 0, "the block's chunk passes cover the row tile");
    constexpr int LDS = bwd_smem<HD>::LDS, LDSS = bwd_smem<HD>::LDSS, CPR = HD / 8;
    CUDA_DYNAMIC_SMEM(smem_raw);
    bf16 *Ks = (bf16 *)smem_raw;
    bf16 *Vs = Ks + bwd_smem<HD>::KV;
    bf16 *Qs = Vs + bwd_smem<HD>::KV;
    bf16 *Gs = Qs + bwd_smem<HD>::Q; /* dO */
    bf16 *Ss = Gs + bwd_smem<HD>::Q; /* dS^T [key][row] */
    float *lse2 = (float *)(Ss + bwd_smem<HD>::DS);
    float *Dsm = lse2 + BR;

    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, gid = lane >> 2, tig = lane & 3;
    const int h = blockIdx.x, b = blockIdx.y, jt = blockIdx.z; /* the first key tiles have the most rows: first */
    const int T = p.T, j0 = jt * BC, kvh = h / p.G;
    const bf16 *q = (const bf16 *)p.q, *k = (const bf16 *)p.k, *v = (const bf16 *)p.v, *dout = (const bf16 *)p.dout;

    for (int c = tid; c < BC * CPR; c += NWARPS * 32) {
        const int row = c / CPR, col = (c % CPR) * 8, j = j0 + row;
        const bool ok = j < T;
        const size_t off = (((size_t)b * T + (ok ? j : 0)) * p.KV + kvh) * HD + col;
        cp_async16(Ks + row * LDS + col, k + off, ok);
        cp_async16(Vs + row * LDS + col, v + off, ok);
    }
    cp_async_commit();

    float dka[HD / 8][4], dva[HD / 8][4];
#pragma unroll
    for (int i = 0; i < HD / 8; i++) dka[i][0] = dka[i][1] = dka[i][2] = dka[i][3] = dva[i][0] = dva[i][1] =
        dva[i][2] = dva[i][3] = 0.0f;
    const int jw = j0 + warp * 16, ja = jw + gid, jb = ja + 8; /* this thread's keys (mma rows) */
    const int n_rt = (T + BR - 1) / BR;

    /* Q and dO tiles: each thread copies the 16-byte chunks (row ld_row + rr, columns (tid % CPR) 8 ..+7) for
     * rr = 0, LROWS, ...; the addresses are formed once here and a tile adds r0 rows */
    constexpr int LROWS = NWARPS * 32 / CPR;
    const int ld_row = tid / CPR, ld_smem = ld_row * LDS + (tid % CPR) * 8;
    const size_t ld_off = ((size_t)b * T * p.H + h) * HD + (tid % CPR) * 8; /* row 0's chunk */
    for (int rt = j0 / BR; rt < n_rt; rt++) {
        const int r0 = rt * BR;
#pragma unroll
        for (int rr = 0; rr < BR; rr += LROWS) {
            const int t = r0 + ld_row + rr;
            const bool ok = t < T;
            const size_t off = ld_off + (size_t)(unsigned)(ok ? t : 0) * (unsigned)(p.H * HD);
            cp_async16(Qs + ld_smem + rr * LDS, q + off, ok);
            cp_async16(Gs + ld_smem + rr * LDS, dout + off, ok);
        }
        cp_async_commit();
        if (tid < BR) {
            const int t = r0 + tid;
            const bool ok = t < T;
            lse2[tid] = ok ? p.lse[((size_t)b * p.H + h) * T + t] * LOG2E_F : INFINITY; /* P = 0 past the end */
            Dsm[tid] = ok ? p.Dr[((size_t)b * T + t) * p.H + h] : 0.0f;
        }
        cp_async_wait<0>();
        __syncthreads();

        const int t_max = min(r0 + BR, T) - 1;
        if (t_max >= jw) { /* some row of the tile sees one of this warp's keys */
            float sa[BR / 8][4], ga[BR / 8][4];
#pragma unroll
            for (int i = 0; i < BR / 8; i++) sa[i][0] = sa[i][1] = sa[i][2] = sa[i][3] = ga[i][0] = ga[i][1] =
                ga[i][2] = ga[i][3] = 0.0f;
#pragma unroll
            for (int kk = 0; kk < HD / 16; kk++) {
                uint32_t ak[4], av[4];
                ldsm_x4(ak, Ks + (warp * 16 + (lane & 15)) * LDS + kk * 16 + (lane >> 4) * 8);
                ldsm_x4(av, Vs + (warp * 16 + (lane & 15)) * LDS + kk * 16 + (lane >> 4) * 8);
#pragma unroll
                for (int np = 0; np < BR / 16; np++) {
                    uint32_t bq[4], bg[4];
                    const int ro = (np * 16 + (lane >> 4) * 8 + (lane & 7)) * LDS + kk * 16 + ((lane >> 3) & 1) * 8;
                    ldsm_x4(bq, Qs + ro);
                    ldsm_x4(bg, Gs + ro);
                    mma_bf16_n16(sa[2 * np], sa[2 * np + 1], ak, bq);
                    mma_bf16_n16(ga[2 * np], ga[2 * np + 1], av, bg);
                }
            }
            attn_bwd_probs(sa, ga, ja, jb, tig, r0, lse2, Dsm, p.scale_log2);
            /* dV += P^T dO, dK += dS^T Q: A from the accumulators, B = dO, Q by ldmatrix.trans */
#pragma unroll
            for (int kr = 0; kr < BR / 16; kr++) {
                uint32_t ap[4], as[4];
                acc_to_a(ap, sa[2 * kr], sa[2 * kr + 1]);
                acc_to_a(as, ga[2 * kr], ga[2 * kr + 1]);
#pragma unroll
                for (int dp = 0; dp < HD / 16; dp++) {
                    uint32_t bg[4], bq[4];
                    const int ro = (kr * 16 + ((lane >> 3) & 1) * 8 + (lane & 7)) * LDS + dp * 16 + (lane >> 4) * 8;
                    ldsm_x4_t(bg, Gs + ro);
                    ldsm_x4_t(bq, Qs + ro);
                    mma_bf16_n16(dva[2 * dp], dva[2 * dp + 1], ap, bg);
                    mma_bf16_n16(dka[2 * dp], dka[2 * dp + 1], as, bq);
                }
            }
#pragma unroll
            for (int nt = 0; nt < BR / 8; nt++) {
                *(uint32_t *)(Ss + (warp * 16 + gid) * LDSS + nt * 8 + tig * 2) = pack_bf16(ga[nt][0], ga[nt][1]);
                *(uint32_t *)(Ss + (warp * 16 + gid + 8) * LDSS + nt * 8 + tig * 2) = pack_bf16(ga[nt][2], ga[nt][3]);
            }
        } else {
#pragma unroll
            for (int nt = 0; nt < BR / 8; nt++) {
                *(uint32_t *)(Ss + (warp * 16 + gid) * LDSS + nt * 8 + tig * 2) = 0u;
                *(uint32_t *)(Ss + (warp * 16 + gid + 8) * LDSS + nt * 8 + tig * 2) = 0u;
            }
        }
        __syncthreads();

        /* dQ rows r0 + warp 16 .. : dS (ldmatrix.trans of dS^T) times K (ldmatrix.trans) */
        if (r0 + warp * 16 < T) {
            float dq[HD / 8][4];
#pragma unroll
            for (int i = 0; i < HD / 8; i++) dq[i][0] = dq[i][1] = dq[i][2] = dq[i][3] = 0.0f;
#pragma unroll
            for (int kk = 0; kk < BC / 16; kk++) {
                uint32_t a[4];
                ldsm_x4_t(a, Ss + (kk * 16 + (lane >> 4) * 8 + (lane & 7)) * LDSS + warp * 16 + ((lane >> 3) & 1) * 8);
#pragma unroll
                for (int dp = 0; dp < HD / 16; dp++) {
                    uint32_t bk[4];
                    ldsm_x4_t(bk, Ks + (kk * 16 + ((lane >> 3) & 1) * 8 + (lane & 7)) * LDS + dp * 16 + (lane >> 4) * 8);
                    mma_bf16_n16(dq[2 * dp], dq[2 * dp + 1], a, bk);
                }
            }
            attn_bwd_add_dq<HD>(dq, p, b, h, r0 + warp * 16 + gid, tig);
        }
        __syncthreads(); /* Q, dO and dS^T are rewritten by the next row tile */
    }

    attn_bwd_add_dkdv<HD>(dka, dva, p, b, h, ja, tig);
}

bool attn_bwd_mma_launch(gf_backend *be, const attn_bwd_params &p) {
    dim3 grid;
    if (!attn_bwd_grid(p, BC, &grid)) return false;
    if (p.hd == 64) attn_bwd_run(be, attn_bwd_mma_kernel<64>, grid, NWARPS * 32, bwd_smem<64>::bytes, p);
    else attn_bwd_run(be, attn_bwd_mma_kernel<128>, grid, NWARPS * 32, bwd_smem<128>::bytes, p);
    return true;
}
