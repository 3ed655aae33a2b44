/* The attention backward on wgmma (cuda_attention_bwd_wg_kernel.cuh; sm_90a), dQ atomics of 2
 * floats, and the launch that picks the width. */
#include "backend/cuda/cuda_attention_bwd_wg_kernel.cuh"

bool attn_bwd_wg_launch(gf_backend *be, const attn_bwd_params &p, bool two_groups, int dq_vec) {
    return dq_vec == 4 ? attn_bwd_wg_launch_dq4(be, p, two_groups) : attn_bwd_wg_launch_dq<2>(be, p, two_groups);
}
