/* Causal GQA attention, forward, on the tensor cores (flash-attention-2
 * style): bf16 q, k, v; fp32 scores, online softmax and output accumulation;
 * the per-head statistics of METHOD.md section 4 in the same pass, never a
 * T x T matrix.
 *
 * Blocking. A block owns BR = 16 NW SL query rows of one (sequence, KV
 * head): the rows of the whole query group packed as (t, head of the group),
 * row r -> t = r / G, head = kvh G + r % G, so each key/value tile read into
 * shared memory serves every head that reads it (and a decode step, T = 1,
 * fills G rows instead of 1). NW warps own 16 SL rows each: SL m16 slabs
 * (SL = 2 halves the shared-memory reads of K and V per product, the limit of
 * mma.sync on Hopper, at the price of registers; Q is then re-read from shared
 * memory instead of kept in registers). Key/value tiles of BC rows stream
 * through a ring of NS buffers filled by cp.async while earlier tiles are
 * computed (one barrier per tile). The shape is a compile-time configuration
 * (cuda_attention_cfg.h lists them; bench_attention times each). Per tile and
 * warp: S = Q K^T (mma m16n8k16, K fragments by
 * ldmatrix), mask (key j > query position i), online softmax in log2 units,
 * O += P V (P from the S accumulators repacked as bf16 A fragments, V
 * fragments by ldmatrix.trans).
 *
 * Statistics (STATS): each thread keeps, for each of its rows, partial sums
 * over its columns of e = 2^(x - m), e (x - m) and e (i - j), key 0 excluded
 * and its score kept apart, plus the diagonal's score; all rescale with the
 * running max (cuda_attention.cuh, attn_finish_row, says how they become the
 * five statistics). The (i - j) sum is formed per tile as
 * (i - jb) sum e - sum e c with c = j - jb a compile-time column offset.
 *
 * Split (SPLIT): when the grid would not fill the GPU (a decode step, a short
 * chunk after a long cache), each row tile's key tiles are cut into ranges,
 * one block each; blocks leave unnormalized partial results (O, max, sums)
 * and attn_fwd_combine_kernel merges them per row (cuda_attention_fwd.cu).
 *
 * Hopper shapes (WG): the same kernel with both products on wgmma
 * (cuda_wgmma.cuh) instead of mma.sync: each warpgroup of four warps owns 64
 * rows; S = Q K^T reads Q and the K tile from shared memory (no ldmatrix, Q
 * kept there instead of in registers), O += P V takes P from registers (the S
 * accumulators repacked as bf16, as for mma.sync: the accumulator layouts are
 * the same) and V from shared memory. Tiles are stored 128-byte swizzled
 * instead of padded; the masking, online softmax and statistics are the
 * mma.sync shapes' code. OV overlaps a tile's P V with the next tile's
 * softmax. Built only for sm_90a (cuda_attention_fwd_wg.cu);
 * this header is included by both files, each instantiating its own shapes.
 *
 * Producer warpgroup (WS, with OV): one more warpgroup after the computing
 * ones (warps NW .. NW + 3) issues every copy (Q, then each K/V tile into the
 * ring) and the computing warpgroups issue none. It hands a stage over when its copies have landed
 * (bar.arrive on the stage's "full" barrier of each computing warpgroup, where that group
 * waits) and reloads it once they are done with it (they arrive at its "empty"
 * barrier after the tile's P V finished), running up to NS - 2 tiles ahead.
 * It gives its registers to them (setmaxnreg), so a 64-row warpgroup keeps
 * its scores, probabilities and output without spilling. PP adds
 * flash-attention-3's ping-pong: the two computing warpgroups issue their
 * products in turn, so one's softmax overlaps the other's products. */
#ifndef GRAFT_BACKEND_CUDA_ATTENTION_FWD_KERNEL_CUH
#define GRAFT_BACKEND_CUDA_ATTENTION_FWD_KERNEL_CUH

#include "backend/cuda/cuda_attention.cuh"
#include "backend/cuda/cuda_attention_cfg.h"
#include "backend/cuda/cuda_mma.cuh"
#include "backend/cuda/cuda_wgmma.cuh"

#define PART_SCALARS 6 /* m, l, w, d, xd, x0 */

/* One block shape (cuda_attention_cfg.h says what each field buys). */
template <int NW_, int SL_, int BC_, int NS_, int MINB_, int FOLD_, bool WG_ = false, bool OV_ = false, bool WS_ = false,
          bool PP_ = false, int G_ = 1>
