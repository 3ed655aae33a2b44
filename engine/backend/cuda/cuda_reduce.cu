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
