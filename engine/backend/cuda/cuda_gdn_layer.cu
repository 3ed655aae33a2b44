/* The GDN layer's element-wise work on CUDA (be_gdn_prep, be_gdn_prep_backward,
 * be_gdn_gated_norm, be_gdn_gated_norm_backward): the optional short causal
 * conv with its carried tail, silu, per-head L2 norms, decay and write gates,
 * gated RMSNorm, and their gradients. Column layout of proj (engine/gdn/gdn.h):
 * [q | k | v | g | a | b] = [H dk | H dk | H dv | H dv | H | H].
 *
 * Memory-bound work, written to move each byte once at full width
 * (docs/cuda-gdn.md, "Layer element-wise ops", has the byte floors):
 * - a thread owns V consecutive channels (V = 8 bf16 or 4 fp32: one 16-byte
 *   load or store; V = 1 when rows or pointers are not aligned so) and walks a
 *   run of tokens, keeping the conv's last inputs (forward) or the next tokens'
 *   gradients (backward) in registers: no per-element division, proj read once;
 * - a (token, head) row of a q, k, v or gated-norm section is shared by a group
 *   of `lanes` lanes (16 for 128 values in bf16), so a warp takes 32 / lanes
 *   rows; its L2 / RMS norms are sums over the group (shuffles);
 * - the conv, silu and L2 norms run in one kernel (forward) and their gradients
 *   with the conv's in another (backward): qkv_pre is written once and not read
 *   back; the pre-conv gradient never goes through memory;
 * - parameter gradients are summed per thread over its tokens, then over the
 *   block's threads in a fixed order, then over blocks in a fixed order (no
 *   atomics): repeated runs give identical bits.
 * Element offsets are 64-bit (one wide multiply per row); counts are int. */
#include "backend/cuda/cuda_table.h"
#include "backend/cuda/cuda_gdn_host.cuh"
#include "backend/cuda/cuda_gdn_layer.cuh"

#include <limits.h>

#include <initializer_list>
#include <utility>

#define GDN_UNITS_X 64   /* threads of a block along channels (two warps) */
#define GDN_RUNS_Y 4     /* ... along token runs: 256 threads */
#define GDN_RUN_FWD 16   /* tokens a thread walks in the forward and the bias add */
/* ... in the backward: 32 with the conv (3 more recomputed past a run's end), 16
 * without (shorter blocks, a shorter tail: at B 4 x T 2048, 32-token runs made
 * 576 blocks for the 528 that fit at once) */
#define GDN_RUN_BWD(conv) ((conv) ? 32 : 16)
#define GDN_NORM_THREADS 256
#define GDN_NORM_BWD_BLOCKS 1024 /* most blocks of the gated-norm backward (its grid depends on NH only) */
#define GDN_NORM_BWD_MIN_ROWS 4   /* fewest rows a slot of it takes where NH allows */

struct GdnCols {
    int q, k, v, g, a, b, width, qkv;
};

static GdnCols gdn_cols(const gf_gdn_dims *d) {
    GdnCols c;
    int hk = d->H * d->dk, hv = d->H * d->dv;
    c.q = 0;
    c.k = hk;
    c.v = 2 * hk;
    c.g = 2 * hk + hv;
    c.a = 2 * hk + 2 * hv;
    c.b = c.a + d->H;
    c.width = c.b + d->H;
    c.qkv = 2 * hk + hv;
    return c;
}

/* What a prep kernel needs of the shape. */
struct PrepShape {
    int N, Tn, H, dk, dv;
    int shift; /* log2 of the lanes of one head row (gdn_lane_shift of max(dk, dv)) */
    GdnCols pc;
};

/* sigmoid in two MUFU operations (ex2.approx, rcp.approx: relative error ~2^-21; far out
 * 1 / (1 + inf) = 0 and 1 / (1 + 0) = 1), where expf and an IEEE division took ~20
 * instructions and a branch. Every element of q, k, v (prep) and of the output gate (gated
 * norm) takes one, forward and backward; sm_90 SASS of the bf16 kernels without the conv:
 * prep 592 -> 360 instructions, prep backward 1160 -> 912, gated norm 552 -> 336, its
 * backward 888 -> 680. On an H100 (session 28, three rounds beside the IEEE form): prep
 * backward 0.418 -> 0.388 ms at 16 x 2048 (with the conv 0.823 -> 0.678), gated norm
 * 0.112 -> 0.105 ms, its backward 0.208 -> 0.205. */
__device__ __forceinline__ float sigmoidf_(float x) { return rcp_approx(1.f + exp_approx(-x)); }
__device__ __forceinline__ float siluf_(float x) { return x * sigmoidf_(x); }
__device__ __forceinline__ float silu_grad_(float x) {
    float s = sigmoidf_(x);
    return s * (1.f + x * (1.f - s));
}
__device__ __forceinline__ float softplusf_(float x) { return x > 20.f ? x : log1pf(expf(x)); }

/* ------------------------------------------------------------------ reductions */

/* out[M] += sum_r part[r, M] in a fixed order: thread (x, y) of a 32 x 8 block
 * adds rows y, y + 8, ... of column 32 blockIdx.x + x; the 8 sums are added in
 * y order. */
#define GDN_COLSUM_Y 8
__global__ void gdn_colsum_kernel(float *__restrict__ out, const float *__restrict__ part, int R, int M) {
    float *red = (float *)gdn_smem();
    int x = threadIdx.x & 31, y = threadIdx.x >> 5, m = blockIdx.x * 32 + x;
    float t = 0;
    if (m < M)
        for (int r = y; r < R; r += GDN_COLSUM_Y) t += part[(size_t)r * M + m];
    red[y * 32 + x] = t;
    block_sync();
    if (y == 0 && m < M) {
        float s = 0;
        for (int i = 0; i < GDN_COLSUM_Y; i++) s += red[i * 32 + x];
        out[m] += s;
    }
}

/* out[M] (F32) += column sums of part[R, M] in a fixed order. */
static void colsum_add(gf_backend *be, float *out, const float *part, int R, int M, const char *op) {
    cudaStream_t st = cuda_stream(be);
    (void)st;
    GDN_LAUNCH(gdn_colsum_kernel, dim3((M + 31) / 32), dim3(32 * GDN_COLSUM_Y), 32 * GDN_COLSUM_Y * sizeof(float), st,
               out, part, R, M);
    CUDA_CHECK_LAUNCH(be, op);
}

/* ------------------------------------------------------------------ a thread's channels */

/* The channels of a prep thread: unit u (along x) is lane `lane` of section
 * `sec` (q heads, then k heads, then v heads); its values of a row are V-groups
 * j = (lane + lanes i) V, i < GDN_LANE_VECS(V), those with j < d. */
struct PrepUnit {
    bool valid;  /* a section exists (units past 3H only join the shuffles) */
    int kind, h; /* 0 q, 1 k, 2 v; head */
    int lane, lanes, d;
    int col; /* the section's first column in qkv_pre (and in proj) */
};

