/* Losses: cross-entropy and KL-with-temperature over rows of V logits, MSE and
 * the row-wise L2 alignment loss. Each adds F64 partial results (per row, per
 * row split, per block) to the F64 loss in a fixed order (cuda_sum_parts: the
 * same bits every run); gradients are written scaled by grad_scale and may
 * replace the input. Inputs and gradients may be F32 or BF16 independently
 * (chosen at run time).
 *
 * Cross-entropy and KL split each row of V logits over ceil(V / LOSS_SPAN)
 * blocks (a function of V only, so the result does not depend on the GPU or
 * on timing): a statistics kernel leaves each (row, split)'s (max, sum of
 * exp) pair, and the gradient kernel's blocks each combine their row's pairs
 * in a fixed order into the log-sum-exp and write their split's gradient. The
 * kernel boundary between the two orders every read of the logits (the target
 * logit included) before any write of a gradient that replaces them; inside
 * the gradient kernel an element is read and written by the same thread.
 * Threads move 16-byte packs of the input type (8 bf16 or 4 f32) when the
 * row's starts are 16-byte aligned, else the same packs one element at a
 * time, so the arithmetic (and the result's bits) is the same either way. */
#include <math.h>

#include "backend/cuda/cuda_ops.cuh"

#define LOSS_THREADS 256
#define LOSS_SPAN 8192 /* elements of a row per block (a multiple of every pack width) */
#define LOSS_BATCH 4   /* packs a thread loads before it uses them: loads in flight */

static inline int loss_splits(int V) { return (V + LOSS_SPAN - 1) / LOSS_SPAN; }

/* ------------------------------------------------------------- packs */

__device__ __forceinline__ bool dev_aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

/* W consecutive elements of T as floats: 16-, 32- or 8-byte accesses when vec
 * (the caller checked that p is aligned to them), else one element at a time. */
template <int W, typename T> __device__ __forceinline__ void ld_w(float (&f)[W], const T *p, bool vec) {
    constexpr int B = W * (int)sizeof(T), E16 = 16 / (int)sizeof(T);
    static_assert(B % 8 == 0, "a pack is 8, 16 or 32 bytes");
    if (vec) {
        if constexpr (B % 16 == 0) {
#pragma unroll
            for (int c = 0; c < B / 16; c++) {
                const uint4 u = ((const uint4 *)p)[c];
                const T *t = (const T *)&u;
#pragma unroll
                for (int k = 0; k < E16; k++) f[c * E16 + k] = to_f(t[k]);
            }
        } else {
            const uint2 u = *(const uint2 *)p;
            const T *t = (const T *)&u;
#pragma unroll
            for (int k = 0; k < W; k++) f[k] = to_f(t[k]);
        }
    } else {
#pragma unroll
        for (int k = 0; k < W; k++) f[k] = to_f(p[k]);
    }
}
template <int W, typename T> __device__ __forceinline__ void st_w(T *p, const float (&f)[W], bool vec) {
    constexpr int B = W * (int)sizeof(T), E16 = 16 / (int)sizeof(T);
    static_assert(B % 8 == 0, "a pack is 8, 16 or 32 bytes");
    if (vec) {
        if constexpr (B % 16 == 0) {
#pragma unroll
            for (int c = 0; c < B / 16; c++) {
                uint4 u;
                T *t = (T *)&u;
#pragma unroll
                for (int k = 0; k < E16; k++) t[k] = from_f<T>(f[c * E16 + k]);
                ((uint4 *)p)[c] = u;
            }
        } else {
            uint2 u;
            T *t = (T *)&u;
#pragma unroll
            for (int k = 0; k < W; k++) t[k] = from_f<T>(f[k]);
            *(uint2 *)p = u;
        }
    } else {
#pragma unroll
        for (int k = 0; k < W; k++) p[k] = from_f<T>(f[k]);
    }
}

/* Split `split` of a row of V in packs of W elements: the packs at [lo, vend)
 * (pack j to thread j % blockDim.x, LOSS_BATCH of them loaded before any is
 * used), then the elements [vend, hi) (the row's last V % W) one per thread.
 * load(P &p, i) fills p from element i on; use(i, const P &p) consumes it;
 * one(i) handles an element of the tail. */
