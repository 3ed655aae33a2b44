/* Element-wise ops: embedding, SwiGLU (+ backward), add, scale.
 * Memory-bound: 16-byte packs where every pointer allows (CUDA_EW_LAUNCH),
 * fp32 arithmetic, ACT storage (bf16, or f32 in checking mode). */
#include "backend/cuda/cuda_ops.cuh"

#define STRIDE ((size_t)gridDim.x * blockDim.x)
#define FIRST ((size_t)blockIdx.x * blockDim.x + threadIdx.x)

/* ------------------------------------------------------------- embedding */

/* x[N, D] <- E[tokens[n], :]; items are W-element pieces of rows (D % W == 0). */
template <int W, typename T>
__global__ void embedding_kernel(size_t base, size_t items, T *x, const T *E, const int *tokens, int D) {
    for (size_t it = FIRST; it < items; it += STRIDE) {
        const size_t e = base + it * W, n = e / D, d = e % D;
        const T *src = E + (size_t)tokens[n] * D + d;
        float f[W];
        ld_pack<W>(f, src);
        st_pack<W>(x + e, f);
    }
}

extern "C" void cuda_embedding(gf_backend *be, gf_buf x, gf_buf E, gf_buf tokens, int N, int D) {
    const char *op = "embedding";
    if (!cuda_need(be, op, "x", x) || !cuda_need(be, op, "E", E) || !cuda_need(be, op, "tokens", tokens) ||
        !cuda_want(be, op, "x", x, be->act) || !cuda_want(be, op, "E", E, be->act) ||
        !cuda_want(be, op, "tokens", tokens, GF_I32))
        return;
    const size_t n = (size_t)N * D;
    if (!n) return;
    const int vn = be->act == GF_BF16 ? 8 : 4;
    const bool vec = D % vn == 0 && cuda_aligned16(x.ptr) && cuda_aligned16(E.ptr);
    if (be->act == GF_BF16)
        CUDA_EW_LAUNCH(be, embedding_kernel, bf16, n, vec, (bf16 *)x.ptr, (const bf16 *)E.ptr,
                       (const int *)tokens.ptr, D);
    else
        CUDA_EW_LAUNCH(be, embedding_kernel, float, n, vec, (float *)x.ptr, (const float *)E.ptr,
                       (const int *)tokens.ptr, D);
    cuda_after(be, op);
}

/* embedding_backward: cuda_embedding_bwd.cu (a fixed order, with CUB). */

/* ------------------------------------------------------------- SwiGLU */

template <int W, typename T>
__global__ void swiglu_kernel(size_t base, size_t items, T *out, const T *gate, const T *up) {
    for (size_t it = FIRST; it < items; it += STRIDE) {
        const size_t e = base + it * W;
        float g[W], u[W];
        ld_pack<W>(g, gate + e);
        ld_pack<W>(u, up + e);
#pragma unroll
        for (int i = 0; i < W; i++) g[i] = g[i] / (1.0f + expf(-g[i])) * u[i];
        st_pack<W>(out + e, g);
    }
}

extern "C" void cuda_swiglu(gf_backend *be, gf_buf out, gf_buf gate, gf_buf up, size_t n) {
    const char *op = "swiglu";
    if (!cuda_need(be, op, "out", out) || !cuda_need(be, op, "gate", gate) || !cuda_need(be, op, "up", up) ||
        !cuda_want(be, op, "out", out, be->act) || !cuda_want(be, op, "gate", gate, be->act) ||
        !cuda_want(be, op, "up", up, be->act))
        return;
    if (!n) return;
    const bool vec = cuda_aligned16(out.ptr) && cuda_aligned16(gate.ptr) && cuda_aligned16(up.ptr);
    if (be->act == GF_BF16)
        CUDA_EW_LAUNCH(be, swiglu_kernel, bf16, n, vec, (bf16 *)out.ptr, (const bf16 *)gate.ptr, (const bf16 *)up.ptr);
    else
        CUDA_EW_LAUNCH(be, swiglu_kernel, float, n, vec, (float *)out.ptr, (const float *)gate.ptr,
                       (const float *)up.ptr);
    cuda_after(be, op);
}