__device__ __forceinline__ PrepUnit prep_unit(const PrepShape &s, int u) {
    PrepUnit p;
    p.lanes = 1 << s.shift;
    p.lane = u & (p.lanes - 1);
    int sec = u >> s.shift;
    p.valid = sec < 3 * s.H;
    p.kind = sec < s.H ? 0 : sec < 2 * s.H ? 1 : 2;
    p.h = p.valid ? sec - p.kind * s.H : 0;
    p.d = p.kind == 2 ? s.dv : s.dk;
    p.col = p.kind == 0 ? p.h * s.dk : p.kind == 1 ? s.pc.k + p.h * s.dk : s.pc.v + p.h * s.dv;
    return p;
}
/* Offset in the row of V-group i, or -1 when it is not this thread's. */
template <int V> __device__ __forceinline__ int unit_j(const PrepUnit &p, int i) {
    int j = (p.lane + p.lanes * i) * V;
    return p.valid && j < p.d ? j : -1;
}

/* The block's place: tx along channels, ty along runs (1-D blocks of
 * GDN_UNITS_X x GDN_RUNS_Y threads; a warp lies in one ty). */
struct BlockPlace {
    int tx, ty, unit, run;
};
__device__ __forceinline__ BlockPlace block_place() {
    BlockPlace b;
    b.tx = threadIdx.x % GDN_UNITS_X;
    b.ty = threadIdx.x / GDN_UNITS_X;
    b.unit = blockIdx.y * GDN_UNITS_X + b.tx;
    b.run = blockIdx.x * GDN_RUNS_Y + b.ty;
    return b;
}

/* The block's conv taps in shared memory (raw ACT values, read per token: they
 * would take 16 registers a thread held for the run): unit tx's V-group i at
 * taps + (tx NV + i) K V, channel e's tap c at e K + c (w [qkv, K] holds the V
 * channels' taps as 4V consecutive values). The ty == 0 threads copy; every
 * thread of the block calls it (a barrier). */
template <typename T, int V>
__device__ __forceinline__ void stage_taps(T *taps, const T *__restrict__ w, const PrepUnit &pu, const BlockPlace &bp) {
    constexpr int NV = GDN_LANE_VECS(V);
    if (bp.ty == 0)
#pragma unroll
        for (int i = 0; i < NV; i++) {
            int j = unit_j<V>(pu, i);
            Packed<T, V * GDN_K> r;
            r.zero();
            if (j >= 0) r.load(w + (size_t)(pu.col + j) * GDN_K);
            r.store(taps + ((size_t)bp.tx * NV + i) * GDN_K * V);
        }
    block_sync();
}
template <typename T, int V> __device__ __forceinline__ const T *taps_of(const T *taps, int tx, int i) {
    return taps + ((size_t)tx * GDN_LANE_VECS(V) + i) * GDN_K * V;
}
/* Shared memory of a block's taps (16-byte multiple). */
template <typename T, int V> static size_t taps_bytes() {
    return ((size_t)GDN_UNITS_X * GDN_LANE_VECS(V) * GDN_K * V * sizeof(T) + 15) & ~(size_t)15;
}

static dim3 prep_grid(int N, int units, int run) {
    int per_block = run * GDN_RUNS_Y;
    return dim3((unsigned)((N + per_block - 1) / per_block), (unsigned)((units + GDN_UNITS_X - 1) / GDN_UNITS_X));
}

/* ------------------------------------------------------------------ prep forward */

/* proj[n, 0:qkv] += bqkv[0:qkv] (contract v1: the q|k|v bias goes into proj in
 * place, before the conv). A thread: V channels over GDN_RUN_FWD tokens. */
template <typename T, int V>
__global__ void gdn_qkv_bias_kernel(int N, GdnCols pc, T *__restrict__ proj, const T *__restrict__ bqkv) {
    BlockPlace bp = block_place();
    int ch = bp.unit * V, n0 = bp.run * GDN_RUN_FWD;
    if (ch >= pc.qkv || n0 >= N) return; /* no shuffles here */
    int n1 = n0 + GDN_RUN_FWD < N ? n0 + GDN_RUN_FWD : N;
    float bias[V], x[V];
    load_vec<T, V>(bias, bqkv + ch);
    for (int n = n0; n < n1; n++) {
        T *p = proj + (size_t)n * pc.width + ch;
        load_vec<T, V>(x, p);
#pragma unroll
        for (int e = 0; e < V; e++) x[e] += bias[e];
        store_vec<T, V>(p, x);
    }
}

/* The conv (or a copy) into qkv_pre, then q, k = l2norm(silu(.)), v = silu(.),
 * g and beta, for a run of GDN_RUN_FWD tokens. The conv:
 *   qkv_pre[n, ch] = sum_i w[ch, i] proj[t - 3 + i, ch]
 * with earlier calls' tokens from tail and zeros before the sequence start; the
 * thread keeps the last 3 inputs. silu and the norms read qkv_pre as stored
 * (rounded to ACT), as the backward does. kConv: compiled with the conv (the
 * host launches it exactly when w is set) or without it, its registers and
 * code gone (the method's default). */