template <int W, typename P, typename L, typename U, typename O>
__device__ __forceinline__ void for_split(int split, int V, L load, U use, O one) {
    const int lo = split * LOSS_SPAN, hi = min(V, lo + LOSS_SPAN), np = (hi - lo) / W, vend = lo + np * W;
    for (int b = threadIdx.x; b < np; b += LOSS_BATCH * (int)blockDim.x) {
        P x[LOSS_BATCH];
#pragma unroll
        for (int u = 0; u < LOSS_BATCH; u++) {
            const int j = b + u * (int)blockDim.x;
            if (j < np) load(x[u], lo + j * W);
        }
#pragma unroll
        for (int u = 0; u < LOSS_BATCH; u++) {
            const int j = b + u * (int)blockDim.x;
            if (j < np) use(lo + j * W, x[u]);
        }
    }
    for (int i = vend + (int)threadIdx.x; i < hi; i += (int)blockDim.x) one(i);
}
template <int W> struct pack1 {
    float x[W];
};
template <int W> struct pack2 {
    float s[W], t[W];
};

/* ------------------------------------------------------------- softmax normalizers */

/* (max, sum of exp(x - max)) pairs: combining two partial softmax normalizers. */
struct msum {
    float m, s;
};
__device__ __forceinline__ msum msum_add(msum a, msum b) {
    const float m = fmaxf(a.m, b.m);
    if (m == -INFINITY) return {m, a.s + b.s}; /* 0, or NaN from a NaN input */
    return {m, a.s * exp_approx(a.m - m) + b.s * exp_approx(b.m - m)};
}
/* Adds W values: one rescale per pack. -inf adds nothing; a NaN makes the sum NaN. */
template <int W> __device__ __forceinline__ msum msum_pack(msum a, const float (&x)[W]) {
    float m = a.m;
#pragma unroll
    for (int k = 0; k < W; k++) m = fmaxf(m, x[k]);
    if (m == -INFINITY) {
#pragma unroll
        for (int k = 0; k < W; k++)
            if (x[k] != x[k]) return {m, x[k]}; /* NaN */
        return a;
    }
    float s = a.s * exp_approx(a.m - m);
#pragma unroll
    for (int k = 0; k < W; k++) s += exp_approx(x[k] - m);
    return {m, s};
}
__device__ __forceinline__ msum msum_one(msum a, float x) {
    const float v[1] = {x};
    return msum_pack<1>(a, v);
}
/* A fixed shuffle tree over a warp; every lane gets the result. */
__device__ __forceinline__ msum warp_msum(msum v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        msum w = {__shfl_xor_sync(0xffffffffu, v.m, o), __shfl_xor_sync(0xffffffffu, v.s, o)};
        v = msum_add(v, w);
    }
    return v;
}
/* Block-wide combination; every thread gets the result. red: 32 entries of shared scratch. */
__device__ msum block_msum(msum v, msum *red) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    v = warp_msum(v);
    __syncthreads(); /* red may still be read by a previous call */
    if (lane == 0) red[warp] = v;
    __syncthreads();
    return warp_msum(lane < nw ? red[lane] : msum{-INFINITY, 0.0f});
}
/* The log-sum-exp of a row from its S split pairs part[j stride], combined in
 * a fixed order by warp 0; every thread gets it. out: one shared float. */
__device__ float row_lse(const msum *part, int S, int stride, float *out) {
    if (threadIdx.x < 32) {
        msum a = {-INFINITY, 0.0f};
        for (int j = threadIdx.x; j < S; j += 32) a = msum_add(a, part[(size_t)j * stride]);
        a = warp_msum(a);
        if (threadIdx.x == 0) *out = a.m + logf(a.s);
    }
    __syncthreads();
    return *out;
}

/* ------------------------------------------------------------- cross-entropy */

/* Block (row, split) of blockIdx.x = row S + split: part[row S + split] = the
 * split's (max, sum); split 0 also keeps logits[tgt] in zt[row] (NaN for a
 * target past the row). Skipped rows (target < 0) are left alone. */
template <typename TL>
__global__ void ce_stats_kernel(msum *part, float *zt, const TL *logits, const int *targets, int V, int S) {
    __shared__ msum red[32];
    constexpr int W = 16 / (int)sizeof(TL);
    const int row = blockIdx.x / S, split = blockIdx.x % S, tgt = targets[row];
    if (tgt < 0) return; /* the whole block */
    const TL *z = logits + (size_t)row * V;
    const bool vec = dev_aligned16(z);
    msum a = {-INFINITY, 0.0f};
    for_split<W, pack1<W>>(
        split, V, [&](pack1<W> &p, int i) { ld_w<W>(p.x, z + i, vec); },
        [&](int, const pack1<W> &p) { a = msum_pack<W>(a, p.x); }, [&](int i) { a = msum_one(a, to_f(z[i])); });
    a = block_msum(a, red);
    if (threadIdx.x == 0) {
        part[blockIdx.x] = a;
        if (split == 0) zt[row] = tgt < V ? to_f(z[tgt]) : NAN;
    }
}

