/* Losses: cross-entropy and KL-with-temperature over rows of V logits (one
 * block per row, an online max/sum pass then a gradient pass), MSE and the
 * row-wise L2 alignment loss. Each writes one F64 value per row (per block
 * for MSE) and adds them to the F64 loss in a fixed order (cuda_sum_parts:
 * the same bits every run); gradients are written scaled by grad_scale and may
 * replace the input (same element, same thread: read before written). Inputs
 * and gradients may be F32 or BF16 independently (chosen at run time). */
#include <math.h>

#include "backend/cuda/cuda_ops.cuh"

#define ROW_THREADS 512

/* (max, sum of exp(x - max)) pairs: combining two partial softmax normalizers. */
struct msum {
    float m, s;
};
__device__ __forceinline__ msum msum_add(msum a, msum b) {
    const float m = fmaxf(a.m, b.m);
    if (m == -INFINITY) return {m, 0.0f};
    return {m, a.s * expf(a.m - m) + b.s * expf(b.m - m)};
}
__device__ __forceinline__ msum msum_push(msum a, float x) {
    if (x <= a.m) return {a.m, a.s + expf(x - a.m)};
    return {x, a.s * expf(a.m - x) + 1.0f};
}
/* Block-wide combination; every thread gets the result. red: 32 entries of shared scratch. */
__device__ msum block_msum(msum v, msum *red) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        msum w = {__shfl_xor_sync(0xffffffffu, v.m, o), __shfl_xor_sync(0xffffffffu, v.s, o)};
        v = msum_add(v, w);
    }
    __syncthreads();
    if (lane == 0) red[warp] = v;
    __syncthreads();
    v = lane < nw ? red[lane] : msum{-INFINITY, 0.0f};
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        msum w = {__shfl_xor_sync(0xffffffffu, v.m, o), __shfl_xor_sync(0xffffffffu, v.s, o)};
        v = msum_add(v, w);
    }
    return v;
}

/* ------------------------------------------------------------- cross-entropy */

__global__ void cross_entropy_kernel(double *rows, void *dlogits, bool dbf, const void *logits, bool lbf,
                                     const int *targets, int V, float grad_scale) {
    __shared__ msum red[32];
    const int row = blockIdx.x, tgt = targets[row];
    const size_t off = (size_t)row * V;
    if (tgt < 0) { /* skipped row: no loss, zero gradient */
        if (threadIdx.x == 0) rows[row] = 0.0;
        if (dlogits)
            for (int i = threadIdx.x; i < V; i += blockDim.x) st_any(dlogits, dbf, off + i, 0.0f);
        return;
    }
    msum a = {-INFINITY, 0.0f};
    for (int i = threadIdx.x; i < V; i += blockDim.x) a = msum_push(a, ld_any(logits, lbf, off + i));
    a = block_msum(a, red);
    const float lse = a.m + logf(a.s);
    const float zt = ld_any(logits, lbf, off + tgt);
    if (threadIdx.x == 0) rows[row] = (double)lse - (double)zt;
    if (!dlogits) return;
    __syncthreads(); /* every thread has read logits[tgt] before anyone overwrites it */
    for (int i = threadIdx.x; i < V; i += blockDim.x) {
        const float p = expf(ld_any(logits, lbf, off + i) - lse);
        st_any(dlogits, dbf, off + i, grad_scale * (p - (i == tgt ? 1.0f : 0.0f)));
    }
}

extern "C" void cuda_cross_entropy(gf_backend *be, gf_buf loss, gf_buf dlogits, gf_buf logits, gf_buf targets, int N,
                                   int V, float grad_scale) {
    const char *op = "cross_entropy";
    if (!cuda_need(be, op, "loss", loss) || !cuda_need(be, op, "logits", logits) ||
        !cuda_need(be, op, "targets", targets) || !cuda_want(be, op, "loss", loss, GF_F64) ||
        !cuda_want_float(be, op, "dlogits", dlogits) || !cuda_want_float(be, op, "logits", logits) ||
        !cuda_want(be, op, "targets", targets, GF_I32))
        return;
    if (N <= 0 || V <= 0) return;
    double *rows = (double *)cuda_scratch(be, (size_t)N * sizeof(double), op);
    if (!rows) return;
    cuda_launch(N, ROW_THREADS, 0, cuda_stream(be), cross_entropy_kernel, rows, dlogits.ptr, dlogits.dtype == GF_BF16, logits.ptr, logits.dtype == GF_BF16,
        (const int *)targets.ptr, V, grad_scale);
    cuda_sum_parts(be, (double *)loss.ptr, rows, (size_t)N, 1);
    cuda_scratch_free(be, rows);
    cuda_after(be, op);
}