template <typename T, int V, bool kConv>
__global__ void __launch_bounds__(GDN_UNITS_X * GDN_RUNS_Y, kConv ? 3 : 4)
    gdn_prep_kernel(PrepShape s, const T *__restrict__ proj, const T *__restrict__ w, const T *__restrict__ tail,
                    const T *__restrict__ a_log, const T *__restrict__ dt_bias, T *__restrict__ pre, T *__restrict__ q,
                    T *__restrict__ k, T *__restrict__ v, float *__restrict__ g, float *__restrict__ beta) {
    constexpr int NV = GDN_LANE_VECS(V);
    const GdnCols &pc = s.pc;
    BlockPlace bp = block_place();
    PrepUnit pu = prep_unit(s, bp.unit);
    T *taps = (T *)gdn_smem();
    if (kConv) stage_taps<T, V>(taps, w, pu, bp);
    int n0 = bp.run * GDN_RUN_FWD;
    if (n0 >= s.N) return; /* the same for the whole warp (one ty) */
    int n1 = n0 + GDN_RUN_FWD < s.N ? n0 + GDN_RUN_FWD : s.N;
    T *out = pu.kind == 0 ? q : pu.kind == 1 ? k : v;
    Packed<T, V> win[NV][GDN_K - 1]; /* the conv's inputs of tokens t-3, t-2, t-1 */
#pragma unroll
    for (int i = 0; i < NV; i++)
#pragma unroll
        for (int c = 0; c < GDN_K - 1; c++) win[i][c].zero();
    int b = n0 / s.Tn, t = n0 - b * s.Tn;
    for (int n = n0; n < n1; n++) {
        if (n + 1 < n1) { /* the next token's row into L1 while this one is computed (as the backward) */
#pragma unroll
            for (int i = 0; i < NV; i++) {
                int j = unit_j<V>(pu, i);
                if (j >= 0) gdn_prefetch_l1(proj + (size_t)(n + 1) * pc.width + pu.col + j);
            }
            if (pu.valid && pu.kind == 0 && pu.lane == 0) gdn_prefetch_l1(proj + (size_t)(n + 1) * pc.width + pc.a + pu.h);
        }
        float x[NV][V], ss = 0;
#pragma unroll
        for (int i = 0; i < NV; i++) {
            int j = unit_j<V>(pu, i), ch = pu.col + j;
            if (j < 0) continue;
            if (kConv && (n == n0 || t == 0)) /* (re)fill the inputs before t */
#pragma unroll
                for (int c = 0; c < GDN_K - 1; c++) {
                    int tau = t - (GDN_K - 1) + c;
                    if (tau >= 0)
                        win[i][c].load(proj + ((size_t)b * s.Tn + tau) * pc.width + ch);
                    else if (tail)
                        win[i][c].load(tail + ((size_t)b * (GDN_K - 1) + (GDN_K - 1 + tau)) * pc.qkv + ch);
                    else
                        win[i][c].zero();
                }
            Packed<T, V> in;
            Packed<T, V * GDN_K> wt;
            in.load(proj + (size_t)n * pc.width + ch);
            if (kConv) wt.load(taps_of<T, V>(taps, bp.tx, i));
#pragma unroll
            for (int e = 0; e < V; e++) {
                float y = in.get(e);
                if (kConv) {
                    float acc = 0;
#pragma unroll
                    for (int c = 0; c < GDN_K - 1; c++) acc += wt.get(e * GDN_K + c) * win[i][c].get(e);
                    y = act_round<T>(acc + wt.get(e * GDN_K + GDN_K - 1) * y);
                }
                x[i][e] = y;
            }
            if (kConv) {
#pragma unroll
                for (int c = 0; c < GDN_K - 2; c++) win[i][c] = win[i][c + 1];
                win[i][GDN_K - 2] = in;
            }
            store_vec<T, V>(pre + (size_t)n * pc.qkv + ch, x[i]);
#pragma unroll
            for (int e = 0; e < V; e++) {
                x[i][e] = siluf_(x[i][e]);
                ss += x[i][e] * x[i][e];
            }
        }
        float tot = group_sum(ss, pu.lanes); /* every lane, v sections too: one call site */
        float inv = pu.kind < 2 ? rsqrtf(tot + GDN_L2_EPS) : 1.f;
        size_t row = (size_t)n * s.H + pu.h;
#pragma unroll
        for (int i = 0; i < NV; i++) {
            int j = unit_j<V>(pu, i);
            if (j < 0) continue;
#pragma unroll
            for (int e = 0; e < V; e++) x[i][e] *= inv;
            store_vec<T, V>(out + row * pu.d + j, x[i]);
        }
        if (pu.valid && pu.kind == 0 && pu.lane == 0) {
            const T *pj = proj + (size_t)n * pc.width;
            g[row] = -expf(to_f(a_log[pu.h])) * softplusf_(to_f(pj[pc.a + pu.h]) + to_f(dt_bias[pu.h]));
            beta[row] = sigmoidf_(to_f(pj[pc.b + pu.h]));
        }
        if (++t == s.Tn) t = 0, b++;
    }
}

/* tail[b] <- the q|k|v projections of the last K-1 tokens (from this call and,
 * when T < K-1, from the old tail). One thread per (b, channel): reads all, then
 * writes. B x qkv threads: a few KB, left scalar. */
template <typename T>
__global__ void gdn_tail_kernel(int B, int Tn, GdnCols pc, const T *__restrict__ proj, T *__restrict__ tail) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= B * pc.qkv) return;
    int b = i / pc.qkv, ch = i - b * pc.qkv;
    T vals[GDN_K - 1];
    T *tb = tail + (size_t)b * (GDN_K - 1) * pc.qkv;
    for (int j = 0; j < GDN_K - 1; j++) {
        int tau = Tn - (GDN_K - 1) + j;
        vals[j] = tau >= 0 ? proj[((size_t)b * Tn + tau) * pc.width + ch] : tb[(size_t)(GDN_K - 1 + tau) * pc.qkv + ch];
    }
    for (int j = 0; j < GDN_K - 1; j++) tb[(size_t)j * pc.qkv + ch] = vals[j];
}

static bool dims_ok(gf_backend *be, const gf_gdn_dims *d, const char *op) {
    if (d->B <= 0 || d->T <= 0 || d->H <= 0 || d->dk <= 0 || d->dv <= 0 || d->dk > GDN_MAX_D || d->dv > GDN_MAX_D) {
        be_set_error(be, "%s: bad sizes (B %d, T %d, H %d, dk %d, dv %d; head dims up to %d)", op, d->B, d->T, d->H,
                     d->dk, d->dv, GDN_MAX_D);
        return false;
    }
    /* token, row and column counts are int in the kernels (offsets are 64-bit) */
    int64_t rows = (int64_t)d->B * d->T * d->H, width = 2 * (int64_t)d->H * (d->dk + d->dv) + 2 * d->H;
    if (rows > INT_MAX || width * GDN_K > INT_MAX) {
        be_set_error(be, "%s: %lld (token, head) rows of width %lld: over the kernels' int counts", op,
                     (long long)rows, (long long)width);
        return false;
    }
    if (!(d->norm_eps > 0)) {
        be_set_error(be, "%s: norm_eps must be positive", op);
        return false;
    }
    return true;
}

static bool all_act(gf_backend *be, const char *op, std::initializer_list<std::pair<gf_buf, const char *>> bufs,
                    bool required) {
    for (auto &b : bufs) {
        if (required && !gdn_present(be, b.first, op, b.second)) return false;
        if (!gdn_dtype_is(be, b.first, be->act, op, b.second)) return false;
    }
    return true;
}

/* The 16-byte path applies when every row and section starts 16 bytes in:
 * dk, dv and proj's width multiples of V (then so are the q|k|v|g offsets and
 * qkv), and every ACT buffer it touches 16-byte aligned. Otherwise V = 1 (e.g.
 * bf16 with H not a multiple of 4: width = 4 H d + 2 H). */
template <typename T>
static bool vec_path(const gf_gdn_dims *d, std::initializer_list<gf_buf> bufs) {
    constexpr int V = 16 / (int)sizeof(T);
    GdnCols pc = gdn_cols(d);
    if (d->dk % V || d->dv % V || pc.width % V) return false;
    for (const gf_buf &b : bufs)
        if (!gf_is_none(b) && !gdn_aligned16(b.ptr)) return false;
    return true;
}

static PrepShape prep_shape(const gf_gdn_dims *d, int V) {
    PrepShape s;
    s.N = d->B * d->T, s.Tn = d->T, s.H = d->H, s.dk = d->dk, s.dv = d->dv;
    s.shift = gdn_lane_shift(d->dk > d->dv ? d->dk : d->dv, V);
    s.pc = gdn_cols(d);
    return s;
}

