/* The optimizer's device side: the sum of squares of gradients (global norm
 * for clipping) and a fused AdamW step over F32 master weights and moments
 * that also writes the compute-type copy. */
#include <math.h>

#include "backend/cuda/cuda_ops.cuh"

#define SUMSQ_THREADS 256
#define SUMSQ_BATCH 4 /* float4 loads a thread has in flight */

/* parts[block] = sum of x[i]^2 over the block's elements (double per thread);
 * cuda_sum_parts adds the blocks to acc in a fixed order. The body x[head,
 * head + 4 n4) is read as float4 (x + head is 16-byte aligned), float4 j by
 * thread j mod (grid threads), SUMSQ_BATCH loads before their squares are
 * added; the head (up to 3 elements before it) and the tail (up to 3 after)
 * one element per thread. Which thread adds which element depends only on n,
 * the alignment and the grid: the same bits every run. */
__global__ void sumsq_kernel(double *parts, const float *x, size_t head, size_t n4, size_t n) {
    __shared__ double red[32];
    const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x, nt = (size_t)gridDim.x * blockDim.x;
    const float4 *body = (const float4 *)(x + head);
    double s = 0;
    for (size_t b = tid; b < n4; b += SUMSQ_BATCH * nt) {
        float4 v[SUMSQ_BATCH];
#pragma unroll
        for (int u = 0; u < SUMSQ_BATCH; u++) {
            const size_t j = b + u * nt;
            v[u] = j < n4 ? body[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
#pragma unroll
        for (int u = 0; u < SUMSQ_BATCH; u++) {
            const double a = v[u].x, c = v[u].y, d = v[u].z, e = v[u].w;
            s += a * a;
            s += c * c;
            s += d * d;
            s += e * e;
        }
    }
    /* the head and the tail: at most 6 elements */
    const size_t rest = n - 4 * n4;
    if (tid < rest) {
        const double v = x[tid < head ? tid : tid + 4 * n4];
        s += v * v;
    }
    s = block_sum(s, red);
    if (threadIdx.x == 0) parts[blockIdx.x] = s;
}

extern "C" void cuda_sumsq(gf_backend *be, gf_buf acc, gf_buf x, size_t n) {
    const char *op = "sumsq";
    if (!cuda_need(be, op, "acc", acc) || !cuda_need(be, op, "x", x) || !cuda_want(be, op, "acc", acc, GF_F64) ||
        !cuda_want(be, op, "x", x, GF_F32))
        return;
    if (!n) return;
    /* floats before the first 16-byte boundary (a float pointer is 4-byte aligned) */
    const uintptr_t mis = ((uintptr_t)x.ptr & 15u) / 4u;
    size_t head = mis ? 4 - mis : 0;
    if (head > n) head = n;
    const size_t n4 = (n - head) / 4;
    /* enough threads for full occupancy (2048 per SM), each with SUMSQ_BATCH float4s to go */
    const unsigned cap = 8u * (unsigned)cuda_of(be)->prop.multiProcessorCount;
    const unsigned grid = cuda_grid(n4 ? (n4 + SUMSQ_BATCH - 1) / SUMSQ_BATCH : 1, SUMSQ_THREADS, cap);
    double *parts = (double *)cuda_scratch(be, grid * sizeof(double), op);
    if (!parts) return;
    cuda_launch(grid, SUMSQ_THREADS, 0, cuda_stream(be), sumsq_kernel, parts, (const float *)x.ptr, head, n4, n);
    cuda_sum_parts(be, (double *)acc.ptr, parts, grid, 1);
    cuda_scratch_free(be, parts);
    cuda_after(be, op);
}

/* PyTorch's AdamW exactly as engine/optim/adamw.c writes it, operation by
 * operation with round-to-nearest intrinsics, so no multiply-add is fused and
 * the f32 result matches the CPU's bit for bit (the CPU build has no FMA):
 *   g = grad * grad_scale; p *= 1 - lr wd; m = b1 m + (1 - b1) g;
 *   v = b2 v + (1 - b2) g g; p -= (step_size m) / (sqrt(v) / sqrt(bc2) + eps). */
template <typename T>
__global__ void adamw_kernel(float *p, T *p_act, const float *g, float *m, float *v, size_t n, float b1, float b2,
                             float eps, float decay, float step_size, float inv_sqrt_bc2, float grad_scale) {
    const float c1 = __fsub_rn(1.0f, b1), c2 = __fsub_rn(1.0f, b2);
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const float gi = __fmul_rn(g[i], grad_scale);
        float pi = __fmul_rn(p[i], decay);
        const float mi = __fadd_rn(__fmul_rn(b1, m[i]), __fmul_rn(c1, gi));
        const float vi = __fadd_rn(__fmul_rn(b2, v[i]), __fmul_rn(__fmul_rn(c2, gi), gi));
        const float den = __fadd_rn(__fmul_rn(__fsqrt_rn(vi), inv_sqrt_bc2), eps);
        pi = __fsub_rn(pi, __fdiv_rn(__fmul_rn(step_size, mi), den));
        p[i] = pi;
        m[i] = mi;
        v[i] = vi;
        if (p_act) p_act[i] = from_f<T>(pi);
    }
}

extern "C" void cuda_adamw(gf_backend *be, gf_buf p, gf_buf p_act, gf_buf g, gf_buf m, gf_buf v, size_t n,
                           const gf_adamw *h) {
    const char *op = "adamw";
    if (!cuda_need(be, op, "p", p) || !cuda_need(be, op, "g", g) || !cuda_need(be, op, "m", m) ||
        !cuda_need(be, op, "v", v) || !cuda_want(be, op, "p", p, GF_F32) || !cuda_want(be, op, "g", g, GF_F32) ||
        !cuda_want(be, op, "m", m, GF_F32) || !cuda_want(be, op, "v", v, GF_F32) ||
        !cuda_want_float(be, op, "p_act", p_act))
        return;
    if (!h || h->step < 1) {
        be_set_error(be, "%s: step must be 1 or more", op);
        return;
    }
    if (!n) return;
    /* the scalars exactly as adamw.c computes them on the host */
    const double bc1 = 1.0 - pow(h->beta1, h->step), bc2 = 1.0 - pow(h->beta2, h->step);
    const float decay = 1.0f - h->lr * h->weight_decay;
    const float step_size = (float)(h->lr / bc1);
    const float inv_sqrt_bc2 = (float)(1.0 / sqrt(bc2));
    const unsigned cap = 8u * (unsigned)cuda_of(be)->prop.multiProcessorCount;
    const unsigned grid = cuda_grid(n, 256, cap);
    if (p_act.dtype == GF_BF16 && !gf_is_none(p_act))
        cuda_launch(grid, 256, 0, cuda_stream(be), adamw_kernel<bf16>, (float *)p.ptr, (bf16 *)p_act.ptr, (const float *)g.ptr,
                                                             (float *)m.ptr, (float *)v.ptr, n, h->beta1, h->beta2,
                                                             h->eps, decay, step_size, inv_sqrt_bc2, h->grad_scale);
    else
        cuda_launch(grid, 256, 0, cuda_stream(be), adamw_kernel<float>, (float *)p.ptr, (float *)p_act.ptr,
                                                              (const float *)g.ptr, (float *)m.ptr, (float *)v.ptr, n,
                                                              h->beta1, h->beta2, h->eps, decay, step_size,
                                                              inv_sqrt_bc2, h->grad_scale);
    cuda_after(be, op);
}
