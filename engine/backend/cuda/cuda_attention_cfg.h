/* The block shapes the tensor-core attention forward (cuda_attention_fwd.cu)
 * is built in. Plain C: tests/gpu/bench/bench_attention.c times every one in
 * the same run (gf_backend_variants.attn_cfg = 1 + id forces one at be_open)
 * and prints each one's ratio to cfg 0; the product chooses among them by call
 * (ATTN_FWD_DEFAULT_* below).
 *
 * X(id, warps, slabs, bc, stages, min_blocks, fold, overlap, text):
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
 *   overlap     1 (Hopper shapes): a tile's P V runs on the tensor cores while
 *               the next tile's softmax runs (its V kept a stage longer); 2: the
 *               same with a producer warpgroup besides the warps (those compute;
 *               it issues every copy and gives them its registers: setmaxnreg); 3: 2
 *               with ping-pong (the two computing warpgroups issue their products
 *               in turn); 4: 1 with the block's barrier once every two tiles
 *               (stages 5: two tiles computed, two in flight, one V kept)
 * The product's three shapes, and cfg 8, the one candidate the H200 measured
 * faster than they are that no model figure has been measured with yet; the
 * candidates that lost to the defaults on the H200 are gone from the list
 * (docs/cuda.md, "Attention forward: what limits it", keeps their numbers). */
#ifndef GRAFT_BACKEND_CUDA_ATTENTION_CFG_H
#define GRAFT_BACKEND_CUDA_ATTENTION_CFG_H

#define ATTN_FWD_CONFIG_LIST(X)                                                                         \
    X(0, 4, 1, 64, 2, 2, 0, 0, "4 warps x 16 rows, BC 64, 2 stages, 2 blocks/SM (issue 11's shape)")      \
    X(2, 4, 1, 32, 3, 3, 1, 0, "4 warps x 16 rows, BC 32, 3 stages, 3 blocks/SM (168 registers), fold")   \
    X(3, 6, 1, 32, 3, 2, 0, 0, "6 warps x 16 rows, BC 32, 3 stages, 2 blocks/SM (168 registers)")         \
    X(8, 4, 2, 64, 2, 1, 0, 0, "4 warps x 32 rows, BC 64, 2 stages, 2 blocks/SM")
#define ATTN_FWD_MMA_CONFIGS 4

/* The Hopper shapes: both products on wgmma (warpgroups of four warps, 64
 * rows each; slabs is 1, bc 64 or 128), built for sm_90a only
 * (cuda_attention_fwd_wg.cu) and taken only on a compute capability 9.0
 * device. The same fields. cfg 23 is the product's; cfg 21, the same without
 * the overlap, stays as its reference; cfgs 20, 22 and 24 lost to both on the
 * H200 and are gone (docs/cuda.md, "The Hopper shapes", keeps their rows).
 * So are cfgs 25-27 (session 17: flash-attention-3's 128 x 128 tile on two
 * warpgroups, overlapped, two tiles ahead, and overlapped with ping-pong):
 * correct on an H100 (test_cuda_ops) but slower than cfg 23 in every case
 * bench_attention times, 0.488-0.537 against 0.475 ms at 1 x 8192 without
 * statistics (session 18, docs/cuda.md). What those lacked, a producer
 * warpgroup, cfgs 28-30 have (session 30): two computing warpgroups at 232
 * registers, with 64- or 128-key tiles, and 30 with ping-pong between them.
 * On an H100 (session 31) 28 and 29 lost to cfg 23 and 30 won ~2 % at
 * 1 x 8192 only. Session 32 timed the wgmma descriptors stepped with one add
 * (all shapes) and each computing warpgroup's own "full" barrier: cfg 23
 * 10 % faster, 28-30 2-6 %, so cfg 30 is ~8 % behind cfg 23 at 1 x 8192
 * (0.503 against 0.466 ms with statistics) and cfg 23 stays. cfg 31, 23
 * with the fold (152 fewer SASS instructions with statistics at hd 128), was
 * 0.2-1.9 % faster in the kernel and unresolved in the forward (session 32,
 * two runs each on an H100), so it is gone again. cfg 32 (session 33, an
 * H100, two runs each beside five of cfg 23's): 2-4 % faster without
 * statistics (0.421-0.426 against 0.435-0.447 ms at 1 x 8192 with the
 * training's lse), even with them (+1 % at 4 x 2048, -0.3 % at 1 x 8192),
 * and correct in its 56 forced checks of test_cuda_ops. Session 34 made it
 * the shape without statistics (ATTN_FWD_HOPPER_PLAIN) after make test-gpu
 * passed on that plan (15 of 15, an H100); the 50 % hybrid training step,
 * whose forward takes it, was even with cfg 23 (184.15-185.32 against
 * 184.00-184.89 ms, three rounds alternating). */