template <typename T, int V>
static void prep_forward(gf_backend *be, const gf_gdn_dims *d, gf_buf qkv_pre, gf_buf q, gf_buf k, gf_buf v, gf_buf g,
                         gf_buf beta, gf_buf conv_tail, gf_buf proj, gf_buf bqkv, gf_buf conv_w, gf_buf a_log,
                         gf_buf dt_bias) {
    cudaStream_t st = cuda_stream(be);
    (void)st;
    PrepShape s = prep_shape(d, V);
    const GdnCols &pc = s.pc;
    if (!gf_is_none(bqkv)) {
        GDN_LAUNCH((gdn_qkv_bias_kernel<T, V>), prep_grid(s.N, pc.qkv / V, GDN_RUN_FWD), dim3(GDN_UNITS_X * GDN_RUNS_Y),
                   0, st, s.N, pc, (T *)proj.ptr, (const T *)bqkv.ptr);
        CUDA_CHECK_LAUNCH(be, "gdn_prep (qkv bias)");
    }
    const T *w = d->conv ? (const T *)conv_w.ptr : nullptr;
    size_t smem = w ? taps_bytes<T, V>() : 0;
    auto kern = w ? gdn_prep_kernel<T, V, true> : gdn_prep_kernel<T, V, false>; /* as the backward */
    GDN_LAUNCH(kern, prep_grid(s.N, 3 * d->H << s.shift, GDN_RUN_FWD),
               dim3(GDN_UNITS_X * GDN_RUNS_Y), smem, st, s, (const T *)proj.ptr, w, (const T *)conv_tail.ptr,
               (const T *)a_log.ptr, (const T *)dt_bias.ptr, (T *)qkv_pre.ptr, (T *)q.ptr, (T *)k.ptr, (T *)v.ptr,
               (float *)g.ptr, (float *)beta.ptr);
    CUDA_CHECK_LAUNCH(be, "gdn_prep (conv, gates)");
    if (d->conv && !gf_is_none(conv_tail)) { /* after the conv read the old tail */
        GDN_LAUNCH(gdn_tail_kernel<T>, dim3(cuda_blocks((size_t)d->B * pc.qkv, 256)), dim3(256), 0, st, d->B, d->T, pc,
                   (const T *)proj.ptr, (T *)conv_tail.ptr);
        CUDA_CHECK_LAUNCH(be, "gdn_prep (conv tail)");
    }
}

extern "C" void cuda_gdn_prep(gf_backend *be, gf_buf qkv_pre, gf_buf q, gf_buf k, gf_buf v, gf_buf g, gf_buf beta,
                              gf_buf conv_tail, gf_buf proj, gf_buf bqkv, gf_buf conv_w, gf_buf a_log,
                              gf_buf dt_bias, const gf_gdn_dims *d) {
    const char *op = "gdn_prep";
    if (!dims_ok(be, d, op) ||
        !all_act(be, op, {{qkv_pre, "qkv_pre"}, {q, "q"}, {k, "k"}, {v, "v"}, {proj, "proj"}, {a_log, "a_log"},
                          {dt_bias, "dt_bias"}}, true) ||
        !all_act(be, op, {{conv_tail, "conv_tail"}, {conv_w, "conv_w"}, {bqkv, "bqkv"}}, false) ||
        !gdn_present(be, g, op, "g") ||
        !gdn_present(be, beta, op, "beta") || !gdn_dtype_is(be, g, GF_F32, op, "g") ||
        !gdn_dtype_is(be, beta, GF_F32, op, "beta"))
        return;
    if (d->conv && !gdn_present(be, conv_w, op, "conv_w")) return;
    gf_buf cw = d->conv ? conv_w : gf_none();
#define GDN_PREP_ARGS be, d, qkv_pre, q, k, v, g, beta, conv_tail, proj, bqkv, conv_w, a_log, dt_bias
    if (be->act == GF_BF16) {
        if (vec_path<bf16>(d, {qkv_pre, q, k, v, conv_tail, proj, bqkv, cw}))
            prep_forward<bf16, 8>(GDN_PREP_ARGS);
        else
            prep_forward<bf16, 1>(GDN_PREP_ARGS);
    } else {
        if (vec_path<float>(d, {qkv_pre, q, k, v, conv_tail, proj, bqkv, cw}))
            prep_forward<float, 4>(GDN_PREP_ARGS);
        else
            prep_forward<float, 1>(GDN_PREP_ARGS);
    }
#undef GDN_PREP_ARGS
}

/* ------------------------------------------------------------------ prep backward */

/* Gradients of the gates, norms and conv for a run of GDN_RUN_BWD(kConv) tokens,
 * walked backwards. Per token the gradient at the conv's output (before silu
 * and the L2 norm), dc = inv (dx - x inv pj) silu'(pre) for q, k (pj = the
 * row's <x inv, dx>, a group sum) and dv silu'(pre) for v, stays in registers
 * with the next 3 tokens' (the conv reads proj[t] into qkv_pre[t .. t + 3]):
 *   dproj[t] = sum_i w[3 - i] dc[t + i],  dw[j] += sum_t proj[t] dc[t + 3 - j]
 * within the sequence (zero initial history: training). The 3 tokens past the
 * run are recomputed, not stored. Also the a, b columns of dproj, and sums over
 * the run, then over the block's runs (fixed order), one row per block of:
 *   part_w [gridDim.x, qkv K] conv weight, part_b [gridDim.x, qkv] q|k|v bias
 *   (of dproj as stored), part_h [2, gridDim.x, H]: dg g (A_log), du (dt_bias).
 * Shared memory: GDN_UNITS_X GDN_RUNS_Y V floats. */
