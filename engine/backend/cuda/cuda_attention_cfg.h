/* The block shapes the tensor-core attention forward (cuda_attention_fwd.cu)
 * is built in. Plain C: tests/gpu/bench/bench_attention.c times every one in
 * the same run (gf_backend_variants.attn_cfg = 1 + id forces one at be_open)
 * and prints each one's ratio to cfg 0; the product chooses among them by call
 * (ATTN_FWD_DEFAULT_* below).
 *
 * X(id, warps, slabs, bc, stages, min_blocks, fold, text):
 *   id          the shape's number in docs/cuda.md's tables
 *   warps       warps per block; a warp owns 16 slabs query rows (BR = 16 warps slabs)
 *   slabs       m16 row slabs per warp: 1 keeps Q's fragments in registers for
 *               the whole key loop (Q is staged through the last pipeline
 *               buffer), 2 reads them from shared memory per tile
 *   bc          keys per K/V tile
 *   stages      K/V tiles in flight (cp.async ring)
 *   min_blocks  __launch_bounds__ minimum blocks per SM: caps registers per
 *               thread at 64K / (32 warps min_blocks)
 *   fold        1: scores scale inside the exponent's FMA (x - m = fma(s, c, -m))
 *               instead of a multiply per score first; fewer instructions,
 *               sometimes more registers
 * The product's three shapes, and cfg 8, the one candidate the H200 measured
 * faster than they are that no model figure has been measured with yet; the
 * candidates that lost to the defaults on the H200 are gone from the list
 * (docs/cuda.md, "Attention forward: what limits it", keeps their numbers). */
#ifndef GRAFT_BACKEND_CUDA_ATTENTION_CFG_H
#define GRAFT_BACKEND_CUDA_ATTENTION_CFG_H

#define ATTN_FWD_CONFIG_LIST(X)                                                                         \
    X(0, 4, 1, 64, 2, 2, 0, "4 warps x 16 rows, BC 64, 2 stages, 2 blocks/SM (issue 11's shape)")      \
    X(2, 4, 1, 32, 3, 3, 1, "4 warps x 16 rows, BC 32, 3 stages, 3 blocks/SM (168 registers), fold")   \
    X(3, 6, 1, 32, 3, 2, 0, "6 warps x 16 rows, BC 32, 3 stages, 2 blocks/SM (168 registers)")         \
    X(8, 4, 2, 64, 2, 1, 0, "4 warps x 32 rows, BC 64, 2 stages, 2 blocks/SM")

#define ATTN_FWD_CONFIGS 4
/* The product's shapes (ids), from bench_attention on the H200 (docs/cuda.md,
 * "Attention forward: what limits it"): with statistics (the teacher forward),
 * without them (training, prefill), and, with or without, for fewer query rows
 * than one block of the PLAIN shape holds (decode, where the key range is split). */
#define ATTN_FWD_DEFAULT_STATS 2
#define ATTN_FWD_DEFAULT_PLAIN 3
#define ATTN_FWD_DEFAULT_FEW_ROWS 0

/* The position in ATTN_FWD_CONFIG_LIST of the shape numbered id; -1: none. */
static inline int attn_fwd_cfg_pos(int id) {
    int pos = 0;
#define ATTN_FWD_POS(i, nw, sl, bc, ns, minb, fold, text) \
    if (id == (i)) return pos;                             \
    pos++;
    ATTN_FWD_CONFIG_LIST(ATTN_FWD_POS)
#undef ATTN_FWD_POS
    return -1;
}

#endif