/* Block (row, split), S_grid splits per row (S with a gradient, 1 without):
 * the row's log-sum-exp from its S pairs; split 0 writes the row's loss
 * lse - logits[tgt] (0 for a skipped row); with a gradient, the split's
 * grad_scale (softmax - onehot(tgt)) (zeros for a skipped row). */
template <typename TL, typename TD>
__global__ void ce_grad_kernel(double *rows, TD *dlogits, const TL *logits, const msum *part, const float *zt,
                               const int *targets, int V, int S, int S_grid, float grad_scale) {
    __shared__ float lse_s;
    constexpr int W = 16 / (int)sizeof(TL);
    const int row = blockIdx.x / S_grid, split = blockIdx.x % S_grid, tgt = targets[row];
    const TL *z = logits + (size_t)row * V;
    TD *d = dlogits ? dlogits + (size_t)row * V : nullptr;
    const bool vec = dev_aligned16(z) && dev_aligned16(d);
    if (tgt < 0) { /* skipped row: no loss, zero gradient */
        if (split == 0 && threadIdx.x == 0) rows[row] = 0.0;
        if (d)
            for_split<W, pack1<W>>(
                split, V,
                [&](pack1<W> &p, int) {
#pragma unroll
                    for (int k = 0; k < W; k++) p.x[k] = 0.0f;
                },
                [&](int i, const pack1<W> &p) { st_w<W>(d + i, p.x, vec); },
                [&](int i) { d[i] = from_f<TD>(0.0f); });
        return;
    }
    const float lse = row_lse(part + (size_t)row * S, S, 1, &lse_s);
    if (split == 0 && threadIdx.x == 0) rows[row] = (double)lse - (double)zt[row];
    if (!d) return;
    for_split<W, pack1<W>>(
        split, V, [&](pack1<W> &p, int i) { ld_w<W>(p.x, z + i, vec); },
        [&](int i, const pack1<W> &p) {
            float g[W];
#pragma unroll
            for (int k = 0; k < W; k++) g[k] = grad_scale * (exp_approx(p.x[k] - lse) - (i + k == tgt ? 1.0f : 0.0f));
            st_w<W>(d + i, g, vec);
        },
        [&](int i) { d[i] = from_f<TD>(grad_scale * (exp_approx(to_f(z[i]) - lse) - (i == tgt ? 1.0f : 0.0f))); });
}

template <typename TL, typename TD>
static void ce_launch(gf_backend *be, double *rows, msum *part, float *zt, TD *dlogits, const TL *logits,
                      const int *targets, int N, int V, float grad_scale) {
    const int S = loss_splits(V), S_grid = dlogits ? S : 1;
    cuda_launch((unsigned)N * S, LOSS_THREADS, 0, cuda_stream(be), ce_stats_kernel<TL>, part, zt, logits, targets, V,
                S);
    cuda_launch((unsigned)N * S_grid, LOSS_THREADS, 0, cuda_stream(be), ce_grad_kernel<TL, TD>, rows, dlogits, logits,
                (const msum *)part, (const float *)zt, targets, V, S, S_grid, grad_scale);
}

/* Scratch for N rows of S splits: the rows' F64 results first, then the pairs and floats. */
static bool loss_scratch(gf_backend *be, const char *op, size_t rows_n, size_t pairs, size_t floats, void **base,
                         double **rows, msum **part, float **fl) {
    const size_t b_rows = rows_n * sizeof(double), b_part = pairs * sizeof(msum);
    *base = cuda_scratch(be, b_rows + b_part + floats * sizeof(float), op);
    if (!*base) return false;
    *rows = (double *)*base;
    *part = (msum *)((char *)*base + b_rows);
    *fl = (float *)((char *)*base + b_rows + b_part);
    return true;
}

static bool loss_grid_fits(gf_backend *be, const char *op, int N, int V) {
    if ((size_t)N * (size_t)loss_splits(V) > 0x7fffffffu) {
        be_set_error(be, "%s: %d rows of %d are too many blocks", op, N, V);
        return false;
    }
    return true;
}