template <typename T, int V, bool kConv>
__global__ void __launch_bounds__(GDN_UNITS_X * GDN_RUNS_Y, kConv ? 2 : 4)
    gdn_prep_bwd_kernel(PrepShape s, const T *__restrict__ pre, const T *__restrict__ proj, const T *__restrict__ w,
                        const T *__restrict__ a_log, const T *__restrict__ dt_bias, const T *__restrict__ dq,
                        const T *__restrict__ dk_, const T *__restrict__ dv_, const float *__restrict__ dg,
                        const float *__restrict__ dbeta, const float *__restrict__ g, const float *__restrict__ beta,
                        T *__restrict__ dproj, float *__restrict__ part_w, float *__restrict__ part_b,
                        float *__restrict__ part_h) {
    constexpr int NV = GDN_LANE_VECS(V), KM = GDN_K - 1;
    const GdnCols &pc = s.pc;
    /* kConv false: the conv's code and registers compile away. (kConv implies w;
     * testing w too keeps the conv kernel's code as it was: without it ptxas
     * spilled 64 bytes there, not 8.) */
    const bool conv = kConv && w;
    BlockPlace bp = block_place();
    PrepUnit pu = prep_unit(s, bp.unit);
    const T *dx_in = pu.kind == 0 ? dq : pu.kind == 1 ? dk_ : dv_;
    float dcn[NV][KM][V]; /* dc of tokens t+1, t+2, t+3 */
    float acc_w[NV][GDN_K][V], acc_b[NV][V], acc_al = 0, acc_dt = 0;
#pragma unroll
    for (int i = 0; i < NV; i++) {
#pragma unroll
        for (int e = 0; e < V; e++) {
            acc_b[i][e] = 0;
#pragma unroll
            for (int c = 0; c < GDN_K; c++) acc_w[i][c][e] = 0;
#pragma unroll
            for (int c = 0; c < KM; c++) dcn[i][c][e] = 0;
        }
    }
    /* shared memory: the block sums' GDN_UNITS_X GDN_RUNS_Y max(V, 2) floats, then the taps */
    float *red = (float *)gdn_smem();
    T *taps = (T *)(gdn_smem() + (size_t)GDN_UNITS_X * GDN_RUNS_Y * (V > 2 ? V : 2) * sizeof(float));
    if (conv) stage_taps<T, V>(taps, w, pu, bp);
    constexpr int run = GDN_RUN_BWD(kConv);
    int n0 = bp.run * run, n1 = n0 + run < s.N ? n0 + run : s.N, n_hi = n1;
    if (conv && n0 < n1) { /* the next 3 tokens of the same sequence */
        int seq_end = ((n1 - 1) / s.Tn + 1) * s.Tn;
        n_hi = n1 + KM < seq_end ? n1 + KM : seq_end;
    }
    int t = n_hi > n0 ? (n_hi - 1) % s.Tn : 0; /* whole warps share the run: the loop is warp-uniform */
    /* token n's rows this lane reads (j: its column in the head) */
    auto pre_at = [&](int n, int j) { return pre + (size_t)n * pc.qkv + pu.col + j; };
    auto dx_at = [&](int n, int j) { return dx_in + ((size_t)n * s.H + pu.h) * pu.d + j; };
    auto xp_at = [&](int n, int j) { return proj + (size_t)n * pc.width + pu.col + j; };
    for (int n = n_hi - 1; n >= n0; n--) {
        /* the next token's rows into L1 while this one is computed: the loop
         * waited one memory latency a token (31 % of its bytes' floor at B 16
         * x T 2048); then every load of this token first, held as raw bits
         * with sigmoid(pre) in fp32 through the two group sums */
        if (n > n0) {
            const int m = n - 1;
#pragma unroll
            for (int i = 0; i < NV; i++) {
                int j = unit_j<V>(pu, i);
                if (j < 0) continue;
                gdn_prefetch_l1(pre_at(m, j));
                gdn_prefetch_l1(dx_at(m, j));
                if (conv && m < n1) gdn_prefetch_l1(xp_at(m, j));
            }
            if (m < n1 && pu.valid && pu.kind == 0 && pu.lane == 0) {
                size_t row = (size_t)m * s.H + pu.h;
                gdn_prefetch_l1(proj + (size_t)m * pc.width + pc.a + pu.h);
                gdn_prefetch_l1(dg + row), gdn_prefetch_l1(dbeta + row), gdn_prefetch_l1(beta + row),
                    gdn_prefetch_l1(g + row);
            }
        }
        bool mine = n < n1; /* else one of the 3 recomputed tokens past the run */
        Packed<T, V> pre_r[NV], dx_r[NV], xp_r[NV];
        float sig[NV][V], ss = 0, pj = 0;
#pragma unroll
        for (int i = 0; i < NV; i++) {
            int j = unit_j<V>(pu, i);
            xp_r[i].zero();
            if (j < 0) continue;
            pre_r[i].load(pre_at(n, j));
            dx_r[i].load(dx_at(n, j));
            if (conv && mine) xp_r[i].load(xp_at(n, j));
#pragma unroll
            for (int e = 0; e < V; e++) {
                float p = pre_r[i].get(e), x;
                sig[i][e] = sigmoidf_(p);
                x = p * sig[i][e];
                ss += x * x;
            }
        }
        float inv = rsqrtf(group_sum(ss, pu.lanes) + GDN_L2_EPS); /* every lane: one call site */
#pragma unroll
        for (int i = 0; i < NV; i++)
            if (unit_j<V>(pu, i) >= 0)
#pragma unroll
                for (int e = 0; e < V; e++) pj += pre_r[i].get(e) * sig[i][e] * inv * dx_r[i].get(e);
        pj = group_sum(pj, pu.lanes);
#pragma unroll
        for (int i = 0; i < NV; i++) {
            int j = unit_j<V>(pu, i), ch = pu.col + j;
            if (j < 0) continue;
            float dc[V], out[V];
#pragma unroll
            for (int e = 0; e < V; e++) {
                float p = pre_r[i].get(e), sg = sig[i][e], x = p * sg, dx = dx_r[i].get(e);
                float grad = sg * (1.f + p * (1.f - sg)); /* silu'(p) */
                dc[e] = pu.kind < 2 ? inv * (dx - x * inv * pj) * grad : dx * grad;
            }
            if (mine) {
                Packed<T, V * GDN_K> wt;
                if (conv) wt.load(taps_of<T, V>(taps, bp.tx, i));
#pragma unroll
                for (int e = 0; e < V; e++) {
                    float o = dc[e];
                    if (conv) {
                        float xp = xp_r[i].get(e);
                        o = 0;
                        o += wt.get(e * GDN_K + GDN_K - 1) * dc[e];
#pragma unroll
                        for (int c = 0; c < KM; c++) o += wt.get(e * GDN_K + GDN_K - 2 - c) * dcn[i][c][e];
                        acc_w[i][GDN_K - 1][e] += dc[e] * xp;
#pragma unroll
                        for (int c = 0; c < KM; c++) acc_w[i][GDN_K - 2 - c][e] += dcn[i][c][e] * xp;
                    }
                    out[e] = o;
                    acc_b[i][e] += act_round<T>(o);
                }
                store_vec<T, V>(dproj + (size_t)n * pc.width + ch, out);
            }
            if (conv) {
#pragma unroll
                for (int e = 0; e < V; e++) {
#pragma unroll
                    for (int c = KM - 1; c > 0; c--) dcn[i][c][e] = dcn[i][c - 1][e];
                    dcn[i][0][e] = dc[e];
                }
            }
        }
        if (mine && pu.valid && pu.kind == 0 && pu.lane == 0) {
            int h = pu.h;
            size_t row = (size_t)n * s.H + h;
            const T *pr = proj + (size_t)n * pc.width;
            float u = to_f(pr[pc.a + h]) + to_f(dt_bias[h]);
            float du = dg[row] * -expf(to_f(a_log[h])) * sigmoidf_(u);
            T *dp = dproj + (size_t)n * pc.width;
            dp[pc.a + h] = from_f<T>(du);
            dp[pc.b + h] = from_f<T>(dbeta[row] * beta[row] * (1.f - beta[row]));
            acc_al += dg[row] * g[row];
            acc_dt += du;
        }
        if (--t < 0) { /* into the previous sequence: nothing of this one follows its last token */
            t = s.Tn - 1;
#pragma unroll
            for (int i = 0; i < NV; i++)
#pragma unroll
                for (int c = 0; c < KM; c++)
#pragma unroll
                    for (int e = 0; e < V; e++) dcn[i][c][e] = 0;
        }
    }
    /* block sums in ty order; the ty == 0 threads write the block's row */
    size_t pr = blockIdx.x;
#pragma unroll
    for (int i = 0; i < NV; i++) {
        int j = unit_j<V>(pu, i), ch = pu.col + j;
        bool store = bp.ty == 0 && j >= 0;
        if (part_w)
#pragma unroll
            for (int c = 0; c < GDN_K; c++) {
                block_sum_over_y<V>(acc_w[i][c], red, bp.tx, bp.ty, GDN_UNITS_X, GDN_RUNS_Y);
                if (store)
#pragma unroll
                    for (int e = 0; e < V; e++) part_w[(pr * pc.qkv + ch + e) * GDN_K + c] = acc_w[i][c][e];
            }
        if (part_b) {
            block_sum_over_y<V>(acc_b[i], red, bp.tx, bp.ty, GDN_UNITS_X, GDN_RUNS_Y);
            if (store) store_vec<float, V>(part_b + pr * pc.qkv + ch, acc_b[i]);
        }
    }
    float hv[2] = {acc_al, acc_dt};
    block_sum_over_y<2>(hv, red, bp.tx, bp.ty, GDN_UNITS_X, GDN_RUNS_Y);
    if (bp.ty == 0 && pu.valid && pu.kind == 0 && pu.lane == 0) {
        part_h[pr * s.H + pu.h] = hv[0];
        part_h[((size_t)gridDim.x + pr) * s.H + pu.h] = hv[1];
    }
}

