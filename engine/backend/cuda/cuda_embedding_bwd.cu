/* be_embedding_backward on CUDA, in a fixed order: dE[V, D] (F32) += dx[N, D]
 * at rows tokens[n]. Repeated tokens add up, and a scatter with atomics would
 * add them in whatever order the blocks run (a different last bit from run to
 * run, so training would not repeat). Instead the positions are sorted by
 * token (CUB's radix sort is stable: equal tokens keep their positions'
 * order), run-length encoded, and one block per distinct token sums its rows
 * in position order and adds the sum once. Not in the emulation (CUB is device
 * code the host compiler cannot build): test_cuda_ops checks it on the GPU,
 * twice for the same bits. */
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_scan.cuh>

#include "backend/cuda/cuda_ops.cuh"

__global__ void iota_kernel(int *out, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = i;
}

/* Block r < *n_runs: token uniq[r], positions pos[off[r] .. off[r] + cnt[r]) in increasing order. */
template <typename T>
__global__ void embedding_rows_kernel(float *dE, const T *dx, const int *uniq, const int *cnt, const int *off,
                                      const int *pos, const int *n_runs, int D) {
    const int r = blockIdx.x;
    if (r >= *n_runs) return;
    const size_t row = (size_t)uniq[r] * D;
    const int beg = off[r], n = cnt[r];
    for (int d = threadIdx.x; d < D; d += blockDim.x) {
        float s = 0;
        for (int i = 0; i < n; i++) s += to_f(dx[(size_t)pos[beg + i] * D + d]);
        dE[row + d] += s;
    }
}

extern "C" void cuda_embedding_backward(gf_backend *be, gf_buf dE, gf_buf dx, gf_buf tokens, int N, int D) {
    const char *op = "embedding_backward";
    if (!cuda_need(be, op, "dE", dE) || !cuda_need(be, op, "dx", dx) || !cuda_need(be, op, "tokens", tokens) ||
        !cuda_want(be, op, "dE", dE, GF_F32) || !cuda_want(be, op, "dx", dx, be->act) ||
        !cuda_want(be, op, "tokens", tokens, GF_I32))
        return;
    if (N <= 0 || D <= 0) return;
    cudaStream_t s = cuda_stream(be);
    /* scratch: sorted keys, positions in and out, unique tokens, counts, offsets, run count; CUB's temp */
    size_t t_sort = 0, t_rle = 0, t_scan = 0;
    cub::DeviceRadixSort::SortPairs(nullptr, t_sort, (const int *)nullptr, (int *)nullptr, (const int *)nullptr,
                                    (int *)nullptr, N, 0, 32, s);
    cub::DeviceRunLengthEncode::Encode(nullptr, t_rle, (const int *)nullptr, (int *)nullptr, (int *)nullptr,
                                       (int *)nullptr, N, s);
    cub::DeviceScan::ExclusiveSum(nullptr, t_scan, (const int *)nullptr, (int *)nullptr, N, s);
    size_t t_cub = t_sort > t_rle ? t_sort : t_rle;
    if (t_scan > t_cub) t_cub = t_scan;
    const size_t ints = (size_t)N * 6 + 1, bytes = ((ints * sizeof(int) + 255) & ~(size_t)255) + t_cub;
    char *scratch = (char *)cuda_scratch(be, bytes, op);
    if (!scratch) return;
    int *keys = (int *)scratch, *pos_in = keys + N, *pos = pos_in + N, *uniq = pos + N, *cnt = uniq + N;
    int *off = cnt + N, *n_runs = off + N;
    void *tmp = scratch + ((ints * sizeof(int) + 255) & ~(size_t)255);
    const unsigned th = 256, grid = cuda_grid((size_t)N, th, 1024);
    cuda_launch(grid, th, 0, s, iota_kernel, pos_in, N);
    size_t t = t_cub;
    cudaError_t e = cub::DeviceRadixSort::SortPairs(tmp, t, (const int *)tokens.ptr, keys, (const int *)pos_in, pos, N,
                                                    0, 32, s);
    t = t_cub;
    if (e == cudaSuccess) e = cub::DeviceRunLengthEncode::Encode(tmp, t, (const int *)keys, uniq, cnt, n_runs, N, s);
    t = t_cub;
    if (e == cudaSuccess) e = cub::DeviceScan::ExclusiveSum(tmp, t, (const int *)cnt, off, N, s);
    if (e != cudaSuccess) {
        be_set_error(be, "%s: %s", op, cudaGetErrorString(e));
    } else if (be->act == GF_BF16) {
        cuda_launch((unsigned)N, th, 0, s, embedding_rows_kernel<bf16>, (float *)dE.ptr, (const bf16 *)dx.ptr,
                    (const int *)uniq, (const int *)cnt, (const int *)off, (const int *)pos, (const int *)n_runs, D);
    } else {
        cuda_launch((unsigned)N, th, 0, s, embedding_rows_kernel<float>, (float *)dE.ptr, (const float *)dx.ptr,
                    (const int *)uniq, (const int *)cnt, (const int *)off, (const int *)pos, (const int *)n_runs, D);
    }
    cuda_scratch_free(be, scratch);
    cuda_after(be, op);
}