extern "C" void cuda_cross_entropy(gf_backend *be, gf_buf loss, gf_buf dlogits, gf_buf logits, gf_buf targets, int N,
                                   int V, float grad_scale) {
    const char *op = "cross_entropy";
    if (!cuda_need(be, op, "loss", loss) || !cuda_need(be, op, "logits", logits) ||
        !cuda_need(be, op, "targets", targets) || !cuda_want(be, op, "loss", loss, GF_F64) ||
        !cuda_want_float(be, op, "dlogits", dlogits) || !cuda_want_float(be, op, "logits", logits) ||
        !cuda_want(be, op, "targets", targets, GF_I32))
        return;
    if (N <= 0 || V <= 0 || !loss_grid_fits(be, op, N, V)) return;
    const size_t S = (size_t)loss_splits(V);
    void *base;
    double *rows;
    msum *part;
    float *zt;
    if (!loss_scratch(be, op, (size_t)N, (size_t)N * S, (size_t)N, &base, &rows, &part, &zt)) return;
    const int *tg = (const int *)targets.ptr;
    const bool lbf = logits.dtype == GF_BF16, dbf = dlogits.dtype == GF_BF16;
    if (lbf && dbf) ce_launch(be, rows, part, zt, (bf16 *)dlogits.ptr, (const bf16 *)logits.ptr, tg, N, V, grad_scale);
    else if (lbf) ce_launch(be, rows, part, zt, (float *)dlogits.ptr, (const bf16 *)logits.ptr, tg, N, V, grad_scale);
    else if (dbf) ce_launch(be, rows, part, zt, (bf16 *)dlogits.ptr, (const float *)logits.ptr, tg, N, V, grad_scale);
    else ce_launch(be, rows, part, zt, (float *)dlogits.ptr, (const float *)logits.ptr, tg, N, V, grad_scale);
    cuda_sum_parts(be, (double *)loss.ptr, rows, (size_t)N, 1);
    cuda_scratch_free(be, base);
    cuda_after(be, op);
}

/* ------------------------------------------------------------- KL with temperature */

/* tau^2 KL(p_t || p_s), p = softmax(z / tau); ds = grad_scale tau (p_s - p_t).
 * Packs of the student's type; the teacher's W values are 8, 16 or 32 bytes. */
template <typename TS> __host__ __device__ constexpr int kl_pack() { return 16 / (int)sizeof(TS); }

/* Block (row, split): part[2 (row S + split)] = the student's (max, sum) of
 * z / tau, part[2 (row S + split) + 1] the teacher's. */
template <typename TS, typename TT>
__global__ void kl_stats_kernel(msum *part, const TS *s, const TT *t, int V, int S, float inv_tau) {
    __shared__ msum red[32];
    constexpr int W = kl_pack<TS>();
    const int row = blockIdx.x / S, split = blockIdx.x % S;
    const TS *zs = s + (size_t)row * V;
    const TT *zt = t + (size_t)row * V;
    const bool vec = dev_aligned16(zs) && dev_aligned16(zt);
    msum as = {-INFINITY, 0.0f}, at = {-INFINITY, 0.0f};
    for_split<W, pack2<W>>(
        split, V,
        [&](pack2<W> &p, int i) {
            ld_w<W>(p.s, zs + i, vec);
            ld_w<W>(p.t, zt + i, vec);
        },
        [&](int, const pack2<W> &p) {
            float ys[W], yt[W];
#pragma unroll
            for (int k = 0; k < W; k++) ys[k] = p.s[k] * inv_tau, yt[k] = p.t[k] * inv_tau;
            as = msum_pack<W>(as, ys);
            at = msum_pack<W>(at, yt);
        },
        [&](int i) {
            as = msum_one(as, to_f(zs[i]) * inv_tau);
            at = msum_one(at, to_f(zt[i]) * inv_tau);
        });
    as = block_msum(as, red);
    at = block_msum(at, red);
    if (threadIdx.x == 0) {
        part[2 * (size_t)blockIdx.x] = as;
        part[2 * (size_t)blockIdx.x + 1] = at;
    }
}

/* Block (row, split): both log-sum-exps of the row; kl[row S + split] = tau^2
 * sum over the split of p_t (y_t - y_s) (y = z / tau - lse, in F64); with a
 * gradient, ds = grad_scale tau (p_s - p_t) over the split. */