template <typename T, int V>
static void prep_backward(gf_backend *be, const gf_gdn_dims *d, gf_buf dproj, gf_buf dbqkv, gf_buf dconv_w,
                          gf_buf da_log, gf_buf ddt_bias, gf_buf dq, gf_buf dk, gf_buf dv, gf_buf dg, gf_buf dbeta,
                          gf_buf proj, gf_buf qkv_pre, gf_buf g, gf_buf beta, gf_buf conv_w, gf_buf a_log,
                          gf_buf dt_bias) {
    const char *op = "gdn_prep_backward";
    cudaStream_t st = cuda_stream(be);
    (void)st;
    PrepShape s = prep_shape(d, V);
    const GdnCols &pc = s.pc;
    dim3 grid = prep_grid(s.N, 3 * d->H << s.shift, GDN_RUN_BWD(d->conv));
    size_t R = grid.x;
    bool conv = d->conv, want_w = conv && !gf_is_none(dconv_w), want_b = !gf_is_none(dbqkv);
    void *pw = nullptr, *pb = nullptr, *ph = nullptr;
    bool ok = (!want_w || gdn_scratch(be, &pw, R * pc.qkv * GDN_K * sizeof(float), op)) &&
              (!want_b || gdn_scratch(be, &pb, R * pc.qkv * sizeof(float), op)) &&
              gdn_scratch(be, &ph, 2 * R * d->H * sizeof(float), op);
    if (ok) {
        /* without the conv (the method's default) the kernel holds no taps, conv
         * history or dw sums: 4 blocks a multiprocessor instead of 2 */
        auto kern = conv ? gdn_prep_bwd_kernel<T, V, true> : gdn_prep_bwd_kernel<T, V, false>;
        size_t smem = (size_t)GDN_UNITS_X * GDN_RUNS_Y * (V > 2 ? V : 2) * sizeof(float) +
                      (conv ? taps_bytes<T, V>() : 0);
        GDN_LAUNCH(kern, grid, dim3(GDN_UNITS_X * GDN_RUNS_Y), smem, st, s,
                   (const T *)qkv_pre.ptr, (const T *)proj.ptr, conv ? (const T *)conv_w.ptr : (const T *)nullptr,
                   (const T *)a_log.ptr, (const T *)dt_bias.ptr, (const T *)dq.ptr, (const T *)dk.ptr,
                   (const T *)dv.ptr, (const float *)dg.ptr, (const float *)dbeta.ptr, (const float *)g.ptr,
                   (const float *)beta.ptr, (T *)dproj.ptr, (float *)pw, (float *)pb, (float *)ph);
        CUDA_CHECK_LAUNCH(be, "gdn_prep_backward (gates, conv)");
        if (want_w) colsum_add(be, (float *)dconv_w.ptr, (const float *)pw, (int)R, pc.qkv * GDN_K, op);
        if (want_b) colsum_add(be, (float *)dbqkv.ptr, (const float *)pb, (int)R, pc.qkv, op);
        if (!gf_is_none(da_log)) colsum_add(be, (float *)da_log.ptr, (const float *)ph, (int)R, d->H, op);
        if (!gf_is_none(ddt_bias))
            colsum_add(be, (float *)ddt_bias.ptr, (const float *)ph + R * d->H, (int)R, d->H, op);
    }
    gdn_scratch_free(be, pw);
    gdn_scratch_free(be, pb);
    gdn_scratch_free(be, ph);
}

extern "C" void cuda_gdn_prep_backward(gf_backend *be, gf_buf dproj, gf_buf dbqkv, gf_buf dconv_w, gf_buf da_log,
                                       gf_buf ddt_bias,
                                       gf_buf dq, gf_buf dk, gf_buf dv, gf_buf dg, gf_buf dbeta, gf_buf proj,
                                       gf_buf qkv_pre, gf_buf q, gf_buf k, gf_buf g, gf_buf beta, gf_buf conv_w,
                                       gf_buf a_log, gf_buf dt_bias, const gf_gdn_dims *d) {
    const char *op = "gdn_prep_backward";
    (void)q, (void)k; /* the normalized q, k are recomputed from qkv_pre in fp32 */
    if (!dims_ok(be, d, op) ||
        !all_act(be, op, {{dproj, "dproj"}, {dq, "dq"}, {dk, "dk"}, {dv, "dv"}, {proj, "proj"}, {qkv_pre, "qkv_pre"},
                          {a_log, "a_log"}, {dt_bias, "dt_bias"}}, true) ||
        !all_act(be, op, {{conv_w, "conv_w"}}, false))
        return;
    gf_buf f32s[] = {dg, dbeta, g, beta};
    const char *fn[] = {"dg", "dbeta", "g", "beta"};
    for (int i = 0; i < 4; i++)
        if (!gdn_present(be, f32s[i], op, fn[i]) || !gdn_dtype_is(be, f32s[i], GF_F32, op, fn[i])) return;
    if (!gdn_dtype_is(be, dconv_w, GF_F32, op, "dconv_w") || !gdn_dtype_is(be, dbqkv, GF_F32, op, "dbqkv") ||
        !gdn_dtype_is(be, da_log, GF_F32, op, "da_log") || !gdn_dtype_is(be, ddt_bias, GF_F32, op, "ddt_bias"))
        return;
    if (d->conv && !gdn_present(be, conv_w, op, "conv_w")) return;
    gf_buf cw = d->conv ? conv_w : gf_none();
#define GDN_PREP_BWD_ARGS \
    be, d, dproj, dbqkv, dconv_w, da_log, ddt_bias, dq, dk, dv, dg, dbeta, proj, qkv_pre, g, beta, conv_w, a_log, \
        dt_bias
    if (be->act == GF_BF16) {
        if (vec_path<bf16>(d, {dproj, dq, dk, dv, proj, qkv_pre, cw}))
            prep_backward<bf16, 8>(GDN_PREP_BWD_ARGS);
        else
            prep_backward<bf16, 1>(GDN_PREP_BWD_ARGS);
    } else {
        if (vec_path<float>(d, {dproj, dq, dk, dv, proj, qkv_pre, cw}))
            prep_backward<float, 4>(GDN_PREP_BWD_ARGS);
        else
            prep_backward<float, 1>(GDN_PREP_BWD_ARGS);
    }
#undef GDN_PREP_BWD_ARGS
}

