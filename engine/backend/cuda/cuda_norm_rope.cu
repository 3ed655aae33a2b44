/* RMSNorm (+ backward) and RoPE. RMSNorm: one warp per row, the row read
 * twice (the second time from cache), 16-byte packs when n and the pointers
 * allow. RoPE: one thread per rotated pair, cos/sin from the host's table. */
#include <type_traits>

#include "backend/cuda/cuda_ops.cuh"

#define ROWS_PER_BLOCK 8 /* warps of 32 */

/* ------------------------------------------------------------- RMSNorm */

/* The 16 bytes of a pack as W floats. */
template <int W, typename T> __device__ __forceinline__ void unpack16(float (&f)[W], const uint4 &u) {
    static_assert(W * sizeof(T) == 16, "a 16-byte pack");
    const T *t = (const T *)&u;
#pragma unroll
    for (int i = 0; i < W; i++) f[i] = to_f(t[i]);
}

/* The two passes over a row shared by both kernels: the sum of squares of the
 * packs at c0, c0 + step, ..., then y = x r w over the same packs. */
template <int W, typename T> __device__ __forceinline__ float row_sumsq(const T *xr, int n, int c0, int step) {
    float ss = 0;
    for (int c = c0; c < n; c += step) {
        float f[W];
        ld_pack<W>(f, xr + c);
#pragma unroll
        for (int i = 0; i < W; i++) ss += f[i] * f[i];
    }
    return ss;
}
template <int W, typename T>
__device__ __forceinline__ void row_scale(T *yr, const T *xr, const T *w, float r, int n, int c0, int step) {
    for (int c = c0; c < n; c += step) {
        float f[W], g[W];
        ld_pack<W>(f, xr + c);
        ld_pack<W>(g, w + c);
#pragma unroll
        for (int i = 0; i < W; i++) f[i] = f[i] * r * g[i];
        st_pack<W>(yr + c, f);
    }
}

/* y[rows, n] = x r w, r = 1/sqrt(mean(x^2) + eps); y may alias x (each element
 * is read and written by the same lane). rstd[rows] optional. */
template <int W, typename T>
__global__ void rmsnorm_kernel(T *y, float *rstd, const T *x, const T *w, int rows, int n, float eps) {
    const int row = blockIdx.x * ROWS_PER_BLOCK + (threadIdx.x >> 5), lane = threadIdx.x & 31;
    if (row >= rows) return;
    const T *xr = x + (size_t)row * n;
    const float r = 1.0f / sqrtf(warp_sum(row_sumsq<W>(xr, n, lane * W, 32 * W)) / (float)n + eps);
    if (rstd && lane == 0) rstd[row] = r;
    row_scale<W>(y + (size_t)row * n, xr, w, r, n, lane * W, 32 * W);
}

/* The same for rows of at most P packs a lane (n <= 32 W P, n a multiple of W, 16-byte packs):
 * the row's packs are loaded once, all before any is used, and kept as loaded for y, where
 * rmsnorm_kernel's second pass reads the row again a pack after each store (y may alias x, so
 * the compiler may not move the next load above it). The same arithmetic in the same order. */
template <int W, int P, typename T>
__global__ void rmsnorm_packs_kernel(T *y, float *rstd, const T *x, const T *w, int rows, int n, float eps) {
    const int row = blockIdx.x * ROWS_PER_BLOCK + (threadIdx.x >> 5), lane = threadIdx.x & 31;
    if (row >= rows) return;
    const size_t off = (size_t)row * n;
    uint4 rx[P] = {};
#pragma unroll
    for (int p = 0; p < P; p++) {
        const int c = (p * 32 + lane) * W;
        if (c < n) rx[p] = *(const uint4 *)(x + off + c);
    }
    float ss = 0;
#pragma unroll
    for (int p = 0; p < P; p++) {
        const int c = (p * 32 + lane) * W;
        if (c < n) {
            float f[W];
            unpack16<W, T>(f, rx[p]);
#pragma unroll
            for (int i = 0; i < W; i++) ss += f[i] * f[i];
        }
    }
    const float r = 1.0f / sqrtf(warp_sum(ss) / (float)n + eps);
    if (rstd && lane == 0) rstd[row] = r;
#pragma unroll
    for (int p = 0; p < P; p++) {
        const int c = (p * 32 + lane) * W;
        if (c < n) {
            float f[W], g[W];
            unpack16<W, T>(f, rx[p]);
            ld_pack<W>(g, w + c);
#pragma unroll
            for (int i = 0; i < W; i++) f[i] = f[i] * r * g[i];
            st_pack<W>(y + off + c, f);
        }
    }
}