template <typename TS, typename TT, typename TD>
__global__ void kl_grad_kernel(double *kl, TD *ds, const TS *s, const TT *t, const msum *part, int V, int S,
                               float tau, float grad_scale) {
    __shared__ float lse_s[2];
    __shared__ double red[32];
    constexpr int W = kl_pack<TS>();
    const int row = blockIdx.x / S, split = blockIdx.x % S;
    const TS *zs = s + (size_t)row * V;
    const TT *zt = t + (size_t)row * V;
    TD *d = ds ? ds + (size_t)row * V : nullptr;
    const bool vec = dev_aligned16(zs) && dev_aligned16(zt) && dev_aligned16(d);
    const float inv = 1.0f / tau, c = grad_scale * tau;
    const msum *rp = part + 2 * (size_t)row * S;
    const float ls = row_lse(rp, S, 2, &lse_s[0]), lt = row_lse(rp + 1, S, 2, &lse_s[1]);
    double acc = 0;
    auto term = [&](float xs, float xt, float &g) {
        const float ys = xs * inv - ls, yt = xt * inv - lt;
        const float ps = exp_approx(ys), pt = exp_approx(yt);
        if (pt > 0) acc += (double)pt * ((double)yt - (double)ys);
        g = c * (ps - pt);
    };
    for_split<W, pack2<W>>(
        split, V,
        [&](pack2<W> &p, int i) {
            ld_w<W>(p.s, zs + i, vec);
            ld_w<W>(p.t, zt + i, vec);
        },
        [&](int i, const pack2<W> &p) {
            float g[W];
#pragma unroll
            for (int k = 0; k < W; k++) term(p.s[k], p.t[k], g[k]);
            if (d) st_w<W>(d + i, g, vec);
        },
        [&](int i) {
            float g;
            term(to_f(zs[i]), to_f(zt[i]), g);
            if (d) d[i] = from_f<TD>(g);
        });
    acc = block_sum(acc, red);
    if (threadIdx.x == 0) kl[blockIdx.x] = (double)tau * tau * acc;
}

template <typename TS, typename TT, typename TD>
static void kl_launch(gf_backend *be, double *kl, msum *part, TD *ds, const TS *s, const TT *t, int N, int V,
                      float tau, float grad_scale) {
    const int S = loss_splits(V);
    cuda_launch((unsigned)N * S, LOSS_THREADS, 0, cuda_stream(be), kl_stats_kernel<TS, TT>, part, s, t, V, S,
                1.0f / tau);
    cuda_launch((unsigned)N * S, LOSS_THREADS, 0, cuda_stream(be), kl_grad_kernel<TS, TT, TD>, kl, ds, s, t,
                (const msum *)part, V, S, tau, grad_scale);
}
template <typename TS, typename TT>
static void kl_launch_d(gf_backend *be, double *kl, msum *part, gf_buf ds, const TS *s, const TT *t, int N, int V,
                        float tau, float grad_scale) {
    if (ds.dtype == GF_BF16) kl_launch(be, kl, part, (bf16 *)ds.ptr, s, t, N, V, tau, grad_scale);
    else kl_launch(be, kl, part, (float *)ds.ptr, s, t, N, V, tau, grad_scale);
}
template <typename TS>
static void kl_launch_t(gf_backend *be, double *kl, msum *part, gf_buf ds, const TS *s, gf_buf t, int N, int V,
                        float tau, float grad_scale) {
    if (t.dtype == GF_BF16) kl_launch_d(be, kl, part, ds, s, (const bf16 *)t.ptr, N, V, tau, grad_scale);
    else kl_launch_d(be, kl, part, ds, s, (const float *)t.ptr, N, V, tau, grad_scale);
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
    if (N <= 0 || V <= 0 || !loss_grid_fits(be, op, N, V)) return;
    const size_t parts = (size_t)N * (size_t)loss_splits(V);
    void *base;
    double *kl;
    msum *part;
    float *unused;
    if (!loss_scratch(be, op, parts, 2 * parts, 0, &base, &kl, &part, &unused)) return;
    if (student.dtype == GF_BF16)
        kl_launch_t(be, kl, part, dstudent, (const bf16 *)student.ptr, teacher, N, V, tau, grad_scale);
    else kl_launch_t(be, kl, part, dstudent, (const float *)student.ptr, teacher, N, V, tau, grad_scale);
    cuda_sum_parts(be, (double *)loss.ptr, kl, parts, 1);
    cuda_scratch_free(be, base);
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