/* ------------------------------------------------------------------ gated norm */

/* A gated-norm thread: lane `lane` of a group of `lanes` that owns row `row`
 * (a (token, head) pair); V-groups j = (lane + lanes i) V < dv. Slots (row
 * groups) are numbered across the grid; a warp holds 32 / lanes of them. */
struct NormUnit {
    int lane, lanes, slot, slots_per_block;
};
__device__ __forceinline__ NormUnit norm_unit(int shift) {
    NormUnit u;
    u.lanes = 1 << shift;
    u.lane = threadIdx.x & (u.lanes - 1);
    u.slots_per_block = blockDim.x >> shift;
    u.slot = blockIdx.x * u.slots_per_block + (threadIdx.x >> shift);
    return u;
}
template <int V> __device__ __forceinline__ int norm_j(const NormUnit &u, int i, int dv) {
    int j = (u.lane + u.lanes * i) * V;
    return j < dv ? j : -1;
}

/* z = o / sqrt(mean(o^2) + eps) * w * silu(g columns), rstd [NH]. A slot per row. */
template <typename T, int V>
__global__ void gdn_gated_norm_kernel(int NH, int H, int dv, int shift, float eps, GdnCols pc, const T *__restrict__ o,
                                      const T *__restrict__ proj, const T *__restrict__ w, T *__restrict__ z,
                                      float *__restrict__ rstd) {
    constexpr int NV = GDN_LANE_VECS(V);
    NormUnit u = norm_unit(shift);
    int row = u.slot;
    bool valid = row < NH; /* rows past the end still join the shuffles */
    int n = row / H, h = row - n * H;
    const T *orow = o + (size_t)row * dv, *gp = proj + (size_t)n * pc.width + pc.g + h * dv;
    float x[NV][V], gs[NV][V], ss = 0; /* o; silu(g) w (its loads issued with o's) */
#pragma unroll
    for (int i = 0; i < NV; i++) {
        int j = norm_j<V>(u, i, dv);
        if (!valid || j < 0) continue;
        float wj[V];
        load_vec<T, V>(x[i], orow + j);
        load_vec<T, V>(gs[i], gp + j);
        load_vec<T, V>(wj, w + j);
#pragma unroll
        for (int e = 0; e < V; e++) {
            ss += x[i][e] * x[i][e];
            gs[i][e] = wj[e] * siluf_(gs[i][e]);
        }
    }
    float r = rsqrtf(group_sum(ss, u.lanes) / (float)dv + eps);
    if (!valid) return; /* after the warp's last shuffle */
    if (u.lane == 0 && rstd) rstd[row] = r;
#pragma unroll
    for (int i = 0; i < NV; i++) {
        int j = norm_j<V>(u, i, dv);
        if (j < 0) continue;
        float y[V];
#pragma unroll
        for (int e = 0; e < V; e++) y[e] = x[i][e] * r * gs[i][e];
        store_vec<T, V>(z + (size_t)row * dv + j, y);
    }
}

template <typename T, int V>
static void gated_norm_launch(gf_backend *be, const gf_gdn_dims *d, gf_buf z, gf_buf rstd, gf_buf o, gf_buf proj,
                              gf_buf w_norm) {
    cudaStream_t st = cuda_stream(be);
    (void)st;
    int NH = d->B * d->T * d->H, shift = gdn_lane_shift(d->dv, V);
    size_t slots_per_block = GDN_NORM_THREADS >> shift;
    GDN_LAUNCH((gdn_gated_norm_kernel<T, V>), dim3(cuda_blocks((size_t)NH, (unsigned)slots_per_block)),
               dim3(GDN_NORM_THREADS), 0, st, NH, d->H, d->dv, shift, d->norm_eps, gdn_cols(d), (const T *)o.ptr,
               (const T *)proj.ptr, (const T *)w_norm.ptr, (T *)z.ptr, (float *)rstd.ptr);
}

extern "C" void cuda_gdn_gated_norm(gf_backend *be, gf_buf z, gf_buf rstd, gf_buf o, gf_buf proj, gf_buf w_norm,
                                    const gf_gdn_dims *d) {
    const char *op = "gdn_gated_norm";
    if (!dims_ok(be, d, op) || !all_act(be, op, {{z, "z"}, {o, "o"}, {proj, "proj"}, {w_norm, "w_norm"}}, true) ||
        !gdn_dtype_is(be, rstd, GF_F32, op, "rstd"))
        return;
    if (be->act == GF_BF16) {
        if (vec_path<bf16>(d, {z, o, proj, w_norm}))
            gated_norm_launch<bf16, 8>(be, d, z, rstd, o, proj, w_norm);
        else
            gated_norm_launch<bf16, 1>(be, d, z, rstd, o, proj, w_norm);
    } else {
        if (vec_path<float>(d, {z, o, proj, w_norm}))
            gated_norm_launch<float, 4>(be, d, z, rstd, o, proj, w_norm);
        else
            gated_norm_launch<float, 1>(be, d, z, rstd, o, proj, w_norm);
    }
    CUDA_CHECK_LAUNCH(be, op);
}

/* Slots stride over the (token, head) rows (warp-uniform trip counts): d_o (may
 * alias dz: each value is read before the same thread writes it), the g columns
 * of dproj, and the block's sums of dw_norm over its slots in slot order:
 * part [gridDim.x, dv]. Shared memory: slots_per_block dv floats. */