/* ------------------------------------------------------------- KL with temperature */

/* tau^2 KL(p_t || p_s), p = softmax(z / tau); ds = grad_scale tau (p_s - p_t). */
__global__ void kl_div_kernel(double *rows, void *ds, bool dbf, const void *s, bool sbf, const void *t, bool tbf,
                              int V, float tau, float grad_scale) {
    __shared__ msum red[32];
    __shared__ double redd[32];
    const size_t off = (size_t)blockIdx.x * V;
    const float inv = 1.0f / tau;
    msum as = {-INFINITY, 0.0f}, at = {-INFINITY, 0.0f};
    for (int i = threadIdx.x; i < V; i += blockDim.x) {
        as = msum_push(as, ld_any(s, sbf, off + i) * inv);
        at = msum_push(at, ld_any(t, tbf, off + i) * inv);
    }
    as = block_msum(as, red);
    at = block_msum(at, red);
    const float ls = as.m + logf(as.s), lt = at.m + logf(at.s);
    double kl = 0;
    for (int i = threadIdx.x; i < V; i += blockDim.x) {
        const float ys = ld_any(s, sbf, off + i) * inv - ls, yt = ld_any(t, tbf, off + i) * inv - lt;
        const float ps = expf(ys), pt = expf(yt);
        if (pt > 0) kl += (double)pt * ((double)yt - (double)ys);
        if (ds) st_any(ds, dbf, off + i, grad_scale * tau * (ps - pt));
    }
    kl = block_sum(kl, redd);
    if (threadIdx.x == 0) rows[blockIdx.x] = (double)tau * tau * kl;
}

extern "C" void cuda_kl_div(gf_backend *be, gf_buf loss, gf_buf dstudent, gf_buf student, gf_buf teacher, int N,
                            int V, float tau, float grad_scale) {
    const char *op = "kl_div";
    if (!cuda_need(be, op, "loss", loss) || !cuda_need(be, op, "student", student) ||
        !cuda_need(be, op, "teacher", teacher) || !cuda_want(be, op, "loss", loss, GF_F64) ||
        !cuda_want_float(be, op, "dstudent", dstudent) || !cuda_want_float(be, op, "student", student) ||
        !cuda_want_float(be, op, "teacher", teacher))
        return;
    if (!(tau > 0)) {
        be_set_error(be, "%s: temperature %g is not positive", op, (double)tau);
        return;
    }
    if (N <= 0 || V <= 0) return;
    double *rows = (double *)cuda_scratch(be, (size_t)N * sizeof(double), op);
    if (!rows) return;
    cuda_launch(N, ROW_THREADS, 0, cuda_stream(be), kl_div_kernel, rows, dstudent.ptr,
                                                          dstudent.dtype == GF_BF16, student.ptr,
                                                          student.dtype == GF_BF16, teacher.ptr,
                                                          teacher.dtype == GF_BF16, V, tau, grad_scale);
    cuda_sum_parts(be, (double *)loss.ptr, rows, (size_t)N, 1);
    cuda_scratch_free(be, rows);
    cuda_after(be, op);
}

/* ------------------------------------------------------------- MSE */

__global__ void mse_kernel(double *parts, void *dy, bool dbf, const void *y, bool ybf, const void *t, bool tbf,
                           size_t n, float grad_scale) {
    __shared__ double red[32];
    double acc = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const float d = ld_any(y, ybf, i) - ld_any(t, tbf, i);
        acc += (double)d * d;
        if (dy) st_any(dy, dbf, i, grad_scale * 2.0f * d);
    }
    acc = block_sum(acc, red);
    if (threadIdx.x == 0) parts[blockIdx.x] = acc;
}