struct fwd_cfg {
    static constexpr int NW = NW_, SL = SL_, BC = BC_, NS = NS_, MINB = MINB_, G = G_;
    static constexpr bool FOLD = FOLD_ != 0, WG = WG_, OV = OV_, WS = WS_, PP = PP_;
    /* NW warps compute (NC threads); WS adds a producer warpgroup that only loads (NT threads in all) */
    static constexpr int NC = NW * 32, NT = NC + (WS ? 128 : 0), BR = 16 * NW * SL;
    /* tiles in flight ahead of the one computed: OV keeps the previous tile's V a tile longer */
    static constexpr int AHEAD = OV ? NS - 2 : NS - 1;
    /* G > 1 (the overlap, no producer): the block meets at its barrier once every G tiles instead of
     * once a tile, so the warpgroups, whose products take turns on the tensor cores, can drift apart
     * by up to G tiles. At the first tile of a group every copy of the group (issued at the start of
     * the group before) has landed, the group after it is issued into the stages of tiles kt - G - 1
     * .. kt - 2 (kt - 1's V is still read): G tiles computed, G in flight, one kept, 2 G + 1 stages. */
    static_assert(G == 1 || (OV && !WS && NS == 2 * G + 1 && (G & (G - 1)) == 0),
                  "a barrier every G tiles: the overlap, 2 G + 1 stages, G a power of 2 (kt mod G is a mask)");
    static_assert(!WG || (NW % 4 == 0 && SL == 1 && (BC == 64 || BC == 128)),
                  "a Hopper shape: whole warpgroups, one slab, 64 or 128 keys (wgmma's n)");
    static_assert(!OV || (WG && NS >= 3), "the overlap is a Hopper shape's, with a stage for the previous tile's V");
    /* WS: named barriers 1 .. NWG NS (stage full, one per computing warpgroup and stage: each group
     * waits for the producer alone, not for the other group too, which a barrier of the whole block
     * made them do at every tile, undoing ping-pong's offset: session 31's profile), then NS (stage
     * empty), then one for the computing warps alone; registers: the launch's even share (64K / NT, a
     * multiple of 8), then the producer keeps PRODUCER_REGS and the computing warpgroups take what it
     * gave back (setmaxnreg) */
    static constexpr int NWG = NW / 4;
    static constexpr int BAR_FULL = 1, BAR_EMPTY = 1 + NWG * NS, BAR_COMPUTE = BAR_EMPTY + NS;
    static_assert(!WS || (OV && MINB == 1 && BAR_COMPUTE <= 15), "a producer warpgroup: the overlap, one block an SM");
    /* PP (ping-pong): the two computing warpgroups take turns issuing a tile's products, each waiting
     * at its own barrier (BAR_PP, BAR_PP + 1) for the other's arrival after it issued its own, so one
     * group's softmax runs while the other's products do */
    static constexpr int BAR_PP = BAR_COMPUTE + 1;
    static_assert(!PP || (WS && NW == 8 && BAR_PP + 1 <= 15), "ping-pong: two computing warpgroups and a producer");
    static constexpr int LAUNCH_REGS = (65536 / NT) / 8 * 8 > 255 ? 248 : (65536 / NT) / 8 * 8;
    static constexpr int PRODUCER_REGS = 40;
    static constexpr int COMPUTE_REGS = (LAUNCH_REGS + (LAUNCH_REGS - PRODUCER_REGS) * 128 / NC) / 8 * 8;
    static_assert(!WS || COMPUTE_REGS <= 256, "setmaxnreg takes at most 256");
};

/* Shared memory, in bf16 elements: a ring of NS (K, V) tile pairs. SL = 1
 * stages Q through the ring's last pair (the prologue fills the others) and
 * keeps it in registers after the first tile; SL > 1 keeps Q in its own
 * region in front of the ring. The Hopper shapes keep Q in its own region
 * too (wgmma reads it there every tile), store every tile unpadded and
 * 128-byte swizzled (cuda_wgmma.cuh), and start at the first 1024-byte
 * aligned address of the block's shared memory (the swizzle's atoms; 1 KiB
 * more asked for it). */
template <int HD, class C> struct fwd_smem {
    /* row stride in bf16: 16 bytes of padding, conflict-free ldmatrix; the swizzle needs none */
    static constexpr int LDS = C::WG ? HD : HD + 8;
    static constexpr int Q = C::BR * LDS, KV = C::BC * LDS, RING = C::NS * 2 * KV;
    static constexpr int Q_OFF = C::SL == 1 && !C::WG ? (C::NS - 1) * 2 * KV : 0;
    static constexpr int RING_OFF = C::SL == 1 && !C::WG ? 0 : Q;
    static constexpr int total = C::SL == 1 && !C::WG ? (RING > Q_OFF + Q ? RING : Q_OFF + Q) : Q + RING;
    static constexpr size_t align = C::WG ? 1024 : 0;
    static constexpr size_t bytes = (size_t)total * sizeof(bf16) + align;
};