template <typename T, int V>
__global__ void gdn_gated_norm_bwd_kernel(int NH, int H, int dv, int shift, GdnCols pc, const T *dz,
                                          const T *__restrict__ o, const float *__restrict__ rstd,
                                          const T *__restrict__ proj, const T *__restrict__ w, T *d_o,
                                          T *__restrict__ dproj, float *__restrict__ part) {
    constexpr int NV = GDN_LANE_VECS(V);
    NormUnit u = norm_unit(shift);
    int nslots = gridDim.x * u.slots_per_block, warp_slots = 32 >> shift;
    int first = u.slot - (u.slot & (warp_slots - 1)); /* the warp's first slot: its trip count */
    float wj[NV][V], dwn[NV][V];
#pragma unroll
    for (int i = 0; i < NV; i++) {
        int j = norm_j<V>(u, i, dv);
#pragma unroll
        for (int e = 0; e < V; e++) dwn[i][e] = 0;
        if (j >= 0) load_vec<T, V>(wj[i], w + j);
    }
    for (int base = first; base < NH; base += nslots) {
        int row = base + (u.slot - first);
        bool valid = row < NH;
        int n = row / H, h = row - n * H;
        size_t gcol = (size_t)n * pc.width + pc.g + h * dv;
        float r = valid ? rstd[row] : 0.f, m[NV][V], x[NV][V], mo = 0;
#pragma unroll
        for (int i = 0; i < NV; i++) {
            int j = norm_j<V>(u, i, dv);
            if (!valid || j < 0) continue;
            float dzj[V], gj[V], dgo[V];
            load_vec<T, V>(dzj, dz + (size_t)row * dv + j);
            load_vec<T, V>(x[i], o + (size_t)row * dv + j);
            load_vec<T, V>(gj, proj + gcol + j);
#pragma unroll
            for (int e = 0; e < V; e++) {
                float sg = siluf_(gj[e]), nj = x[i][e] * r;
                m[i][e] = dzj[e] * wj[i][e] * sg;
                dwn[i][e] += dzj[e] * nj * sg;
                dgo[e] = dzj[e] * nj * wj[i][e] * silu_grad_(gj[e]);
                mo += m[i][e] * x[i][e];
            }
            store_vec<T, V>(dproj + gcol + j, dgo);
        }
        float k3 = r * r * r * group_sum(mo, u.lanes) / (float)dv;
        if (!valid) continue;
#pragma unroll
        for (int i = 0; i < NV; i++) {
            int j = norm_j<V>(u, i, dv);
            if (j < 0) continue;
            float y[V];
#pragma unroll
            for (int e = 0; e < V; e++) y[e] = r * m[i][e] - k3 * x[i][e];
            store_vec<T, V>(d_o + (size_t)row * dv + j, y);
        }
    }
    /* the block's slots in order: red [slots_per_block, dv] */
    float *red = (float *)gdn_smem();
    int ls = threadIdx.x >> shift;
#pragma unroll
    for (int i = 0; i < NV; i++) {
        int j = norm_j<V>(u, i, dv);
        if (j >= 0)
#pragma unroll
            for (int e = 0; e < V; e++) red[(size_t)ls * dv + j + e] = dwn[i][e];
    }
    block_sync();
    for (int j = threadIdx.x; j < dv; j += blockDim.x) {
        float t = 0;
        for (int sl = 0; sl < u.slots_per_block; sl++) t += red[(size_t)sl * dv + j];
        part[(size_t)blockIdx.x * dv + j] = t;
    }
}

template <typename T, int V>
static void gated_norm_bwd_launch(gf_backend *be, const gf_gdn_dims *d, gf_buf d_o, gf_buf dproj, gf_buf dw_norm,
                                  gf_buf dz, gf_buf o, gf_buf rstd, gf_buf proj, gf_buf w_norm, const char *op) {
    cudaStream_t st = cuda_stream(be);
    (void)st;
    int NH = d->B * d->T * d->H, shift = gdn_lane_shift(d->dv, V);
    int slots_per_block = GDN_NORM_THREADS >> shift;
    /* at least GDN_NORM_BWD_MIN_ROWS rows a slot (w and the partial sums amortized),
     * at most GDN_NORM_BWD_BLOCKS blocks (then more rows a slot) */
    int nb = (NH + slots_per_block * GDN_NORM_BWD_MIN_ROWS - 1) / (slots_per_block * GDN_NORM_BWD_MIN_ROWS);
    if (nb > GDN_NORM_BWD_BLOCKS) nb = GDN_NORM_BWD_BLOCKS;
    void *part = nullptr;
    if (!gdn_scratch(be, &part, (size_t)nb * d->dv * sizeof(float), op)) return;
    GDN_LAUNCH((gdn_gated_norm_bwd_kernel<T, V>), dim3(nb), dim3(GDN_NORM_THREADS),
               (size_t)slots_per_block * d->dv * sizeof(float), st, NH, d->H, d->dv, shift, gdn_cols(d),
               (const T *)dz.ptr, (const T *)o.ptr, (const float *)rstd.ptr, (const T *)proj.ptr,
               (const T *)w_norm.ptr, (T *)d_o.ptr, (T *)dproj.ptr, (float *)part);
    CUDA_CHECK_LAUNCH(be, op);
    if (!gf_is_none(dw_norm)) colsum_add(be, (float *)dw_norm.ptr, (const float *)part, nb, d->dv, op);
    gdn_scratch_free(be, part);
}

extern "C" void cuda_gdn_gated_norm_backward(gf_backend *be, gf_buf d_o, gf_buf dproj, gf_buf dw_norm, gf_buf dz,
                                             gf_buf o, gf_buf rstd, gf_buf proj, gf_buf w_norm, const gf_gdn_dims *d) {
    const char *op = "gdn_gated_norm_backward";
    if (!dims_ok(be, d, op) ||
        !all_act(be, op, {{d_o, "d_o"}, {dproj, "dproj"}, {dz, "dz"}, {o, "o"}, {proj, "proj"}, {w_norm, "w_norm"}},
                 true) ||
        !gdn_present(be, rstd, op, "rstd") || !gdn_dtype_is(be, rstd, GF_F32, op, "rstd") ||
        !gdn_dtype_is(be, dw_norm, GF_F32, op, "dw_norm"))
        return;
#define GDN_NORM_BWD_ARGS be, d, d_o, dproj, dw_norm, dz, o, rstd, proj, w_norm, op
    if (be->act == GF_BF16) {
        if (vec_path<bf16>(d, {d_o, dproj, dz, o, proj, w_norm}))
            gated_norm_bwd_launch<bf16, 8>(GDN_NORM_BWD_ARGS);
        else
            gated_norm_bwd_launch<bf16, 1>(GDN_NORM_BWD_ARGS);
    } else {
        if (vec_path<float>(d, {d_o, dproj, dz, o, proj, w_norm}))
            gated_norm_bwd_launch<float, 4>(GDN_NORM_BWD_ARGS);
        else
            gated_norm_bwd_launch<float, 1>(GDN_NORM_BWD_ARGS);
    }
#undef GDN_NORM_BWD_ARGS
}
