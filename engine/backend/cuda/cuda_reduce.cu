/* Fixed-order sums of partial results (cuda_ops.cuh, cuda_sum_parts): the
 * second stage of every reduction that spans blocks, so that results do not
 * depend on the order in which blocks finish. */
#include "backend/cuda/cuda_ops.cuh"

#define SUM_THREADS 256

template <typename F>
__global__ void sum_parts_kernel(F *dst, const F *parts, size_t n_parts, size_t n_out) {
    __shared__ F red[32];
    const size_t j = blockIdx.x;
    F s = 0;
    for (size_t p = threadIdx.x; p < n_parts; p += SUM_THREADS) s += parts[p * n_out + j];
    s = block_sum(s, red); /* a fixed shuffle tree: the same bits every run */
    if (threadIdx.x == 0) dst[j] += s;
}

template <typename F> static void launch(gf_backend *be, F *dst, const F *parts, size_t n_parts, size_t n_out) {
    if (!n_out) return;
    if (n_out > 0x7fffffffu) {
        be_set_error(be, "sum_parts: %zu outputs", n_out);
        return;
    }
    cuda_launch((unsigned)n_out, SUM_THREADS, 0, cuda_stream(be), sum_parts_kernel<F>, dst, parts, n_parts, n_out);
}

void cuda_sum_parts(gf_backend *be, double *dst, const double *parts, size_t n_parts, size_t n_out) {
    launch(be, dst, parts, n_parts, n_out);
}

void cuda_sum_parts_f(gf_backend *be, float *dst, const float *parts, size_t n_parts, size_t n_out) {
    launch(be, dst, parts, n_parts, n_out);
}

/* ------------------------------------------------------------- column sums */

#define COL_PACKS 32 /* a block: 32 column packs (threadIdx.x) x COL_LANES rows at a time */
#define COL_LANES 8

/* part[chunk, out] = sum over the chunk's rows of x[N, out] (times y[r, j] rs[r] when y is given),
 * W columns a thread (16-byte loads when W * sizeof(T) is 16), the chunk's rows split over the
 * block's COL_LANES rows of threads and added in shared memory in lane order. */
template <int W, typename T>
__global__ void col_parts_kernel(float *part, const T *x, const T *y, const float *rs, int N, int out, int rows_per) {
    __shared__ float red[COL_LANES][COL_PACKS * W];
    const int col = (blockIdx.x * COL_PACKS + threadIdx.x) * W;
    const int r0 = blockIdx.y * rows_per, r1 = min(N, r0 + rows_per);
    float acc[W];
#pragma unroll
    for (int i = 0; i < W; i++) acc[i] = 0;
    if (col < out) {
#pragma unroll 4
        for (int r = r0 + threadIdx.y; r < r1; r += COL_LANES) {
            float f[W];
            ld_pack<W>(f, x + (size_t)r * out + col);
            if (y) {
                float g[W];
                ld_pack<W>(g, y + (size_t)r * out + col);
                const float sr = rs[r];
#pragma unroll
                for (int i = 0; i < W; i++) f[i] = f[i] * g[i] * sr;
            }
#pragma unroll
            for (int i = 0; i < W; i++) acc[i] += f[i];
        }
    }
#pragma unroll
    for (int i = 0; i < W; i++) red[threadIdx.y][threadIdx.x * W + i] = acc[i];
    __syncthreads();
    if (threadIdx.y == 0 && col < out)
#pragma unroll
        for (int i = 0; i < W; i++) {
            float s = red[0][threadIdx.x * W + i];
            for (int k = 1; k < COL_LANES; k++) s += red[k][threadIdx.x * W + i];
            part[(size_t)blockIdx.y * out + col + i] = s;
        }
}

template <int W, typename T>
static void col_sums(gf_backend *be, float *dst, const T *x, const T *y, const float *rs, int N, int out) {
    /* ~512 blocks whatever the width (a width of 256 is one column block), at least 32 rows a
     * chunk; from N and out only, so the order of the additions is the same on every device */
    const int col_blocks = (out / W + COL_PACKS - 1) / COL_PACKS;
    const int want = (512 + col_blocks - 1) / col_blocks;
    int rows_per = (N + want - 1) / want;
    rows_per = rows_per < 32 ? 32 : (rows_per + COL_LANES - 1) / COL_LANES * COL_LANES;
    const int chunks = (N + rows_per - 1) / rows_per;
    float *part = (float *)cuda_scratch(be, (size_t)chunks * out * sizeof(float), "column sums");
    if (!part) return;
    cuda_launch(dim3((unsigned)col_blocks, (unsigned)chunks), dim3(COL_PACKS, COL_LANES), 0, cuda_stream(be),
                col_parts_kernel<W, T>, part, x, y, rs, N, out, rows_per);
    cuda_sum_parts_f(be, dst, part, (size_t)chunks, (size_t)out);
    cuda_scratch_free(be, part);
}

void cuda_col_sums(gf_backend *be, float *dst, gf_buf x, gf_buf y, const float *rs, int N, int out) {
    if (N <= 0 || out <= 0) return;
    const bool al = cuda_aligned16(x.ptr) && (gf_is_none(y) || cuda_aligned16(y.ptr));
    if (be->act == GF_BF16) {
        const bf16 *X = (const bf16 *)x.ptr, *Y = (const bf16 *)y.ptr;
        if (out % 8 == 0 && al) col_sums<8>(be, dst, X, Y, rs, N, out);
        else col_sums<1>(be, dst, X, Y, rs, N, out);
    } else {
        const float *X = (const float *)x.ptr, *Y = (const float *)y.ptr;
        if (out % 4 == 0 && al) col_sums<4>(be, dst, X, Y, rs, N, out);
        else col_sums<1>(be, dst, X, Y, rs, N, out);
    }
}
