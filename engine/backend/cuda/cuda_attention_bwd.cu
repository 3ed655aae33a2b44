/* The attention backward on mma.sync (cuda_attention_bwd_kernel.cuh), dQ atomics of 2 floats, and
 * the launch that picks the width. */
#include "backend/cuda/cuda_attention_bwd_kernel.cuh"

bool attn_bwd_mma_launch(gf_backend *be, const attn_bwd_params &p, int dq_vec) {
    return dq_vec == 4 ? attn_bwd_mma_launch_dq4(be, p) : attn_bwd_mma_launch_dq<2>(be, p);
}
