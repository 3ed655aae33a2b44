/* What the attention backward's two tensor-core kernels share
 * (cuda_attention_bwd.cu on mma.sync, cuda_attention_bwd_wg.cu on wgmma): both
 * hold a block's 64 keys in the mma.sync accumulator layout (a thread's keys
 * ja = .. + gid and jb = ja + 8 as rows, tile rows 8 nt + 2 tig + e as
 * columns), so the element-wise step, the dQ and the dK / dV atomics and the
 * grid are the same lines. */
#ifndef GRAFT_BACKEND_CUDA_ATTENTION_BWD_PARTS_CUH
#define GRAFT_BACKEND_CUDA_ATTENTION_BWD_PARTS_CUH

#include "backend/cuda/cuda_attention.cuh"

/* S^T -> P^T and dP^T -> dS^T in place for the row tile at r0: P = 2^(S scale log2 e - lse log2 e)
 * under the causal mask (key <= row), dS = P (dP - D). lse2, Dsm: the tile's rows. */
template <int NT8>
__device__ __forceinline__ void attn_bwd_probs(float (&sa)[NT8][4], float (&ga)[NT8][4], int ja, int jb, int tig, int r0,
                                               const float *lse2, const float *Dsm, float scale_log2) {
#pragma unroll
    for (int nt = 0; nt < NT8; nt++)
#pragma unroll
        for (int e = 0; e < 2; e++) {
            const int rr = nt * 8 + tig * 2 + e, t = r0 + rr;
            const float l2 = lse2[rr], Dt = Dsm[rr];
            const float pa = ja <= t ? exp2_approx(sa[nt][e] * scale_log2 - l2) : 0.0f;
            const float pb = jb <= t ? exp2_approx(sa[nt][2 + e] * scale_log2 - l2) : 0.0f;
            sa[nt][e] = pa;
            sa[nt][2 + e] = pb;
            ga[nt][e] = pa * (ga[nt][e] - Dt);
            ga[nt][2 + e] = pb * (ga[nt][2 + e] - Dt);
        }
}

/* dQ of rows ta and ta + 8, columns c0 + 8 dt + 2 tig ..+1 of the NC from c0 that dq holds, added to
 * the fp32 dq buffer. */
template <int HD, int NC = HD>
__device__ __forceinline__ void attn_bwd_add_dq(const float (&dq)[NC / 8][4], const attn_bwd_params &p, int b, int h,
                                                int ta, int tig, int c0 = 0) {
#pragma unroll
    for (int half = 0; half < 2; half++) {
        const int t = ta + 8 * half;
        if (t >= p.T) continue;
        float *dst = p.dq_acc + (((size_t)b * p.T + t) * p.H + h) * HD + c0 + tig * 2;
#pragma unroll
        for (int dt = 0; dt < NC / 8; dt++)
            atomicAdd((float2 *)(dst + dt * 8), half ? make_float2(dq[dt][2], dq[dt][3]) : make_float2(dq[dt][0], dq[dt][1]));
    }
}

/* dK and dV of keys ja and ja + 8 added to the fp32 buffers of their key-value head, [B, T, KV, hd]
 * (the G query heads of a group meet there: a G-th of the bytes of per-head copies). */
template <int HD>
__device__ __forceinline__ void attn_bwd_add_dkdv(const float (&dka)[HD / 8][4], const float (&dva)[HD / 8][4],
                                                  const attn_bwd_params &p, int b, int h, int ja, int tig) {
#pragma unroll
    for (int half = 0; half < 2; half++) {
        const int j = ja + 8 * half;
        if (j >= p.T) continue;
        const size_t off = (((size_t)b * p.T + j) * p.KV + h / p.G) * HD + tig * 2;
#pragma unroll
        for (int dt = 0; dt < HD / 8; dt++) {
            atomicAdd((float2 *)(p.dk_acc + off + dt * 8), half ? make_float2(dka[dt][2], dka[dt][3])
                                                                 : make_float2(dka[dt][0], dka[dt][1]));
            atomicAdd((float2 *)(p.dv_acc + off + dt * 8), half ? make_float2(dva[dt][2], dva[dt][3])
                                                                 : make_float2(dva[dt][0], dva[dt][1]));
        }
    }
}

/* The grid of blocks of bc keys (x: query head, y: sequence, z: key tile), or false where the
 * tensor-core kernels do not apply (head dim, alignment, grid limits). */
static inline bool attn_bwd_grid(const attn_bwd_params &p, int bc, dim3 *grid) {
    if (p.hd != 64 && p.hd != 128) return false;
    if (!cuda_aligned16(p.q) || !cuda_aligned16(p.k) || !cuda_aligned16(p.v) || !cuda_aligned16(p.dout)) return false;
    const int n_kt = (p.T + bc - 1) / bc;
    if (n_kt > 65535 || p.B > 65535) return false;
    *grid = dim3((unsigned)p.H, (unsigned)p.B, (unsigned)n_kt);
    return true;
}

/* Launches a backward kernel of `threads` threads and `bytes` of dynamic shared memory on grid. */
template <typename K>
static inline void attn_bwd_run(gf_backend *be, K kernel, dim3 grid, int threads, size_t bytes, const attn_bwd_params &p) {
    cuda_allow_smem((const void *)kernel, bytes);
    cuda_launch(grid, threads, bytes, cuda_stream(be), kernel, p);
}

#endif
