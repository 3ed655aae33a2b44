/* The attention backward on mma.sync (cuda_attention_bwd_kernel.cuh), dQ atomics of 4 floats. */
#include "backend/cuda/cuda_attention_bwd_kernel.cuh"

bool attn_bwd_mma_launch_dq4(gf_backend *be, const attn_bwd_params &p) { return attn_bwd_mma_launch_dq<4>(be, p); }