extern "C" void cuda_mse(gf_backend *be, gf_buf loss, gf_buf dy, gf_buf y, gf_buf target, size_t n,
                         float grad_scale) {
    const char *op = "mse";
    if (!cuda_need(be, op, "loss", loss) || !cuda_need(be, op, "y", y) || !cuda_need(be, op, "target", target) ||
        !cuda_want(be, op, "loss", loss, GF_F64) || !cuda_want_float(be, op, "dy", dy) ||
        !cuda_want_float(be, op, "y", y) || !cuda_want_float(be, op, "target", target))
        return;
    if (!n) return;
    const unsigned cap = 4u * (unsigned)cuda_of(be)->prop.multiProcessorCount;
    const unsigned grid = cuda_grid(n, 256, cap);
    double *parts = (double *)cuda_scratch(be, grid * sizeof(double), op);
    if (!parts) return;
    cuda_launch(grid, 256, 0, cuda_stream(be), mse_kernel, parts, dy.ptr, dy.dtype == GF_BF16, y.ptr, y.dtype == GF_BF16,
                                                  target.ptr, target.dtype == GF_BF16, n, grad_scale);
    cuda_sum_parts(be, (double *)loss.ptr, parts, grid, 1);
    cuda_scratch_free(be, parts);
    cuda_after(be, op);
}

/* ------------------------------------------------------------- row-wise L2 */

/* loss += ||t - s|| / sqrt(D) per row; ds += grad_scale (s - t) / (||t - s|| sqrt(D)) (rows with a zero norm add nothing). */
__global__ void row_l2_kernel(double *rows, void *ds, bool dbf, const void *s, bool sbf, const void *t, bool tbf,
                              int D, float grad_scale) {
    __shared__ float red[32];
    const size_t off = (size_t)blockIdx.x * D;
    float ss = 0;
    for (int i = threadIdx.x; i < D; i += blockDim.x) {
        const float d = ld_any(s, sbf, off + i) - ld_any(t, tbf, off + i);
        ss += d * d;
    }
    ss = block_sum(ss, red);
    const float norm = sqrtf(ss), rs = 1.0f / sqrtf((float)D);
    if (threadIdx.x == 0) rows[blockIdx.x] = (double)norm * rs;
    if (!ds || !(norm > 0)) return;
    const float c = grad_scale * rs / norm;
    for (int i = threadIdx.x; i < D; i += blockDim.x) {
        const float d = ld_any(s, sbf, off + i) - ld_any(t, tbf, off + i);
        st_any(ds, dbf, off + i, ld_any(ds, dbf, off + i) + c * d);
    }
}

extern "C" void cuda_row_l2(gf_backend *be, gf_buf loss, gf_buf ds, gf_buf s, gf_buf t, int N, int D,
                            float grad_scale) {
    const char *op = "row_l2";
    if (!cuda_need(be, op, "loss", loss) || !cuda_need(be, op, "s", s) || !cuda_need(be, op, "t", t) ||
        !cuda_want(be, op, "loss", loss, GF_F64) || !cuda_want_float(be, op, "ds", ds) ||
        !cuda_want_float(be, op, "s", s) || !cuda_want_float(be, op, "t", t))
        return;
    if (N <= 0 || D <= 0) return;
    double *rows = (double *)cuda_scratch(be, (size_t)N * sizeof(double), op);
    if (!rows) return;
    cuda_launch(N, 256, 0, cuda_stream(be), row_l2_kernel, rows, ds.ptr, ds.dtype == GF_BF16, s.ptr, s.dtype == GF_BF16, t.ptr,
                                                  t.dtype == GF_BF16, D, grad_scale);
    cuda_sum_parts(be, (double *)loss.ptr, rows, (size_t)N, 1);
    cuda_scratch_free(be, rows);
    cuda_after(be, op);
}