/* dgate = dout up s (1 + g (1 - s)), dup = dout silu(g), s = sigmoid(g); either may be null. */
template <int W, typename T>
__global__ void swiglu_backward_kernel(size_t base, size_t items, T *dgate, T *dup, const T *dout, const T *gate,
                                       const T *up) {
    for (size_t it = FIRST; it < items; it += STRIDE) {
        const size_t e = base + it * W;
        float g[W], u[W], d[W], dg[W], du[W];
        ld_pack<W>(g, gate + e);
        ld_pack<W>(u, up + e);
        ld_pack<W>(d, dout + e);
#pragma unroll
        for (int i = 0; i < W; i++) {
            const float s = 1.0f / (1.0f + expf(-g[i]));
            du[i] = d[i] * (g[i] * s);
            dg[i] = d[i] * u[i] * s * (1.0f + g[i] * (1.0f - s));
        }
        if (dup) st_pack<W>(dup + e, du);
        if (dgate) st_pack<W>(dgate + e, dg);
    }
}

extern "C" void cuda_swiglu_backward(gf_backend *be, gf_buf dgate, gf_buf dup, gf_buf dout, gf_buf gate, gf_buf up,
                                     size_t n) {
    const char *op = "swiglu_backward";
    if (!cuda_need(be, op, "dout", dout) || !cuda_need(be, op, "gate", gate) || !cuda_need(be, op, "up", up) ||
        !cuda_want(be, op, "dgate", dgate, be->act) || !cuda_want(be, op, "dup", dup, be->act) ||
        !cuda_want(be, op, "dout", dout, be->act) || !cuda_want(be, op, "gate", gate, be->act) ||
        !cuda_want(be, op, "up", up, be->act))
        return;
    if (!n || (gf_is_none(dgate) && gf_is_none(dup))) return;
    const bool vec = cuda_aligned16(dgate.ptr) && cuda_aligned16(dup.ptr) && cuda_aligned16(dout.ptr) &&
                     cuda_aligned16(gate.ptr) && cuda_aligned16(up.ptr);
    if (be->act == GF_BF16)
        CUDA_EW_LAUNCH(be, swiglu_backward_kernel, bf16, n, vec, (bf16 *)dgate.ptr, (bf16 *)dup.ptr,
                       (const bf16 *)dout.ptr, (const bf16 *)gate.ptr, (const bf16 *)up.ptr);
    else
        CUDA_EW_LAUNCH(be, swiglu_backward_kernel, float, n, vec, (float *)dgate.ptr, (float *)dup.ptr,
                       (const float *)dout.ptr, (const float *)gate.ptr, (const float *)up.ptr);
    cuda_after(be, op);
}

/* ------------------------------------------------------------- add, scale */

template <int W, typename T> __global__ void add_kernel(size_t base, size_t items, T *y, const T *x) {
    for (size_t it = FIRST; it < items; it += STRIDE) {
        const size_t e = base + it * W;
        float a[W], b[W];
        ld_pack<W>(a, y + e);
        ld_pack<W>(b, x + e);
#pragma unroll
        for (int i = 0; i < W; i++) a[i] += b[i];
        st_pack<W>(y + e, a);
    }
}

extern "C" void cuda_add(gf_backend *be, gf_buf y, gf_buf x, size_t n) {
    const char *op = "add";
    if (!cuda_need(be, op, "y", y) || !cuda_need(be, op, "x", x) || !cuda_want(be, op, "y", y, be->act) ||
        !cuda_want(be, op, "x", x, be->act))
        return;
    if (!n) return;
    const bool vec = cuda_aligned16(y.ptr) && cuda_aligned16(x.ptr);
    if (be->act == GF_BF16)
        CUDA_EW_LAUNCH(be, add_kernel, bf16, n, vec, (bf16 *)y.ptr, (const bf16 *)x.ptr);
    else
        CUDA_EW_LAUNCH(be, add_kernel, float, n, vec, (float *)y.ptr, (const float *)x.ptr);
    cuda_after(be, op);
}

template <int W, typename T> __global__ void scale_kernel(size_t base, size_t items, T *x, float s) {
    for (size_t it = FIRST; it < items; it += STRIDE) {
        const size_t e = base + it * W;
        float a[W];
        ld_pack<W>(a, x + e);
#pragma unroll
        for (int i = 0; i < W; i++) a[i] *= s;
        st_pack<W>(x + e, a);
    }
}

/* be_scale takes any float buffer: ACT activations or F32 gradients. */
extern "C" void cuda_scale(gf_backend *be, gf_buf x, size_t n, float s) {
    const char *op = "scale";
    if (!cuda_need(be, op, "x", x) || !cuda_want_float(be, op, "x", x)) return;
    if (!n) return;
    const bool vec = cuda_aligned16(x.ptr);
    if (x.dtype == GF_BF16)
        CUDA_EW_LAUNCH(be, scale_kernel, bf16, n, vec, (bf16 *)x.ptr, s);
    else
        CUDA_EW_LAUNCH(be, scale_kernel, float, n, vec, (float *)x.ptr, s);
    cuda_after(be, op);
}