template <int HD, class C, bool STATS, bool SPLIT>
__global__ void __launch_bounds__(C::NT, C::MINB) attn_fwd_mma_kernel(const attn_fwd_params p) {
    constexpr int SL = C::SL, BC = C::BC, NS = C::NS, NT = C::NT, BR = C::BR;
    constexpr bool FOLD = C::FOLD;
    constexpr int LDS = fwd_smem<HD, C>::LDS, KVE = fwd_smem<HD, C>::KV, CPR = HD / 8; /* 16-byte chunks per row */
    constexpr int R = 2 * SL; /* rows per thread: (slab, half) -> index 2 slab + half */
    constexpr bool WG = C::WG;
    CUDA_DYNAMIC_SMEM(smem_raw);
    unsigned char *smem_base = smem_raw + (WG ? (1024u - (smem_u32(smem_raw) & 1023u)) & 1023u : 0u);
    bf16 *Qs = (bf16 *)smem_base + fwd_smem<HD, C>::Q_OFF;
    bf16 *ring = (bf16 *)smem_base + fwd_smem<HD, C>::RING_OFF; /* stage s: K at 2 s KVE, V at (2 s + 1) KVE */

    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, gid = lane >> 2, tig = lane & 3;
    const int n_split = SPLIT ? p.n_split : 1;
    const int kvh = blockIdx.x, b = blockIdx.y;
    const int tile = p.n_tiles - 1 - (int)blockIdx.z / n_split; /* heaviest first */
    const int split = SPLIT ? (int)blockIdx.z % n_split : 0;
    const int G = p.G, r0 = tile * BR, n_keys = p.pos0 + p.T;
    const bf16 *q = (const bf16 *)p.q, *k = (const bf16 *)p.k, *v = (const bf16 *)p.v;

    const int r_last = min(r0 + BR, p.rows) - 1;
    const int n_kt = (p.pos0 + r_last / G) / BC + 1; /* key tiles up to the block's last query position */
    const int kt_begin = SPLIT ? min(n_kt, split * p.kt_per_split) : 0;
    const int kt_end = SPLIT ? min(n_kt, kt_begin + p.kt_per_split) : n_kt;

    /* the threads that copy: the block's, or WS's producer warpgroup (lt its thread's index there) */
    constexpr int LT = C::WS ? 128 : NT;
    const int lt = C::WS ? tid - C::NC : tid;
    /* Q tile: rows (t, head) -> q[b, t, head, :]; rows past the end are zero.
     * Committed with the first K/V tile (one group). */
    auto load_q = [&]() {
        for (int c = lt; c < BR * CPR; c += LT) {
            const int row = c / CPR, col = (c % CPR) * 8, r = r0 + row;
            const bool ok = r < p.rows;
            const int t = ok ? r / G : 0, h = kvh * G + (ok ? r % G : 0);
            bf16 *dst = WG ? (bf16 *)((unsigned char *)Qs + swz128_offset(BR, row, col / 8)) : Qs + row * LDS + col;
            cp_async16(dst, q + (((size_t)b * p.T + t) * p.H + h) * HD + col, ok);
        }
    };
    /* K/V tiles: each thread copies the 16-byte chunks (row ld_row + rr, columns (lt % CPR) 8 ..+7) for
     * rr = 0, LROWS, 2 LROWS, ...; the addresses are formed once here and a tile adds kt BC key rows
     * (forming them per chunk in 64-bit arithmetic took a quarter of the loop's instructions). */
    constexpr int LROWS = LT / CPR; /* rows one pass of the copying threads covers */
    static_assert(LT % CPR == 0, "a pass of the copying threads covers whole rows");
    static_assert(!WG || LROWS % 8 == 0, "a thread's rows keep their swizzle (row % 8)");
    /* this thread's first chunk, in bf16 elements from the tile's start; a pass adds LROWS rows (the
     * swizzled layout's rows are HD / 64 column blocks apart, LDS = HD elements a row within all of them) */
    const int ld_row = lt / CPR;
    const int ld_smem = WG ? (int)swz128_offset(BC, ld_row, lt % CPR) / 2 : ld_row * LDS + (lt % CPR) * 8;
    constexpr int ROW_STEP = WG ? 64 : LDS; /* elements between a chunk and the same chunk one row down */
    const size_t ld_off = ((size_t)b * p.S * p.KV + kvh) * HD + (lt % CPR) * 8; /* key 0's chunk */
    auto load_kv = [&](int kt, int stage) {
        bf16 *kd = ring + 2 * stage * KVE + ld_smem, *vd = kd + KVE;
        const int j0 = kt * BC + ld_row;
#pragma unroll
        for (int rr = 0; rr < BC; rr += LROWS) {
            if (BC % LROWS == 0 || ld_row + rr < BC) {
                const int j = j0 + rr;
                const bool ok = j < n_keys;
                const size_t off = ld_off + (size_t)(unsigned)(ok ? j : 0) * (unsigned)(p.KV * HD);
                cp_async16(kd + rr * ROW_STEP, k + off, ok);
                cp_async16(vd + rr * ROW_STEP, v + off, ok);
            }
        }
    };
    constexpr int AHEAD = C::AHEAD;
    if constexpr (C::WS) {
        if (warp >= C::NW) {
            /* the producer: tile i of the range into stage i % NS once the computing warps are done with
             * tile i - NS there; tile i - AHEAD handed over once its copies (and Q's, with tile 0) landed */
            setmaxnreg<false, C::PRODUCER_REGS>();
            /* stage st's tile to every computing warpgroup, on its own "full" barrier (the producer's
             * 128 threads and the group's 128) */
            auto hand_over = [&](int st) {
#pragma unroll
                for (int g = 0; g < C::NWG; g++) named_bar_arrive(C::BAR_FULL + g * NS + st, 2 * 128);
            };
            const int n = kt_end - kt_begin;
            for (int i = 0; i < n; i++) {
                if (i >= NS) named_bar_sync(C::BAR_EMPTY + i % NS, NT);
                if (i == 0) load_q();
                load_kv(kt_begin + i, i % NS);
                cp_async_commit();
                if (i >= AHEAD) {
                    cp_async_wait<AHEAD>();
                    fence_proxy_async(); /* visible to wgmma's operand reads */
                    hand_over((i - AHEAD) % NS);
                }
            }
            cp_async_wait<0>();
            fence_proxy_async();
            for (int i = n - AHEAD > 0 ? n - AHEAD : 0; i < n; i++) hand_over(i % NS);
            return;
        }
        setmaxnreg<true, C::COMPUTE_REGS>();
        /* ping-pong: warpgroup 0 issues first */
        if (C::PP && warp >= 4 && kt_end > kt_begin) named_bar_arrive(C::BAR_PP, 2 * 128);
    } else if constexpr (C::G > 1) {
        /* prologue: the first group's tiles into stages 0 .. G - 1, with Q, one copy group */
        load_q();
#pragma unroll
        for (int st = 0; st < C::G; st++)
            if (kt_begin + st < kt_end) load_kv(kt_begin + st, st);
        cp_async_commit();
    } else {
        /* prologue: tiles kt_begin .. kt_begin + AHEAD - 1 into stages 0 .. AHEAD - 1, one group each (empty
         * groups keep the count); Q with the first */
        load_q();
#pragma unroll
        for (int st = 0; st < AHEAD; st++) {
            if (kt_begin + st < kt_end) load_kv(kt_begin + st, st);
            cp_async_commit();
        }
    }

    /* this thread's rows: slab s, half h -> rw0 + 16 s + 8 h + gid */
    const int rw0 = r0 + warp * 16 * SL;
    const bool warp_live = rw0 < p.rows;
    int ri[R], pos[R];
#pragma unroll
    for (int x = 0; x < R; x++) {
        ri[x] = rw0 + 16 * (x >> 1) + 8 * (x & 1) + gid;
        pos[x] = p.pos0 + ri[x] / G;
    }
    const int iw_min = p.pos0 + rw0 / G, iw_max = p.pos0 + min(rw0 + 16 * SL - 1, p.rows - 1) / G;
    /* Which tiles a warp computes: a wgmma is one instruction of the whole warpgroup, so the Hopper
     * shapes decide per warpgroup (64 rows), and OV per block (every tile of its range: a wgmma in a
     * branch ptxas cannot prove uniform is serialized); a warp past its own rows' positions then
     * computes a tile that is all masked for it, which adds exactly 0 to its sums. The warpgroup's
     * index comes through a shuffle so that ptxas knows it is the same in every lane (and builds the
     * Q operand's wgmma descriptors in uniform registers). */
    const int wg = WG ? __shfl_sync(0xffffffffu, warp >> 2, 0) : 0;
    const int rg0 = r0 + wg * 64;
    const bool live = C::OV || (WG ? rg0 < p.rows : warp_live);
    const int i_max = C::OV ? p.pos0 + min(r0 + BR - 1, p.rows - 1) / G
                      : WG  ? p.pos0 + min(rg0 + 63, p.rows - 1) / G
                            : iw_max;

    uint32_t qf[SL == 1 ? HD / 16 : 1][4]; /* SL = 1: Q fragments stay in registers */
    float o[SL][HD / 8][4];
#pragma unroll
    for (int sl = 0; sl < SL; sl++)
#pragma unroll
        for (int i = 0; i < HD / 8; i++) o[sl][i][0] = o[sl][i][1] = o[sl][i][2] = o[sl][i][3] = 0.0f;
    float m[R], l[R], w[R], d[R], xd[R], x0[R]; /* STATS: l excludes key 0 */
#pragma unroll
    for (int x = 0; x < R; x++) {
        m[x] = -INFINITY;
        l[x] = w[x] = d[x] = 0.0f;
        xd[x] = x0[x] = MASKED_SCORE;
    }

    float s[SL][BC / 8][4]; /* the tile's scores, then its probabilities */
    /* OV (a Hopper shape): the wgmma of a tile's P V runs while the next tile's softmax does, so the
     * probabilities stay packed in pa until it is done, and each row's rescale of O by the next tile's
     * max waits for it too (al_row). Every tile of the range runs the same wgmma sequence (S of tile
     * kt, P V of tile kt - 1; on the first tile a P of zeros times that tile's V), so no wgmma or wait
     * sits in a branch; the last tile's P V follows the loop */
    uint32_t pa[WG ? BC / 16 : 1][4];
#pragma unroll
    for (int kk = 0; kk < (WG ? BC / 16 : 1); kk++) pa[kk][0] = pa[kk][1] = pa[kk][2] = pa[kk][3] = 0u;
    float al_row[R];
    int stage = 0; /* (kt - kt_begin) % NS: the stage tile kt is in */
    /* O += P V for the P in pa, the V of ring stage st; OV leaves it running (committed, not waited for) */
    auto issue_pv = [&](int st) {
        const uint64_t vd = wgmma_desc(smem_u32(ring + (2 * st + 1) * KVE), BC * 128, 1024);
#pragma unroll
        for (int kk = 0; kk < (WG ? BC / 16 : 1); kk++)
            wgmma_rs<HD, true>(&o[0][0][0], pa[kk], wgmma_desc_at(vd, kk * 16 * 128), true);
        wgmma_commit();
    };
    /* after a P V's wgmma finished: O's and pa's registers may be read and written again */
    auto pv_done = [&]() {
        wgmma_reg_fence_all(o[0]);
        wgmma_reg_fence_all(pa);
    };
    for (int kt = kt_begin; kt < kt_end; kt++) {
        if constexpr (C::WS) {
            /* the producer's copies of tile kt (and Q) landed; this warpgroup's barrier */
            named_bar_sync(C::BAR_FULL + wg * NS + stage, 2 * 128);
        } else if constexpr (C::G > 1) {
            if (((kt - kt_begin) & (C::G - 1)) == 0) {
                cp_async_wait<0>(); /* this thread's copies of the group (and Q) landed */
                fence_proxy_async();
                __syncthreads(); /* everyone's landed; everyone is done with tiles up to kt - 2 */
#pragma unroll
                for (int j = 0; j < C::G; j++)
                    if (kt + C::G + j < kt_end) load_kv(kt + C::G + j, (stage + C::G + j) % NS);
                cp_async_commit();
            }
        } else {
            cp_async_wait<AHEAD - 1>(); /* this thread's copies of tile kt (and Q) landed; later tiles may be in flight */
            if (WG) fence_proxy_async(); /* ... and visible to wgmma's operand reads */
            __syncthreads();             /* everyone's landed; everyone is done with tile kt - 1 */
        }
        if (SL == 1 && !WG && kt == kt_begin) {
            if (warp_live) {
#pragma unroll
                for (int kk = 0; kk < (SL == 1 ? HD / 16 : 1); kk++)
                    ldsm_x4(qf[kk], Qs + (warp * 16 + (lane & 15)) * LDS + kk * 16 + (lane >> 4) * 8);
            }
            __syncthreads(); /* Q's stage is free: the load below may overwrite it */
        }
        /* tile kt + AHEAD into the stage tile kt - 1 left (OV: kt - 2; kt - 1's V is still read) */
        const int ld_stage = (stage + AHEAD) % NS, prev_stage = stage == 0 ? NS - 1 : stage - 1;
        if constexpr (!C::WS && C::G == 1) {
            if (kt + AHEAD < kt_end) load_kv(kt + AHEAD, ld_stage);
            cp_async_commit();
        }
        if (live && kt * BC <= i_max) {
            const bf16 *Kb = ring + 2 * stage * KVE, *Vb = Kb + KVE;
            if constexpr (WG) {
                /* S = Q K^T over HD / 16 k steps: the warpgroup's 64 rows of Q, the tile's BC keys (both
                 * K-major); the first step overwrites the accumulators */
                const uint64_t qd = wgmma_desc(smem_u32(Qs) + (uint32_t)wg * 64 * 128, 16, 1024),
                               kd = wgmma_desc(smem_u32(Kb), 16, 1024);
                if (C::PP) named_bar_sync(C::BAR_PP + wg, 2 * 128); /* this warpgroup's turn */
                wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < HD / 16; kk++) {
                    const uint32_t kb = (uint32_t)(kk >> 2), ks = (uint32_t)(kk & 3) * 32;
                    wgmma_ss<BC, false>(&s[0][0][0], wgmma_desc_at(qd, kb * BR * 128 + ks),
                                        wgmma_desc_at(kd, kb * BC * 128 + ks), kk > 0);
                }
                wgmma_commit();
                if (C::OV) {
                    issue_pv(kt > kt_begin ? prev_stage : stage); /* the previous tile's P V, behind this S */
                    /* the other warpgroup's turn (warpgroup 1's last one would find nobody waiting) */
                    if (C::PP && (wg == 0 || kt + 1 < kt_end)) named_bar_arrive(C::BAR_PP + 1 - wg, 2 * 128);
                    wgmma_wait<1>(); /* S done; the P V may run on through the softmax */
                } else {
                    wgmma_wait<0>();
                }
                wgmma_reg_fence_all(s[0]);
            } else {
#pragma unroll
                for (int sl = 0; sl < SL; sl++)
#pragma unroll
                    for (int i = 0; i < BC / 8; i++) s[sl][i][0] = s[sl][i][1] = s[sl][i][2] = s[sl][i][3] = 0.0f;
#pragma unroll
                for (int kk = 0; kk < HD / 16; kk++) {
                    uint32_t qa[SL][4];
#pragma unroll
                    for (int sl = 0; sl < SL; sl++) {
                        if (SL == 1) {
#pragma unroll
                            for (int i = 0; i < 4; i++) qa[sl][i] = qf[SL == 1 ? kk : 0][i];
                        } else {
                            ldsm_x4(qa[sl], Qs + (warp * 16 * SL + sl * 16 + (lane & 15)) * LDS + kk * 16 + (lane >> 4) * 8);
                        }
                    }
#pragma unroll
                    for (int np = 0; np < BC / 16; np++) {
                        uint32_t bk[4];
                        ldsm_x4(bk, Kb + (np * 16 + (lane >> 4) * 8 + (lane & 7)) * LDS + kk * 16 + ((lane >> 3) & 1) * 8);
#pragma unroll
                        for (int sl = 0; sl < SL; sl++) {
                            mma_bf16_n16(s[sl][2 * np], s[sl][2 * np + 1], qa[sl], bk);
                        }
                    }
                }
            }
            /* scale to log2 units; mask keys past each row's position (only tiles
             * reaching the warp's first position need it; they hold every
             * diagonal: MASKED below, a compile-time branch so that the other
             * tiles carry no mask arithmetic). FOLD leaves the scores unscaled here: the row max scales
             * after the max (the same number, rounding being monotone) and each
             * score inside y's FMA below (one FMA instead of a multiply and a
             * subtraction; y changes by float rounding only). */
            const float sc = p.scale_log2;
            const int jb = kt * BC + tig * 2;
            const bool has_key0 = STATS && kt == 0 && tig == 0;
            auto softmax = [&](auto masked_tag) {
                constexpr bool MASKED = decltype(masked_tag)::value;
#pragma unroll
                for (int x = 0; x < R; x++) {
                    const int sl = x >> 1, c2 = 2 * (x & 1); /* accumulator entries c2, c2 + 1 are this row's */
                    float mx = MASKED_SCORE;
#pragma unroll
                    for (int nt = 0; nt < BC / 8; nt++)
#pragma unroll
                        for (int e = 0; e < 2; e++) {
                            const int j = jb + nt * 8 + e;
                            float xv = FOLD ? s[sl][nt][c2 + e] : s[sl][nt][c2 + e] * sc;
                            if (MASKED) {
                                if (STATS && j == pos[x]) xd[x] = FOLD ? xv * sc : xv;
                                if (j > pos[x]) xv = MASKED_SCORE;
                            }
                            if (!FOLD || MASKED) s[sl][nt][c2 + e] = xv;
                            mx = fmaxf(mx, xv);
                        }
                    if (has_key0) x0[x] = FOLD ? s[sl][0][c2] * sc : s[sl][0][c2]; /* key 0 is never masked */
                    mx = quad_max(mx);
                    /* MASKED_SCORE (log2 units already) while the row saw no key */
                    const float mn = fmaxf(m[x], FOLD && mx != MASKED_SCORE ? mx * sc : mx);
                    /* 2^(old max - new max): 1 exactly where the max stayed, 0 on the row's first keys */
                    const float al = mn == m[x] ? 1.0f : exp2_approx(m[x] - mn);
                    float rs = 0, ws = 0, cs = 0;
#pragma unroll
                    for (int nt = 0; nt < BC / 8; nt++)
#pragma unroll
                        for (int e = 0; e < 2; e++) {
                            const float y = FOLD ? fmaf(s[sl][nt][c2 + e], sc, -mn) : s[sl][nt][c2 + e] - mn;
                            /* a masked key is exactly 0 even where a row saw no key yet (mn = MASKED) */
                            float pv = exp2_approx(y);
                            if (MASKED && jb + nt * 8 + e > pos[x]) pv = 0.0f;
                            s[sl][nt][c2 + e] = pv;
                            if (STATS) {
                                const float ev = (nt == 0 && e == 0 && has_key0) ? 0.0f : pv;
                                rs += ev;
                                ws += ev * y;
                                cs += ev * (float)(nt * 8 + e);
                            } else {
                                rs += pv;
                            }
                        }
                    if (STATS) {
                        /* w is relative to the max: moving it from m to mn shifts every term by (m - mn) */
                        w[x] = kt == kt_begin ? ws : al * (w[x] + (m[x] - mn) * l[x]) + ws;
                        d[x] = d[x] * al + (float)(pos[x] - jb) * rs - cs;
                    }
                    l[x] = l[x] * al + rs;
                    m[x] = mn;
                    /* O follows the row's max only where it moved in some row of the warp;
                     * past a row's first tiles it seldom does (HD / 4 multiplies a row saved) */
                    if (C::OV) {
                        al_row[x] = al; /* applied once the previous tile's P V is in O */
                    } else if (__any_sync(0xffffffffu, al != 1.0f)) {
#pragma unroll
                        for (int dt = 0; dt < HD / 8; dt++) {
                            o[sl][dt][c2] *= al;
                            o[sl][dt][c2 + 1] *= al;
                        }
                    }
                }
            };
            if (kt * BC + BC - 1 >= iw_min) softmax(bool_tag<true>{});
            else softmax(bool_tag<false>{});
            if constexpr (WG) {
                /* O += P V: P's BC / 16 k steps packed first (a register a wgmma reads is written before
                 * the fence, not between), keys 16 kk .. 16 kk + 15 of the tile (two 8-row groups 1024
                 * bytes apart), V MN-major, its HD columns in blocks of 64, BC rows apart. OV: the
                 * previous tile's P V finishes first, then O takes this tile's rescale, and this tile's
                 * P V is issued with the next tile's S */
                if (C::OV) {
                    wgmma_wait<0>();
                    pv_done();
                    /* tile kt - 1's stage is read no more: back to the producer when it will reload it */
                    if (C::WS && kt > kt_begin && kt - 1 + NS < kt_end) named_bar_arrive(C::BAR_EMPTY + prev_stage, NT);
#pragma unroll
                    for (int x = 0; x < R; x++) {
                        const int c2 = 2 * (x & 1);
                        if (__any_sync(0xffffffffu, al_row[x] != 1.0f)) {
#pragma unroll
                            for (int dt = 0; dt < HD / 8; dt++) {
                                o[0][dt][c2] *= al_row[x];
                                o[0][dt][c2 + 1] *= al_row[x];
                            }
                        }
                    }
                }
#pragma unroll
                for (int kk = 0; kk < BC / 16; kk++) acc_to_a(pa[kk], s[0][2 * kk], s[0][2 * kk + 1]);
                if (!C::OV) { /* (OV: tile kt's P V goes with the next tile's S, or after the loop) */
                    wgmma_fence(); /* O (rescaled) and P were written by ordinary instructions */
                    issue_pv(stage);
                    wgmma_wait<0>(); /* before the next tile's softmax rescales O, and the ring slot is reloaded */
                    pv_done();
                }
            } else {
#pragma unroll
                for (int kk = 0; kk < BC / 16; kk++) {
                    uint32_t a[SL][4];
#pragma unroll
                    for (int sl = 0; sl < SL; sl++) acc_to_a(a[sl], s[sl][2 * kk], s[sl][2 * kk + 1]);
#pragma unroll
                    for (int dp = 0; dp < HD / 16; dp++) {
                        uint32_t bv[4];
                        ldsm_x4_t(bv, Vb + (kk * 16 + ((lane >> 3) & 1) * 8 + (lane & 7)) * LDS + dp * 16 + (lane >> 4) * 8);
#pragma unroll
                        for (int sl = 0; sl < SL; sl++) {
                            mma_bf16_n16(o[sl][2 * dp], o[sl][2 * dp + 1], a[sl], bv);
                        }
                    }
                }
            }
        }
        stage = stage == NS - 1 ? 0 : stage + 1;
    }
    if (C::OV && kt_end > kt_begin) { /* the last tile's P V */
        wgmma_fence();
        issue_pv(stage == 0 ? NS - 1 : stage - 1);
        wgmma_wait<0>();
        pv_done();
    }
    if constexpr (C::WS) {
        named_bar_sync(C::BAR_COMPUTE, C::NC); /* the producer is done: its last copies were handed over */
    } else {
        cp_async_wait<0>();
        __syncthreads(); /* every warp is done with the ring before the finish reuses shared memory */
    }

    /* ---- finish: the quad's partial sums, then either the split's partials or the rows */
    float *rowstat = (float *)smem_raw; /* [BR][GF_STAT_COUNT], over the ring and Q (no longer read) */
    if (warp_live) {
#pragma unroll
        for (int x = 0; x < R; x++) {
            l[x] = quad_sum(l[x]);
            if (STATS) {
                w[x] = quad_sum(w[x]);
                d[x] = quad_sum(d[x]);
                xd[x] = quad_max(xd[x]);
                x0[x] = __shfl_sync(0xffffffffu, x0[x], lane & ~3);
            }
        }
        if (SPLIT) {
#pragma unroll
            for (int x = 0; x < R; x++) {
                const int sl = x >> 1, c2 = 2 * (x & 1), r = ri[x];
                if (r >= p.rows) continue;
                const size_t idx = (((size_t)b * p.KV + kvh) * p.rows + r) * n_split + split;
                float *po = p.part_o + idx * HD + tig * 2;
#pragma unroll
                for (int dt = 0; dt < HD / 8; dt++) *(float2 *)(po + dt * 8) = make_float2(o[sl][dt][c2], o[sl][dt][c2 + 1]);
                if (tig == 0) {
                    float *ps = p.part_s + idx * PART_SCALARS;
                    ps[0] = m[x], ps[1] = l[x], ps[2] = w[x], ps[3] = d[x], ps[4] = xd[x], ps[5] = x0[x];
                }
            }
        } else {
            bf16 *out = (bf16 *)p.out;
#pragma unroll
            for (int x = 0; x < R; x++) {
                const int sl = x >> 1, c2 = 2 * (x & 1), r = ri[x];
                float L = l[x];
                attn_row_stats st;
                if (STATS) {
                    st = attn_finish_row(m[x], l[x], w[x], d[x], x0[x], xd[x], pos[x]);
                    L = st.L;
                }
                const float inv = 1.0f / L;
                float ss = 0;
#pragma unroll
                for (int dt = 0; dt < HD / 8; dt++) {
                    o[sl][dt][c2] *= inv;
                    o[sl][dt][c2 + 1] *= inv;
                    ss += o[sl][dt][c2] * o[sl][dt][c2] + o[sl][dt][c2 + 1] * o[sl][dt][c2 + 1];
                }
                if (STATS) ss = quad_sum(ss);
                if (r >= p.rows) continue;
                const int t = r / G, h = kvh * G + r % G;
                bf16 *dst = out + (((size_t)b * p.T + t) * p.H + h) * HD + tig * 2;
#pragma unroll
                for (int dt = 0; dt < HD / 8; dt++)
                    *(uint32_t *)(dst + dt * 8) = pack_bf16(o[sl][dt][c2], o[sl][dt][c2 + 1]);
                if (p.lse && tig == 0) p.lse[((size_t)b * p.H + h) * p.T + t] = (m[x] + log2f(L)) * LN2_F;
                if (STATS && tig == 0) {
                    float *rs = rowstat + (r - r0) * GF_STAT_COUNT;
                    rs[GF_STAT_DISTANCE] = st.dist;
                    rs[GF_STAT_ENTROPY] = st.ent;
                    rs[GF_STAT_OUT_RMS] = sqrtf(ss / HD);
                    rs[GF_STAT_DIST_NOSINK] = st.nosink;
                    rs[GF_STAT_SINK] = st.sink;
                }
            }
        }
    }
    if (STATS && !SPLIT) {
        if constexpr (C::WS) named_bar_sync(C::BAR_COMPUTE, C::NC);
        else __syncthreads();
        /* per head of the group: the block's rows of that head, summed in double
         * into its row of stat_parts (every column written, zeros included) */
        double *part = p.stat_parts + ((size_t)b * p.n_tiles + tile) * p.H * GF_STAT_COUNT;
        for (int idx = tid; idx < G * GF_STAT_COUNT; idx += C::NC) {
            const int gl = idx / GF_STAT_COUNT, st = idx % GF_STAT_COUNT;
            double sum = 0;
            for (int row = ((gl - r0 % G) % G + G) % G; row < BR && r0 + row < p.rows; row += G)
                sum += rowstat[row * GF_STAT_COUNT + st];
            part[(kvh * G + gl) * GF_STAT_COUNT + st] = sum;
        }
    }
}

