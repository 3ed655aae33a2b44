/* be_linear for a handful of rows (a decode step: one row per sequence):
 * y[M, out] = x[M, in] W[out, in]^T (+ b) (+ y), a warp per output column.
 *
 * Why not cuBLAS here: at M = 1..GEMV_MAX_ROWS the product is a matrix-vector
 * one, bound by reading W once. cublasLt took 2.5x the weights' bytes on
 * Qwen2.5-1.5B's decode step (1.87 ms for 225 products against 0.73 ms; ncu
 * on the H200) and ~6 us of host time a call, in a step the host already
 * bounds. Each warp streams its W row in 16-byte packs (two in flight per
 * lane), reads the M rows of x alongside (L1 serves them to every warp), and
 * sums in fp32. */
#include "backend/cuda/cuda_gemv.cuh"

#define GEMV_WARPS 8 /* warps (output columns) per block */

template <typename T, int M, int VN>
__global__ void __launch_bounds__(GEMV_WARPS * 32) gemv_kernel(T *__restrict__ y, const T *__restrict__ x, const T *__restrict__ W,
                                                               const T *__restrict__ b, int in, int out, bool accumulate) {
    const int lane = threadIdx.x & 31, n = blockIdx.x * GEMV_WARPS + (threadIdx.x >> 5);
    if (n >= out) return;
    const T *w = W + (size_t)n * in;
    float acc[M];
#pragma unroll
    for (int m = 0; m < M; m++) acc[m] = 0.f;
    int k = lane * VN;
    for (; k + 32 * VN < in; k += 64 * VN) { /* two packs of W in flight */
        float w0[VN], w1[VN];
        ld_pack<VN>(w0, w + k);
        ld_pack<VN>(w1, w + k + 32 * VN);
#pragma unroll
        for (int m = 0; m < M; m++) {
            float x0[VN], x1[VN];
            ld_pack<VN>(x0, x + (size_t)m * in + k);
            ld_pack<VN>(x1, x + (size_t)m * in + k + 32 * VN);
#pragma unroll
            for (int i = 0; i < VN; i++) acc[m] += w0[i] * x0[i] + w1[i] * x1[i];
        }
    }
    if (k < in) {
        float w0[VN];
        ld_pack<VN>(w0, w + k);
#pragma unroll
        for (int m = 0; m < M; m++) {
            float x0[VN];
            ld_pack<VN>(x0, x + (size_t)m * in + k);
#pragma unroll
            for (int i = 0; i < VN; i++) acc[m] += w0[i] * x0[i];
        }
    }
#pragma unroll
    for (int m = 0; m < M; m++) acc[m] = warp_sum(acc[m]);
    if (lane != 0) return;
    const float bias = b ? to_f(b[n]) : 0.f;
#pragma unroll
    for (int m = 0; m < M; m++) {
        T *dst = y + (size_t)m * out + n;
        *dst = from_f<T>(acc[m] + bias + (accumulate ? to_f(*dst) : 0.f));
    }
}

template <typename T, int M>
static void launch_rows(gf_backend *be, gf_buf y, gf_buf x, gf_buf W, gf_buf b, int in, int out, bool accumulate) {
    constexpr int VN = 16 / sizeof(T);
    const unsigned grid = (unsigned)((out + GEMV_WARPS - 1) / GEMV_WARPS);
    cuda_launch(grid, GEMV_WARPS * 32, 0, cuda_stream(be), gemv_kernel<T, M, VN>, (T *)y.ptr, (const T *)x.ptr,
                (const T *)W.ptr, (const T *)b.ptr, in, out, accumulate);
}

template <typename T>
static void launch(gf_backend *be, gf_buf y, gf_buf x, gf_buf W, gf_buf b, int M, int in, int out, bool accumulate) {
    switch (M) {
    case 1: launch_rows<T, 1>(be, y, x, W, b, in, out, accumulate); break;
    case 2: launch_rows<T, 2>(be, y, x, W, b, in, out, accumulate); break;
    case 3: launch_rows<T, 3>(be, y, x, W, b, in, out, accumulate); break;
    default: launch_rows<T, 4>(be, y, x, W, b, in, out, accumulate); break;
    }
}

bool cuda_gemv_takes(gf_backend *be, gf_buf x, gf_buf W, int M, int in) {
    const int vn = be->act == GF_BF16 ? 8 : 4;
    return M >= 1 && M <= GEMV_MAX_ROWS && in % vn == 0 && cuda_aligned16(x.ptr) && cuda_aligned16(W.ptr);
}

void cuda_gemv(gf_backend *be, gf_buf y, gf_buf x, gf_buf W, gf_buf b, int M, int in, int out, bool accumulate) {
    if (out <= 0) return;
    if (be->act == GF_BF16) launch<bf16>(be, y, x, W, b, M, in, out, accumulate);
    else launch<float>(be, y, x, W, b, M, in, out, accumulate);
    cuda_after(be, "linear (gemv)");
}
