/* The attention backward on wgmma (cuda_attention_bwd_wg_kernel.cuh; sm_90a), dQ atomics of 4 floats. */
#include "backend/cuda/cuda_attention_bwd_wg_kernel.cuh"

bool attn_bwd_wg_launch_dq4(gf_backend *be, const attn_bwd_params &p, bool two_groups) {
    return attn_bwd_wg_launch_dq<4>(be, p, two_groups);
}
