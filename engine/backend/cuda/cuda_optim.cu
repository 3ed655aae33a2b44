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
 *   v = b2 v + (1 - b2) g g; p -= (step_size m) / (sqrt(v) / sqrt(bc2) + eps).
 * adamw_one is one element of it (the packed and the scalar loop share it). */
struct adamw_consts {
    float b1, b2, c1, c2, eps, decay, step_size, inv_sqrt_bc2, grad_scale;
};
__device__ __forceinline__ void adamw_one(const adamw_consts &k, float g, float &p, float &m, float &v) {
    const float gi = __fmul_rn(g, k.grad_scale);
    float pi = __fmul_rn(p, k.decay);
    m = __fadd_rn(__fmul_rn(k.b1, m), __fmul_rn(k.c1, gi));
    v = __fadd_rn(__fmul_rn(k.b2, v), __fmul_rn(__fmul_rn(k.c2, gi), gi));
    const float den = __fadd_rn(__fmul_rn(__fsqrt_rn(v), k.inv_sqrt_bc2), k.eps);
    p = __fsub_rn(pi, __fdiv_rn(__fmul_rn(k.step_size, m), den));
}

/* Elements base + it * W for it < items; W = 4: 16-byte loads and stores of p, g, m, v (the
 * caller checked alignment) so that each thread keeps 64 bytes in flight, which the bandwidth
 * needs; the activation copy p_act (bf16 or f32) in the same pass. */
template <int W, typename T>
__global__ void adamw_kernel(size_t base, size_t items, float *p, T *p_act, const float *g, float *m, float *v,
                             adamw_consts k) {
    for (size_t it = (size_t)blockIdx.x * blockDim.x + threadIdx.x; it < items; it += (size_t)gridDim.x * blockDim.x) {
        const size_t e = base + it * W;
        float pp[W], gg[W], mm[W], vv[W];
        ld_pack<W>(pp, p + e);
        ld_pack<W>(gg, g + e);
        ld_pack<W>(mm, m + e);
        ld_pack<W>(vv, v + e);
#pragma unroll
        for (int i = 0; i < W; i++) adamw_one(k, gg[i], pp[i], mm[i], vv[i]);
        st_pack<W>(p + e, pp);
        st_pack<W>(m + e, mm);
        st_pack<W>(v + e, vv);
        if (p_act) {
            if constexpr (W == 4 && sizeof(T) == 2) { /* 4 bf16: one 8-byte store */
                uint2 u;
                T *t = (T *)&u;
#pragma unroll
                for (int i = 0; i < W; i++) t[i] = from_f<T>(pp[i]);
                *(uint2 *)(p_act + e) = u;
            } else {
                st_pack<W>(p_act + e, pp);
            }
        }
    }
}

/* Packs of 4 while vec (every pointer aligned), then the tail one element at a time. */
template <typename T>
static void adamw_launch(gf_backend *be, float *P, T *A, const float *G, float *M, float *V, size_t n, bool vec,
                         const adamw_consts &k) {
    const size_t n4 = vec ? n / 4 : 0, done = n4 * 4;
    const unsigned cap = 16u * (unsigned)cuda_of(be)->prop.multiProcessorCount;
    if (n4) cuda_launch(cuda_grid(n4, 256, cap), 256, 0, cuda_stream(be), adamw_kernel<4, T>, (size_t)0, n4, P, A, G, M, V, k);
    if (n > done)
        cuda_launch(cuda_grid(n - done, 256, cap), 256, 0, cuda_stream(be), adamw_kernel<1, T>, done, n - done, P, A, G,
                    M, V, k);
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
    const adamw_consts k = {h->beta1, h->beta2,  1.0f - h->beta1, 1.0f - h->beta2, h->eps,
                            decay,    step_size, inv_sqrt_bc2,    h->grad_scale};
    /* packs of 4 while every pointer allows (p_act: 8 bytes for bf16, 16 for f32), then the tail */
    const bool bf = p_act.dtype == GF_BF16 && !gf_is_none(p_act);
    const bool act_ok = gf_is_none(p_act) || (bf ? ((uintptr_t)p_act.ptr & 7u) == 0 : cuda_aligned16(p_act.ptr));
    const bool vec = act_ok && cuda_aligned16(p.ptr) && cuda_aligned16(g.ptr) && cuda_aligned16(m.ptr) &&
                     cuda_aligned16(v.ptr);
    float *P = (float *)p.ptr, *M = (float *)m.ptr, *V = (float *)v.ptr;
    const float *G = (const float *)g.ptr;
    if (bf) adamw_launch(be, P, (bf16 *)p_act.ptr, G, M, V, n, vec, k);
    else adamw_launch(be, P, (float *)p_act.ptr, G, M, V, n, vec, k); /* p_act may be null: no copy */
    cuda_after(be, op);
}
