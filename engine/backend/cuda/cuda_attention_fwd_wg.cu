/* The attention forward's Hopper shapes (ATTN_FWD_WG_CONFIG_LIST): the
 * kernel of cuda_attention_fwd_kernel.cuh with both products on wgmma. This
 * file alone is built for sm_90a (the Makefile says so), the only target with
 * wgmma; the plan (cuda_attention_fwd.cu) takes these shapes only on a
 * compute capability 9.0 device. */
#include "backend/cuda/cuda_attention_fwd_kernel.cuh"

/* overlap (cuda_attention_cfg.h): 1 and 4 overlap, 2 and 3 add the producer, 3 ping-pong, 4 meets
 * every 2 tiles */
#define ATTN_FWD_WG_SHAPE(i, nw, sl, bc, ns, minb, fold, ov, text)                                   \
    {16 * (nw) * (sl), (bc),                                                                         \
     launch_cfg<fwd_cfg<(nw), (sl), (bc), (ns), (minb), (fold), true, (ov) != 0, (ov) == 2 || (ov) == 3, \
                        (ov) == 3, (ov) == 4 ? 2 : 1>>},
const fwd_shape attn_fwd_wg_shapes[] = {ATTN_FWD_WG_CONFIG_LIST(ATTN_FWD_WG_SHAPE)};
#undef ATTN_FWD_WG_SHAPE
static_assert(sizeof attn_fwd_wg_shapes / sizeof attn_fwd_wg_shapes[0] == ATTN_FWD_WG_CONFIGS,
              "ATTN_FWD_WG_CONFIGS is the list's length");