#define ATTN_FWD_WG_CONFIG_LIST(X)                                                                       \
    X(21, 12, 1, 64, 2, 1, 0, 0, "wgmma: 3 warpgroups x 64 rows, BC 64, 2 stages, 1 block/SM (168 registers)") \
    X(23, 12, 1, 64, 4, 1, 0, 1, "wgmma: 3 warpgroups x 64 rows, BC 64, 4 stages, 1 block/SM, P V overlapped") \
    X(28, 8, 1, 64, 4, 1, 0, 2, "wgmma: 2 warpgroups x 64 rows + a producer, BC 64, 4 stages, P V overlapped") \
    X(29, 8, 1, 128, 3, 1, 0, 2, "wgmma: 2 warpgroups x 64 rows + a producer, BC 128, 3 stages, P V overlapped") \
    X(30, 8, 1, 128, 3, 1, 0, 3, "wgmma: 29 with ping-pong between the 2 warpgroups")                  \
    X(32, 12, 1, 64, 5, 1, 0, 4, "wgmma: 23 with the block's barrier every 2 tiles, 5 stages")
#define ATTN_FWD_WG_CONFIGS 6

/* Every shape, the mma.sync ones first: the positions the backend keeps. */
#define ATTN_FWD_ALL_CONFIG_LIST(X) ATTN_FWD_CONFIG_LIST(X) ATTN_FWD_WG_CONFIG_LIST(X)
#define ATTN_FWD_CONFIGS (ATTN_FWD_MMA_CONFIGS + ATTN_FWD_WG_CONFIGS)
/* The product's shapes (ids), from bench_attention on the H200 (docs/cuda.md,
 * "Attention forward: what limits it"): with statistics (the teacher forward),
 * without them (training, prefill), and, with or without, for fewer query rows
 * than one block of the PLAIN shape holds (decode, where the key range is split). */
#define ATTN_FWD_DEFAULT_STATS 2
#define ATTN_FWD_DEFAULT_PLAIN 3
#define ATTN_FWD_DEFAULT_FEW_ROWS 0
/* On a compute capability 9.0 device (H100, H200), with statistics and
 * without: cfg 23 ran 1.37x / 1.60x cfg 2 with statistics and 1.39x / 1.57x
 * cfg 3 without, at 4 x 2048 / 1 x 8192, and 1.05x / 1.09x cfg 21 with
 * statistics (bench_attention, one call, docs/cuda.md "The Hopper shapes");
 * without them cfg 32, 2-4 % faster in the kernel than cfg 23 (above). */
#define ATTN_FWD_HOPPER_STATS 23
#define ATTN_FWD_HOPPER_PLAIN 32

/* The attention backward's tensor-core kernels: mma.sync (every GPU), or wgmma
 * (cuda_attention_bwd_wg.cu, sm_90a: compute capability 9.0 only) with one
 * warpgroup a block of 64 keys (WGMMA) or two a block of 128 (WGMMA2, head
 * dim 128; other head dims run WGMMA's kernel). CHOSEN takes WGMMA2 on compute
 * capability 9.0, mma.sync elsewhere. On an H100: WGMMA against mma.sync 0.674
 * vs 0.778 ms at 4 x 2048, 2.115 vs 2.532 at 1 x 8192 (session 14,
 * bench_attention, one run); WGMMA2 against WGMMA 391 vs 537 us a launch inside
 * the plain training step, and that step 172.7 vs 175.2 ms (means of four),
 * the hybrid's 187.0 vs 189.3 (medians of seven and six; session 21,
 * alternating);
 * checks and benchmarks force any (gf_backend_variants.attn_bwd,
 * GRAFT_CUDA_ATTN_BWD=mma|wgmma|wgmma2). */
enum { ATTN_BWD_CHOSEN = 0, ATTN_BWD_MMA = 1, ATTN_BWD_WGMMA = 2, ATTN_BWD_WGMMA2 = 3 };

/* The position in ATTN_FWD_CONFIG_LIST of the shape numbered id; -1: none. */
static inline int attn_fwd_cfg_pos(int id) {
    int pos = 0;
#define ATTN_FWD_POS(i, nw, sl, bc, ns, minb, fold, ov, text) \
    if (id == (i)) return pos;                             \
    pos++;
    ATTN_FWD_ALL_CONFIG_LIST(ATTN_FWD_POS)
#undef ATTN_FWD_POS
    return -1;
}

#endif