/* ------------------------------------------------------------- launch */

template <int HD, class C, bool STATS, bool SPLIT> static void launch(gf_backend *be, const attn_fwd_params &p) {
    const size_t bytes = fwd_smem<HD, C>::bytes;
    /* the emulation runs any size; a GPU's launch would fail (Hopper: 227 KiB a block at most) */
    static_assert(!C::WG || fwd_smem<HD, C>::bytes <= 227 * 1024, "a Hopper shape's shared memory fits a block");
    const void *kern = (const void *)attn_fwd_mma_kernel<HD, C, STATS, SPLIT>;
    cuda_allow_smem(kern, bytes);
#ifndef GRAFT_CUDA_EMU
    /* min_blocks blocks of `bytes` each need the largest shared-memory carve-out */
    if (C::MINB > 1) cudaFuncSetAttribute(kern, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared);
#endif
    dim3 grid((unsigned)p.KV, (unsigned)p.B, (unsigned)(p.n_tiles * (SPLIT ? p.n_split : 1)));
    cuda_launch(grid, C::NT, bytes, cuda_stream(be), attn_fwd_mma_kernel<HD, C, STATS, SPLIT>, p);
}

template <int HD, class C> static void launch_hd(gf_backend *be, const attn_fwd_params &p) {
    const bool stats = p.stats != NULL, split = p.n_split > 1;
    if (split) stats ? launch<HD, C, true, true>(be, p) : launch<HD, C, false, true>(be, p);
    else stats ? launch<HD, C, true, false>(be, p) : launch<HD, C, false, false>(be, p);
}

template <class C> static void launch_cfg(gf_backend *be, const attn_fwd_params &p) {
    if (p.hd == 64) launch_hd<64, C>(be, p);
    else launch_hd<128, C>(be, p);
}

/* One block shape's rows per block, keys per tile, and launch (cuda_attention_cfg.h's lists). */
struct fwd_shape {
    int br, bc;
    void (*launch)(gf_backend *, const attn_fwd_params &);
};
/* The Hopper shapes (cuda_attention_fwd_wg.cu, ATTN_FWD_WG_CONFIG_LIST's order). */
extern const fwd_shape attn_fwd_wg_shapes[];

#endif