/* The same with a block of NORM_ROW_THREADS per row, for calls of few rows
 * (a decode step: one row per sequence), where a warp per row walks its row
 * one dependent load after another and the GPU holds a handful of warps. */
#define NORM_ROW_THREADS 256
template <int W, typename T>
__global__ void __launch_bounds__(NORM_ROW_THREADS) rmsnorm_row_kernel(T *y, float *rstd, const T *x, const T *w, int n, float eps) {
    __shared__ float part[NORM_ROW_THREADS / 32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const T *xr = x + (size_t)blockIdx.x * n;
    const float part_ss = warp_sum(row_sumsq<W>(xr, n, threadIdx.x * W, NORM_ROW_THREADS * W));
    if (lane == 0) part[warp] = part_ss;
    __syncthreads();
    float ss = 0;
    for (int i = 0; i < NORM_ROW_THREADS / 32; i++) ss += part[i]; /* every thread the same order */
    const float r = 1.0f / sqrtf(ss / (float)n + eps);
    if (rstd && threadIdx.x == 0) rstd[blockIdx.x] = r;
    row_scale<W>(y + (size_t)blockIdx.x * n, xr, w, r, n, threadIdx.x * W, NORM_ROW_THREADS * W);
}

/* The row-in-registers kernels' pack counts: calls f(pack_count<P>()) with the smallest P of 1, 2,
 * 4, 6 (D 1536 in bf16) and 8 that holds a lane's packs of a row of n (n a multiple of 16 / sizeof(T),
 * at most 32 x 8 packs: PACKS_MAX); the forward and the backward take the same instances. */
#define PACKS_MAX 8
template <int P> using pack_count = std::integral_constant<int, P>;
template <typename T> static bool packs_fit(int n) { return n <= 32 * (16 / (int)sizeof(T)) * PACKS_MAX; }
template <typename T, typename F> static void with_packs(int n, F f) {
    const int packs = (n / (16 / (int)sizeof(T)) + 31) / 32;
    if (packs <= 1) f(pack_count<1>());
    else if (packs <= 2) f(pack_count<2>());
    else if (packs <= 4) f(pack_count<4>());
    else if (packs <= 6) f(pack_count<6>());
    else f(pack_count<PACKS_MAX>());
}

template <typename T>
static void rmsnorm_launch(gf_backend *be, gf_buf y, gf_buf rstd, gf_buf x, gf_buf w, int rows, int n, float eps) {
    constexpr int VN = 16 / sizeof(T);
    const bool vec = n % VN == 0 && cuda_aligned16(y.ptr) && cuda_aligned16(x.ptr) && cuda_aligned16(w.ptr);
    const unsigned grid = (unsigned)((rows + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK);
    cudaStream_t s = cuda_stream(be);
    T *Y = (T *)y.ptr;
    float *R = (float *)rstd.ptr;
    const T *X = (const T *)x.ptr, *Wt = (const T *)w.ptr;
    if (rows <= 2 * cuda_of(be)->prop.multiProcessorCount) { /* few rows: a block each */
        if (vec) cuda_launch((unsigned)rows, NORM_ROW_THREADS, 0, s, rmsnorm_row_kernel<VN, T>, Y, R, X, Wt, n, eps);
        else cuda_launch((unsigned)rows, NORM_ROW_THREADS, 0, s, rmsnorm_row_kernel<1, T>, Y, R, X, Wt, n, eps);
        return;
    }
    const unsigned threads = 32 * ROWS_PER_BLOCK;
    if (!vec) cuda_launch(grid, threads, 0, s, rmsnorm_kernel<1, T>, Y, R, X, Wt, rows, n, eps);
    else if (!packs_fit<T>(n)) cuda_launch(grid, threads, 0, s, rmsnorm_kernel<VN, T>, Y, R, X, Wt, rows, n, eps);
    else
        with_packs<T>(n, [&](auto pc) {
            constexpr int P = decltype(pc)::value;
            cuda_launch(grid, threads, 0, s, rmsnorm_packs_kernel<VN, P, T>, Y, R, X, Wt, rows, n, eps);
        });
}

extern "C" void cuda_rmsnorm(gf_backend *be, gf_buf y, gf_buf rstd, gf_buf x, gf_buf w, int rows, int n, float eps) {
    const char *op = "rmsnorm";
    if (!cuda_need(be, op, "y", y) || !cuda_need(be, op, "x", x) || !cuda_need(be, op, "w", w) ||
        !cuda_want(be, op, "y", y, be->act) || !cuda_want(be, op, "x", x, be->act) ||
        !cuda_want(be, op, "w", w, be->act) || !cuda_want(be, op, "rstd", rstd, GF_F32))
        return;
    if (rows <= 0 || n <= 0) return;
    if (be->act == GF_BF16) rmsnorm_launch<bf16>(be, y, rstd, x, w, rows, n, eps);
    else rmsnorm_launch<float>(be, y, rstd, x, w, rows, n, eps);
    cuda_after(be, op);
}

/* One pack of dx at column c of the row at off: r dy w - k x (+= when accumulate). */
template <int W, typename T>
__device__ __forceinline__ void dx_pack(T *dx, const T *dy, const T *x, const T *w, size_t off, int c, float r,
                                        float k, bool accumulate) {
    float a[W], b[W], g[W], o[W];
    ld_pack<W>(a, dy + off + c);
    ld_pack<W>(b, x + off + c);
    ld_pack<W>(g, w + c);
    if (accumulate) ld_pack<W>(o, dx + off + c);
#pragma unroll
    for (int i = 0; i < W; i++) {
        const float v = r * a[i] * g[i] - k * b[i];
        o[i] = accumulate ? o[i] + v : v;
    }
    st_pack<W>(dx + off + c, o);
}

/* dx = r dy w - (r^3 / n) (sum dy w x) x  (+= into dx when accumulate). */
template <int W, typename T>
__global__ void rmsnorm_dx_kernel(T *dx, const T *dy, const T *x, const T *w, const float *rstd, int rows, int n,
                                  bool accumulate) {
    const int row = blockIdx.x * ROWS_PER_BLOCK + (threadIdx.x >> 5), lane = threadIdx.x & 31;
    if (row >= rows) return;
    const size_t off = (size_t)row * n;
    float dot = 0;
    for (int c = lane * W; c < n; c += 32 * W) {
        float a[W], b[W], g[W];
        ld_pack<W>(a, dy + off + c);
        ld_pack<W>(b, x + off + c);
        ld_pack<W>(g, w + c);
#pragma unroll
        for (int i = 0; i < W; i++) dot += a[i] * g[i] * b[i];
    }
    dot = warp_sum(dot);
    const float r = rstd[row], k = r * r * r * dot / (float)n;
    for (int c = lane * W; c < n; c += 32 * W) dx_pack<W>(dx, dy, x, w, off, c, r, k, accumulate);
}

/* Rows a block of the fused dx + dw kernel, four a warp: enough rows to spread the dw partials'
 * writes (a block's n floats per DW_ROWS rows, an eighth of the f32 rows' bytes), few enough that a
 * warp's rows one after another do not serialize a call of many short rows (the q / k norms': N H
 * rows of 128). The blocks follow rows alone, so the order of the additions is the same on every
 * device; 4 x 2048 rows: 256 blocks. */
#define DW_ROWS (4 * ROWS_PER_BLOCK)

/* The same dx, and the column sums of dy x r (dw) of the block's DW_ROWS rows, written to
 * part[blockIdx.x, n] for cuda_sum_parts_f: the pass that reads dy and x for the row's dot also
 * adds their products to the warp's sums, so dw needs no pass of its own over dy and x (one read
 * of each instead of two; a training step's 57 norms at 1.5B: ~2.8 GB). Warp k takes rows
 * r0 + k, r0 + k + ROWS_PER_BLOCK, ...; the warps' sums meet in warp order. dot and dx are
 * rmsnorm_dx_kernel's, operation for operation.
 *
 * A row's loads (dy, x and, when accumulating, dx: P 16-byte packs each, kept as loaded) are all
 * issued before any of them is used: a pack's arithmetic or its dx store between two packs' loads
 * would order the next pack's round trip to memory after it (dx may alias dy, so the compiler may
 * not move a load above a store), and a row would cost P round trips in each pass. The warp's dw
 * sums live in shared memory (acc, P 32 W floats a warp, each lane its own columns) rather than
 * in P W registers, which leaves the registers for the packs. Dynamic shared memory:
 * ROWS_PER_BLOCK P 32 W floats (48 KiB at n 1536 in bf16). */
template <int W, int P, typename T>
__global__ void __launch_bounds__(32 * ROWS_PER_BLOCK)
    rmsnorm_dx_dw_kernel(T *dx, float *part, const T *dy, const T *x, const T *w, const float *rstd, int rows, int n,
                         bool accumulate) {
    CUDA_DYNAMIC_SMEM(smem);
    constexpr int COLS = P * 32 * W; /* a warp's share of the sums: a lane's P packs of columns */
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int r0 = blockIdx.x * DW_ROWS, r1 = min(rows, r0 + DW_ROWS);
    float *acc = (float *)smem + warp * COLS;
#pragma unroll
    for (int p = 0; p < P; p++)
#pragma unroll
        for (int i = 0; i < W; i++) acc[(p * 32 + lane) * W + i] = 0;
    for (int row = r0 + warp; row < r1; row += ROWS_PER_BLOCK) {
        const size_t off = (size_t)row * n;
        const float r = rstd[row];
        uint4 ra[P] = {}, rb[P] = {}, ro[P] = {};
#pragma unroll
        for (int p = 0; p < P; p++) {
            const int c = (p * 32 + lane) * W;
            if (c < n) {
                ra[p] = *(const uint4 *)(dy + off + c);
                rb[p] = *(const uint4 *)(x + off + c);
                if (accumulate) ro[p] = *(const uint4 *)(dx + off + c);
            }
        }
        float dot = 0;
#pragma unroll
        for (int p = 0; p < P; p++) {
            const int c = (p * 32 + lane) * W;
            if (c < n) {
                float a[W], b[W], g[W];
                unpack16<W, T>(a, ra[p]);
                unpack16<W, T>(b, rb[p]);
                ld_pack<W>(g, w + c);
#pragma unroll
                for (int i = 0; i < W; i++) {
                    dot += a[i] * g[i] * b[i];
                    acc[c + i] += a[i] * b[i] * r;
                }
            }
        }
        dot = warp_sum(dot);
        const float k = r * r * r * dot / (float)n;
#pragma unroll
        for (int p = 0; p < P; p++) {
            const int c = (p * 32 + lane) * W;
            if (c < n) {
                float a[W], b[W], g[W], o[W];
                unpack16<W, T>(a, ra[p]);
                unpack16<W, T>(b, rb[p]);
                ld_pack<W>(g, w + c);
                if (accumulate) unpack16<W, T>(o, ro[p]);
#pragma unroll
                for (int i = 0; i < W; i++) {
                    const float v = r * a[i] * g[i] - k * b[i];
                    o[i] = accumulate ? o[i] + v : v;
                }
                st_pack<W>(dx + off + c, o);
            }
        }
    }
    __syncthreads();
    const float *sums = (const float *)smem;
    for (int c = threadIdx.x; c < n; c += 32 * ROWS_PER_BLOCK) { /* warp order: the same bits every run */
        float s = sums[c];
        for (int k = 1; k < ROWS_PER_BLOCK; k++) s += sums[k * COLS + c];
        part[(size_t)blockIdx.x * n + c] = s;
    }
}

/* rmsnorm_dx_dw_kernel for rows of at most P packs a lane (n <= 32 W P) */
template <int W, int P, typename T>
static void rmsnorm_dx_dw_launch(gf_backend *be, T *dx, float *dw, const T *dy, const T *x, const T *w,
                                 const float *rstd, int rows, int n, bool accumulate) {
    const int blocks = (rows + DW_ROWS - 1) / DW_ROWS;
    float *part = (float *)cuda_scratch(be, (size_t)blocks * n * sizeof(float), "rmsnorm backward");
    if (!part) return; /* cuda_scratch left the error */
    const size_t smem = (size_t)ROWS_PER_BLOCK * P * 32 * W * sizeof(float);
    cuda_allow_smem((const void *)rmsnorm_dx_dw_kernel<W, P, T>, smem);
    cuda_launch((unsigned)blocks, 32 * ROWS_PER_BLOCK, smem, cuda_stream(be), rmsnorm_dx_dw_kernel<W, P, T>, dx, part,
                dy, x, w, rstd, rows, n, accumulate);
    cuda_sum_parts_f(be, dw, part, (size_t)blocks, (size_t)n);
    cuda_scratch_free(be, part);
}

template <typename T>
static void rmsnorm_backward_launch(gf_backend *be, gf_buf dx, gf_buf dw, gf_buf dy, gf_buf x, gf_buf w, gf_buf rstd,
                                    int rows, int n, bool accumulate) {
    cudaStream_t s = cuda_stream(be);
    constexpr int VN = 16 / sizeof(T);
    const bool vec = n % VN == 0 && cuda_aligned16(dx.ptr) && cuda_aligned16(dy.ptr) && cuda_aligned16(x.ptr) &&
                     cuda_aligned16(w.ptr);
    if (!gf_is_none(dw) && !gf_is_none(dx) && vec && packs_fit<T>(n)) { /* dx and dw in one pass */
        T *DX = (T *)dx.ptr;
        const T *DY = (const T *)dy.ptr, *X = (const T *)x.ptr, *Wt = (const T *)w.ptr;
        float *DW = (float *)dw.ptr;
        const float *R = (const float *)rstd.ptr;
        with_packs<T>(n, [&](auto pc) {
            rmsnorm_dx_dw_launch<VN, decltype(pc)::value>(be, DX, DW, DY, X, Wt, R, rows, n, accumulate);
        });
        return;
    }
    /* dw first: dx may overwrite dy (it may alias it when not accumulating) */
    if (!gf_is_none(dw)) cuda_col_sums(be, (float *)dw.ptr, dy, x, (const float *)rstd.ptr, rows, n);
    if (!gf_is_none(dx)) {
        const unsigned grid = (unsigned)((rows + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK);
        if (vec)
            cuda_launch(grid, 32 * ROWS_PER_BLOCK, 0, s, rmsnorm_dx_kernel<VN, T>, (T *)dx.ptr, (const T *)dy.ptr, (const T *)x.ptr, (const T *)w.ptr, (const float *)rstd.ptr, rows, n,
                accumulate);
        else
            cuda_launch(grid, 32 * ROWS_PER_BLOCK, 0, s, rmsnorm_dx_kernel<1, T>, (T *)dx.ptr, (const T *)dy.ptr, (const T *)x.ptr, (const T *)w.ptr, (const float *)rstd.ptr, rows, n,
                accumulate);
    }
}

/* rstd[rows] = 1/sqrt(mean(x^2) + eps): one warp per row (when the forward kept none). */
template <int W, typename T> __global__ void rstd_kernel(float *rstd, const T *x, int rows, int n, float eps) {
    const int row = blockIdx.x * ROWS_PER_BLOCK + (threadIdx.x >> 5), lane = threadIdx.x & 31;
    if (row >= rows) return;
    const float ss = warp_sum(row_sumsq<W>(x + (size_t)row * n, n, lane * W, 32 * W));
    if (lane == 0) rstd[row] = 1.0f / sqrtf(ss / (float)n + eps);
}

/* The backward with rstd given, or recomputed from x with eps when rstd is none. */
static void rmsnorm_backward_impl(gf_backend *be, gf_buf dx, gf_buf dw, gf_buf dy, gf_buf x, gf_buf w, gf_buf rstd,
                                  int rows, int n, float eps, bool accumulate_dx) {
    const char *op = "rmsnorm_backward";
    if (!cuda_need(be, op, "dy", dy) || !cuda_need(be, op, "x", x) ||
        !cuda_want(be, op, "dx", dx, be->act) || !cuda_want(be, op, "dw", dw, GF_F32) ||
        !cuda_want(be, op, "dy", dy, be->act) || !cuda_want(be, op, "x", x, be->act) ||
        !cuda_want(be, op, "w", w, be->act) || !cuda_want(be, op, "rstd", rstd, GF_F32))
        return;
    if (!gf_is_none(dx) && !cuda_need(be, op, "w", w)) return;
    if (rows <= 0 || n <= 0) return;
    float *own = NULL;
    if (gf_is_none(rstd)) {
        if (!(eps >= 0)) {
            be_set_error(be, "%s: rstd is required", op);
            return;
        }
        if (!(own = (float *)cuda_scratch(be, (size_t)rows * sizeof(float), op))) return;
        rstd.ptr = own;
        rstd.dtype = GF_F32;
        const unsigned grid = (unsigned)((rows + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK);
        const bool vec = n % (be->act == GF_BF16 ? 8 : 4) == 0 && cuda_aligned16(x.ptr); /* rows start aligned */
        if (be->act == GF_BF16)
            cuda_launch(grid, 32 * ROWS_PER_BLOCK, 0, cuda_stream(be), vec ? rstd_kernel<8, bf16> : rstd_kernel<1, bf16>,
                        own, (const bf16 *)x.ptr, rows, n, eps);
        else
            cuda_launch(grid, 32 * ROWS_PER_BLOCK, 0, cuda_stream(be), vec ? rstd_kernel<4, float> : rstd_kernel<1, float>,
                        own, (const float *)x.ptr, rows, n, eps);
    }
    if (be->act == GF_BF16) rmsnorm_backward_launch<bf16>(be, dx, dw, dy, x, w, rstd, rows, n, accumulate_dx);
    else rmsnorm_backward_launch<float>(be, dx, dw, dy, x, w, rstd, rows, n, accumulate_dx);
    cuda_scratch_free(be, own);
    cuda_after(be, op);
}

/* Contract v1: rstd may be none, then it is recomputed from x with eps. */
extern "C" void cuda_rmsnorm_backward(gf_backend *be, gf_buf dx, gf_buf dw, gf_buf dy, gf_buf x, gf_buf w,
                                      gf_buf rstd, int rows, int n, float eps, bool accumulate_dx) {
    rmsnorm_backward_impl(be, dx, dw, dy, x, w, rstd, rows, n, eps, accumulate_dx);
}

/* ------------------------------------------------------------- RoPE */

/* x[B, T, nh, hd] rotated in place at positions pos0 + t; table [n_pos, hd/2, (cos, sin)].
 * inverse rotates by the opposite angle (the transpose), for the backward. */
template <typename T>
__global__ void rope_kernel(T *x, const float *table, int T_, int nh, int hd, int pos0, bool adjacent, bool inverse,
                            size_t pairs) {
    const int half = hd / 2;
    for (size_t it = (size_t)blockIdx.x * blockDim.x + threadIdx.x; it < pairs; it += (size_t)gridDim.x * blockDim.x) {
        const int i = (int)(it % half);
        const size_t head = it / half; /* (b, t, h) */
        const int t = (int)((head / nh) % T_);
        const float2 cs = ((const float2 *)table)[(size_t)(pos0 + t) * half + i];
        const float c = cs.x, s = inverse ? -cs.y : cs.y;
        T *v = x + head * hd;
        const int i0 = adjacent ? 2 * i : i, i1 = adjacent ? 2 * i + 1 : i + half;
        const float x0 = to_f(v[i0]), x1 = to_f(v[i1]);
        v[i0] = from_f<T>(x0 * c - x1 * s);
        v[i1] = from_f<T>(x0 * s + x1 * c);
    }
}

/* The same rotation W elements a thread with 16-byte loads and 32-bit indices (the caller checked
 * alignment, hd % (2 W) == 0 and that items fit 32 bits): a pack is W pairs (i0 .. i0 + W - 1 with
 * their partners half further) in half pairing, W / 2 adjacent pairs in adjacent pairing. */
template <int W, typename T>
__global__ void rope_pack_kernel(T *x, const float *table, unsigned T_, unsigned nh, unsigned hd, int pos0,
                                 bool adjacent, bool inverse, unsigned packs_per_head, unsigned items) {
    const unsigned half = hd / 2, per_row = nh * packs_per_head;
    for (unsigned it = blockIdx.x * blockDim.x + threadIdx.x; it < items; it += gridDim.x * blockDim.x) {
        const unsigned row = it / per_row, j = it - row * per_row; /* row: (b, t) */
        const unsigned h = j / packs_per_head, p = j - h * packs_per_head;
        const float2 *cs = (const float2 *)table + (size_t)(pos0 + row % T_) * half;
        T *v = x + ((size_t)row * nh + h) * hd;
        const float sg = inverse ? -1.0f : 1.0f;
        if (adjacent) {
            float f[W];
            ld_pack<W>(f, v + p * W);
#pragma unroll
            for (int k = 0; k < W / 2; k++) {
                const float2 c = cs[p * (W / 2) + k];
                const float x0 = f[2 * k], x1 = f[2 * k + 1], sn = sg * c.y;
                f[2 * k] = x0 * c.x - x1 * sn;
                f[2 * k + 1] = x0 * sn + x1 * c.x;
            }
            st_pack<W>(v + p * W, f);
        } else {
            float a[W], b[W];
            ld_pack<W>(a, v + p * W);
            ld_pack<W>(b, v + p * W + half);
#pragma unroll
            for (int k = 0; k < W; k++) {
                const float2 c = cs[p * W + k];
                const float x0 = a[k], x1 = b[k], sn = sg * c.y;
                a[k] = x0 * c.x - x1 * sn;
                b[k] = x0 * sn + x1 * c.x;
            }
            st_pack<W>(v + p * W, a);
            st_pack<W>(v + p * W + half, b);
        }
    }
}

extern "C" void cuda_rope(gf_backend *be, gf_buf x, gf_buf table, int B, int T, int nh, int hd, int pos0,
                          rope_pairing pairing, bool inverse) {
    const char *op = "rope";
    if (!cuda_need(be, op, "x", x) || !cuda_need(be, op, "table", table) || !cuda_want(be, op, "x", x, be->act) ||
        !cuda_want(be, op, "table", table, GF_F32))
        return;
    if (hd % 2) {
        be_set_error(be, "%s: head dim %d is odd", op, hd);
        return;
    }
    if (!((uintptr_t)table.ptr % 8 == 0)) {
        be_set_error(be, "%s: the table is not 8-byte aligned", op);
        return;
    }
    const size_t pairs = (size_t)B * T * nh * (hd / 2);
    if (!pairs) return;
    const unsigned cap = 16u * (unsigned)cuda_of(be)->prop.multiProcessorCount;
    const bool adj = pairing == ROPE_ADJACENT;
    /* packs of 16 bytes: every head starts aligned and holds whole packs on both sides of the pairing */
    const int W = be->act == GF_BF16 ? 8 : 4;
    const size_t items = adj ? pairs * 2 / W : pairs / W; /* a pack: W elements (adjacent), W pairs (half) */
    if (hd % (2 * W) == 0 && cuda_aligned16(x.ptr) && items <= 0x7fffffffu) { /* the stride cannot wrap */
        const unsigned pph = (unsigned)(hd / W / (adj ? 1 : 2));
        if (be->act == GF_BF16)
            cuda_launch(cuda_grid(items, 256, cap), 256, 0, cuda_stream(be), rope_pack_kernel<8, bf16>, (bf16 *)x.ptr,
                        (const float *)table.ptr, (unsigned)T, (unsigned)nh, (unsigned)hd, pos0, adj, inverse, pph,
                        (unsigned)items);
        else
            cuda_launch(cuda_grid(items, 256, cap), 256, 0, cuda_stream(be), rope_pack_kernel<4, float>,
                        (float *)x.ptr, (const float *)table.ptr, (unsigned)T, (unsigned)nh, (unsigned)hd, pos0, adj,
                        inverse, pph, (unsigned)items);
    } else if (be->act == GF_BF16)
        cuda_launch(cuda_grid(pairs, 256, cap), 256, 0, cuda_stream(be), rope_kernel<bf16>, (bf16 *)x.ptr, (const float *)table.ptr, T, nh, hd, pos0, adj, inverse, pairs);
    else
        cuda_launch(cuda_grid(pairs, 256, cap), 256, 0, cuda_stream(be), rope_kernel<float>, (float *)x.ptr, (const float *)table.ptr, T, nh, hd, pos0, adj, inverse, pairs);
    cuda_after(be, op);
}
