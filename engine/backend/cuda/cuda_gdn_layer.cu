/* The GDN layer's element-wise work on CUDA (be_gdn_prep, be_gdn_prep_backward,
 * be_gdn_gated_norm, be_gdn_gated_norm_backward): the optional short causal
 * conv with its carried tail, silu, per-head L2 norms, decay and write gates,
 * gated RMSNorm, and their gradients. Column layout of proj (engine/gdn/gdn.h):
 * [q | k | v | g | a | b] = [H dk | H dk | H dv | H dv | H | H]. Parameter
 * gradients are summed in a fixed order (two passes, no atomics), so repeated
 * runs give identical bits. */
#include "backend/cuda/cuda_gdn.h"
#include "backend/cuda/cuda_gdn_host.cuh"

#include <initializer_list>
#include <utility>

#define GDN_K 4         /* GDN_CONV_K (engine/gdn/gdn.h) */
#define GDN_L2_EPS 1e-6f /* GDN_QK_L2_EPS */
#define GDN_ROWS_PER_PART 256

struct GdnCols {
    int q, k, v, g, a, b, width, qkv;
};

static GdnCols gdn_cols(const gf_gdn_dims *d) {
    GdnCols c;
    int hk = d->H * d->dk, hv = d->H * d->dv;
    c.q = 0;
    c.k = hk;
    c.v = 2 * hk;
    c.g = 2 * hk + hv;
    c.a = 2 * hk + 2 * hv;
    c.b = c.a + d->H;
    c.width = c.b + d->H;
    c.qkv = 2 * hk + hv;
    return c;
}

__device__ __forceinline__ float sigmoidf_(float x) { return 1.f / (1.f + expf(-x)); }
__device__ __forceinline__ float siluf_(float x) { return x * sigmoidf_(x); }
__device__ __forceinline__ float silu_grad_(float x) {
    float s = sigmoidf_(x);
    return s * (1.f + x * (1.f - s));
}
__device__ __forceinline__ float softplusf_(float x) { return x > 20.f ? x : log1pf(expf(x)); }

/* ------------------------------------------------------------------ reductions */

/* part[ceil(R / GDN_ROWS_PER_PART), M] = sums of consecutive row blocks of
 * in[R, M] whose rows are `stride` elements apart (the first M columns of a
 * wider matrix when stride > M). */
template <typename T>
__global__ void gdn_colsum_part_kernel(float *__restrict__ part, const T *__restrict__ in, int R, int M, int stride) {
    int m = blockIdx.x * blockDim.x + threadIdx.x, r0 = blockIdx.y * GDN_ROWS_PER_PART;
    if (m >= M) return;
    int r1 = r0 + GDN_ROWS_PER_PART < R ? r0 + GDN_ROWS_PER_PART : R;
    float t = 0;
    for (int r = r0; r < r1; r++) t += to_f(in[(size_t)r * stride + m]);
    part[(size_t)blockIdx.y * M + m] = t;
}

/* out[m] += sum_r part[r, m], rows in order. */
__global__ void gdn_colsum_add_kernel(float *__restrict__ out, const float *__restrict__ part, int R, int M) {
    int m = blockIdx.x * blockDim.x + threadIdx.x;
    if (m >= M) return;
    float t = 0;
    for (int r = 0; r < R; r++) t += part[(size_t)r * M + m];
    out[m] += t;
}

/* out[M] (F32) += column sums of in[R, M] (rows `stride` apart) in a fixed order. */
template <typename T>
static void colsum_add_strided(gf_backend *be, float *out, const T *in, int R, int M, int stride, const char *op) {
    cudaStream_t st = cuda_stream(be);
    (void)st;
    int nb = (R + GDN_ROWS_PER_PART - 1) / GDN_ROWS_PER_PART;
    void *part = nullptr;
    if (!gdn_scratch(be, &part, (size_t)nb * M * sizeof(float), op)) return;
    GDN_LAUNCH(gdn_colsum_part_kernel<T>, dim3((M + 127) / 128, nb), dim3(128), 0, st, (float *)part, in, R, M, stride);
    CUDA_CHECK_LAUNCH(be, op);
    GDN_LAUNCH(gdn_colsum_add_kernel, dim3((M + 127) / 128), dim3(128), 0, st, out, (const float *)part, nb, M);
    CUDA_CHECK_LAUNCH(be, op);
    gdn_scratch_free(be, part);
}

static void colsum_add(gf_backend *be, float *out, const float *in, int R, int M, const char *op) {
    colsum_add_strided<float>(be, out, in, R, M, M, op);
}

/* ------------------------------------------------------------------ prep forward */

/* qkv_pre[n, ch] = sum_i w[ch, i] proj[t - 3 + i, ch] (earlier calls' tokens from
 * tail, zero before the sequence start), or a copy when there is no conv. */
template <typename T>
__global__ void gdn_conv_kernel(int N, int Tn, GdnCols pc, const T *__restrict__ proj, const T *__restrict__ w,
                                const T *__restrict__ tail, T *__restrict__ out) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (size_t)N * pc.qkv) return;
    int n = (int)(i / pc.qkv), ch = (int)(i % pc.qkv), t = n % Tn, b = n / Tn;
    if (!w) {
        out[i] = proj[(size_t)n * pc.width + ch];
        return;
    }
    float acc = 0;
    for (int j = 0; j < GDN_K; j++) {
        int tau = t - (GDN_K - 1 - j);
        float x = 0;
        if (tau >= 0)
            x = to_f(proj[((size_t)b * Tn + tau) * pc.width + ch]);
        else if (tail)
            x = to_f(tail[((size_t)b * (GDN_K - 1) + (GDN_K - 1 + tau)) * pc.qkv + ch]);
        acc += to_f(w[(size_t)ch * GDN_K + j]) * x;
    }
    out[i] = from_f<T>(acc);
}

/* tail[b] <- the q|k|v projections of the last K-1 tokens (from this call and,
 * when T < K-1, from the old tail). One thread per (b, channel): reads all, then writes. */
template <typename T>
__global__ void gdn_tail_kernel(int B, int Tn, GdnCols pc, const T *__restrict__ proj, T *__restrict__ tail) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (size_t)B * pc.qkv) return;
    int b = (int)(i / pc.qkv), ch = (int)(i % pc.qkv);
    T vals[GDN_K - 1];
    T *tb = tail + (size_t)b * (GDN_K - 1) * pc.qkv;
    for (int j = 0; j < GDN_K - 1; j++) {
        int tau = Tn - (GDN_K - 1) + j;
        vals[j] = tau >= 0 ? proj[((size_t)b * Tn + tau) * pc.width + ch] : tb[(size_t)(GDN_K - 1 + tau) * pc.qkv + ch];
    }
    for (int j = 0; j < GDN_K - 1; j++) tb[(size_t)j * pc.qkv + ch] = vals[j];
}

/* One warp per (token, head): q, k = l2norm(silu(.)), v = silu(.), g, beta. */
template <typename T>
__global__ void gdn_gates_kernel(int N, int H, int dk, int dv, GdnCols pc, const T *__restrict__ pre,
                                 const T *__restrict__ proj, const T *__restrict__ a_log, const T *__restrict__ dt_bias,
                                 T *__restrict__ q, T *__restrict__ k, T *__restrict__ v, float *__restrict__ g,
                                 float *__restrict__ beta) {
    int row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5), lane = threadIdx.x & 31;
    if (row >= N * H) return; /* whole warps leave together */
    int n = row / H, h = row % H;
    const T *pr = pre + (size_t)n * pc.qkv;
    for (int which = 0; which < 2; which++) {
        const T *in = pr + (which ? pc.k : pc.q) + h * dk;
        T *out = (which ? k : q) + (size_t)row * dk;
        float x[GDN_MAX_D / 32], ss = 0;
#pragma unroll
        for (int u = 0; u < GDN_MAX_D / 32; u++) {
            int j = lane + 32 * u;
            x[u] = j < dk ? siluf_(to_f(in[j])) : 0.f;
            ss += x[u] * x[u];
        }
        float inv = rsqrtf(warp_sum(ss) + GDN_L2_EPS);
#pragma unroll
        for (int u = 0; u < GDN_MAX_D / 32; u++) {
            int j = lane + 32 * u;
            if (j < dk) out[j] = from_f<T>(x[u] * inv);
        }
    }
    for (int j = lane; j < dv; j += 32) v[(size_t)row * dv + j] = from_f<T>(siluf_(to_f(pr[pc.v + h * dv + j])));
    if (lane == 0) {
        const T *pj = proj + (size_t)n * pc.width;
        g[row] = -expf(to_f(a_log[h])) * softplusf_(to_f(pj[pc.a + h]) + to_f(dt_bias[h]));
        beta[row] = sigmoidf_(to_f(pj[pc.b + h]));
    }
}

static bool dims_ok(gf_backend *be, const gf_gdn_dims *d, const char *op) {
    if (d->B <= 0 || d->T <= 0 || d->H <= 0 || d->dk <= 0 || d->dv <= 0 || d->dk > GDN_MAX_D || d->dv > GDN_MAX_D) {
        be_set_error(be, "%s: bad sizes (B %d, T %d, H %d, dk %d, dv %d; head dims up to %d)", op, d->B, d->T, d->H,
                     d->dk, d->dv, GDN_MAX_D);
        return false;
    }
    if (!(d->norm_eps > 0)) {
        be_set_error(be, "%s: norm_eps must be positive", op);
        return false;
    }
    return true;
}

static bool all_act(gf_backend *be, const char *op, std::initializer_list<std::pair<gf_buf, const char *>> bufs,
                    bool required) {
    for (auto &b : bufs) {
        if (required && !gdn_present(be, b.first, op, b.second)) return false;
        if (!gdn_dtype_is(be, b.first, be->act, op, b.second)) return false;
    }
    return true;
}

/* proj[n, 0:qkv] += bqkv[0:qkv] (contract v1: the q|k|v bias goes into proj in place, before the conv). */
template <typename T>
__global__ void gdn_qkv_bias_kernel(int N, GdnCols pc, T *__restrict__ proj, const T *__restrict__ bqkv) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (size_t)N * pc.qkv) return;
    int n = (int)(i / pc.qkv), ch = (int)(i % pc.qkv);
    T *p = proj + (size_t)n * pc.width + ch;
    *p = from_f<T>(to_f(*p) + to_f(bqkv[ch]));
}

template <typename T>
static void prep_forward(gf_backend *be, const gf_gdn_dims *d, gf_buf qkv_pre, gf_buf q, gf_buf k, gf_buf v, gf_buf g,
                         gf_buf beta, gf_buf conv_tail, gf_buf proj, gf_buf bqkv, gf_buf conv_w, gf_buf a_log,
                         gf_buf dt_bias) {
    cudaStream_t st = cuda_stream(be);
    (void)st;
    GdnCols pc = gdn_cols(d);
    int N = d->B * d->T;
    size_t n = (size_t)N * pc.qkv;
    if (!gf_is_none(bqkv)) {
        GDN_LAUNCH(gdn_qkv_bias_kernel<T>, dim3(cuda_blocks(n, 256)), dim3(256), 0, st, N, pc, (T *)proj.ptr,
                   (const T *)bqkv.ptr);
        CUDA_CHECK_LAUNCH(be, "gdn_prep (qkv bias)");
    }
    const T *w = d->conv ? (const T *)conv_w.ptr : nullptr;
    GDN_LAUNCH(gdn_conv_kernel<T>, dim3(cuda_blocks(n, 256)), dim3(256), 0, st, N, d->T, pc, (const T *)proj.ptr, w,
               (const T *)conv_tail.ptr, (T *)qkv_pre.ptr);
    CUDA_CHECK_LAUNCH(be, "gdn_prep (conv)");
    if (d->conv && !gf_is_none(conv_tail)) {
        GDN_LAUNCH(gdn_tail_kernel<T>, dim3(cuda_blocks((size_t)d->B * pc.qkv, 256)), dim3(256), 0, st, d->B, d->T, pc,
                   (const T *)proj.ptr, (T *)conv_tail.ptr);
        CUDA_CHECK_LAUNCH(be, "gdn_prep (conv tail)");
    }
    GDN_LAUNCH(gdn_gates_kernel<T>, dim3(cuda_blocks((size_t)N * d->H, 4)), dim3(128), 0, st, N, d->H, d->dk, d->dv,
               pc, (const T *)qkv_pre.ptr, (const T *)proj.ptr, (const T *)a_log.ptr, (const T *)dt_bias.ptr,
               (T *)q.ptr, (T *)k.ptr, (T *)v.ptr, (float *)g.ptr, (float *)beta.ptr);
    CUDA_CHECK_LAUNCH(be, "gdn_prep (gates)");
}

extern "C" void cuda_gdn_prep(gf_backend *be, gf_buf qkv_pre, gf_buf q, gf_buf k, gf_buf v, gf_buf g, gf_buf beta,
                              gf_buf conv_tail, gf_buf proj, gf_buf bqkv, gf_buf conv_w, gf_buf a_log,
                              gf_buf dt_bias, const gf_gdn_dims *d) {
    const char *op = "gdn_prep";
    if (!dims_ok(be, d, op) ||
        !all_act(be, op, {{qkv_pre, "qkv_pre"}, {q, "q"}, {k, "k"}, {v, "v"}, {proj, "proj"}, {a_log, "a_log"},
                          {dt_bias, "dt_bias"}}, true) ||
        !all_act(be, op, {{conv_tail, "conv_tail"}, {conv_w, "conv_w"}, {bqkv, "bqkv"}}, false) ||
        !gdn_present(be, g, op, "g") ||
        !gdn_present(be, beta, op, "beta") || !gdn_dtype_is(be, g, GF_F32, op, "g") ||
        !gdn_dtype_is(be, beta, GF_F32, op, "beta"))
        return;
    if (d->conv && !gdn_present(be, conv_w, op, "conv_w")) return;
    if (be->act == GF_BF16)
        prep_forward<bf16>(be, d, qkv_pre, q, k, v, g, beta, conv_tail, proj, bqkv, conv_w, a_log, dt_bias);
    else
        prep_forward<float>(be, d, qkv_pre, q, k, v, g, beta, conv_tail, proj, bqkv, conv_w, a_log, dt_bias);
}

/* ------------------------------------------------------------------ prep backward */

/* One warp per (token, head): pre-activation gradients of q, k, v into dC [N, qkv]
 * (F32), the a and b columns of dproj, and per-row terms of the A_log / dt_bias
 * gradients: dal [N, H] = dg g, ddt [N, H] = du. */
template <typename T>
__global__ void gdn_gates_bwd_kernel(int N, int H, int dk, int dv, GdnCols pc, const T *__restrict__ pre,
                                     const T *__restrict__ proj, const T *__restrict__ a_log,
                                     const T *__restrict__ dt_bias, const T *__restrict__ dq, const T *__restrict__ dk_,
                                     const T *__restrict__ dv_, const float *__restrict__ dg,
                                     const float *__restrict__ dbeta, const float *__restrict__ g,
                                     const float *__restrict__ beta, float *__restrict__ dC, T *__restrict__ dproj,
                                     float *__restrict__ dal, float *__restrict__ ddt) {
    int row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5), lane = threadIdx.x & 31;
    if (row >= N * H) return;
    int n = row / H, h = row % H;
    const T *pr = pre + (size_t)n * pc.qkv;
    float *dc = dC + (size_t)n * pc.qkv;
    for (int which = 0; which < 2; which++) {
        int off = (which ? pc.k : pc.q) + h * dk;
        const T *dxn = (which ? dk_ : dq) + (size_t)row * dk;
        float x[GDN_MAX_D / 32], dx[GDN_MAX_D / 32], ss = 0;
#pragma unroll
        for (int u = 0; u < GDN_MAX_D / 32; u++) {
            int j = lane + 32 * u;
            x[u] = j < dk ? siluf_(to_f(pr[off + j])) : 0.f;
            dx[u] = j < dk ? to_f(dxn[j]) : 0.f;
            ss += x[u] * x[u];
        }
        float inv = rsqrtf(warp_sum(ss) + GDN_L2_EPS), pj = 0;
#pragma unroll
        for (int u = 0; u < GDN_MAX_D / 32; u++) pj += x[u] * inv * dx[u];
        pj = warp_sum(pj);
#pragma unroll
        for (int u = 0; u < GDN_MAX_D / 32; u++) {
            int j = lane + 32 * u;
            if (j < dk) dc[off + j] = inv * (dx[u] - x[u] * inv * pj) * silu_grad_(to_f(pr[off + j]));
        }
    }
    for (int j = lane; j < dv; j += 32) {
        int ch = pc.v + h * dv + j;
        dc[ch] = to_f(dv_[(size_t)row * dv + j]) * silu_grad_(to_f(pr[ch]));
    }
    if (lane == 0) {
        const T *pj = proj + (size_t)n * pc.width;
        float u = to_f(pj[pc.a + h]) + to_f(dt_bias[h]);
        float du = dg[row] * -expf(to_f(a_log[h])) * sigmoidf_(u);
        T *dp = dproj + (size_t)n * pc.width;
        dp[pc.a + h] = from_f<T>(du);
        dp[pc.b + h] = from_f<T>(dbeta[row] * beta[row] * (1.f - beta[row]));
        dal[row] = dg[row] * g[row];
        ddt[row] = du;
    }
}

/* q, k, v columns of dproj from dC through the conv (or a copy), and the conv
 * weight gradient's partial sums over GDN_ROWS_PER_PART-token blocks:
 * part [nblocks, qkv, K]. grid (qkv / 128, nblocks). */
template <typename T>
__global__ void gdn_conv_bwd_kernel(int N, int Tn, GdnCols pc, const float *__restrict__ dC, const T *__restrict__ proj,
                                    const T *__restrict__ w, T *__restrict__ dproj, float *__restrict__ part) {
    int ch = blockIdx.x * blockDim.x + threadIdx.x, n0 = blockIdx.y * GDN_ROWS_PER_PART;
    if (ch >= pc.qkv) return;
    int n1 = n0 + GDN_ROWS_PER_PART < N ? n0 + GDN_ROWS_PER_PART : N;
    float wt[GDN_K], acc[GDN_K];
    for (int j = 0; j < GDN_K; j++) {
        wt[j] = w ? to_f(w[(size_t)ch * GDN_K + j]) : 0.f;
        acc[j] = 0;
    }
    for (int n = n0; n < n1; n++) {
        int t = n % Tn;
        float x;
        if (!w) {
            x = dC[(size_t)n * pc.qkv + ch];
        } else {
            /* proj[t] feeds qkv_pre[t + back] through tap K-1-back */
            x = 0;
            for (int back = 0; back < GDN_K && t + back < Tn; back++)
                x += wt[GDN_K - 1 - back] * dC[(size_t)(n + back) * pc.qkv + ch];
            float dc = dC[(size_t)n * pc.qkv + ch];
            for (int back = 0; back < GDN_K && back <= t; back++)
                acc[GDN_K - 1 - back] += dc * to_f(proj[(size_t)(n - back) * pc.width + ch]);
        }
        dproj[(size_t)n * pc.width + ch] = from_f<T>(x);
    }
    if (w)
        for (int j = 0; j < GDN_K; j++) part[((size_t)blockIdx.y * pc.qkv + ch) * GDN_K + j] = acc[j];
}

template <typename T>
static void prep_backward(gf_backend *be, const gf_gdn_dims *d, gf_buf dproj, gf_buf dbqkv, gf_buf dconv_w, gf_buf da_log,
                          gf_buf ddt_bias, gf_buf dq, gf_buf dk, gf_buf dv, gf_buf dg, gf_buf dbeta, gf_buf proj,
                          gf_buf qkv_pre, gf_buf g, gf_buf beta, gf_buf conv_w, gf_buf a_log, gf_buf dt_bias) {
    const char *op = "gdn_prep_backward";
    cudaStream_t st = cuda_stream(be);
    (void)st;
    GdnCols pc = gdn_cols(d);
    int N = d->B * d->T, NH = N * d->H, nblk = (N + GDN_ROWS_PER_PART - 1) / GDN_ROWS_PER_PART;
    bool conv = d->conv;
    void *dC = nullptr, *dal = nullptr, *ddt = nullptr, *part = nullptr;
    bool ok = gdn_scratch(be, &dC, (size_t)N * pc.qkv * sizeof(float), op) &&
              gdn_scratch(be, &dal, (size_t)NH * sizeof(float), op) &&
              gdn_scratch(be, &ddt, (size_t)NH * sizeof(float), op) &&
              (!conv || gdn_scratch(be, &part, (size_t)nblk * pc.qkv * GDN_K * sizeof(float), op));
    if (ok) {
        GDN_LAUNCH(gdn_gates_bwd_kernel<T>, dim3(cuda_blocks((size_t)NH, 4)), dim3(128), 0, st, N, d->H, d->dk, d->dv,
                   pc, (const T *)qkv_pre.ptr, (const T *)proj.ptr, (const T *)a_log.ptr, (const T *)dt_bias.ptr,
                   (const T *)dq.ptr, (const T *)dk.ptr, (const T *)dv.ptr, (const float *)dg.ptr,
                   (const float *)dbeta.ptr, (const float *)g.ptr, (const float *)beta.ptr, (float *)dC,
                   (T *)dproj.ptr, (float *)dal, (float *)ddt);
        CUDA_CHECK_LAUNCH(be, "gdn_prep_backward (gates)");
        GDN_LAUNCH(gdn_conv_bwd_kernel<T>, dim3((pc.qkv + 127) / 128, nblk), dim3(128), 0, st, N, d->T, pc,
                   (const float *)dC, (const T *)proj.ptr, conv ? (const T *)conv_w.ptr : (const T *)nullptr,
                   (T *)dproj.ptr, (float *)part);
        CUDA_CHECK_LAUNCH(be, "gdn_prep_backward (conv)");
        if (conv && !gf_is_none(dconv_w)) colsum_add(be, (float *)dconv_w.ptr, (const float *)part, nblk, pc.qkv * GDN_K, op);
        /* the bias was added to proj's q|k|v columns: its gradient is their column sum */
        if (!gf_is_none(dbqkv)) colsum_add_strided<T>(be, (float *)dbqkv.ptr, (const T *)dproj.ptr, N, pc.qkv, pc.width, op);
        if (!gf_is_none(da_log)) colsum_add(be, (float *)da_log.ptr, (const float *)dal, N, d->H, op);
        if (!gf_is_none(ddt_bias)) colsum_add(be, (float *)ddt_bias.ptr, (const float *)ddt, N, d->H, op);
    }
    gdn_scratch_free(be, dC);
    gdn_scratch_free(be, dal);
    gdn_scratch_free(be, ddt);
    gdn_scratch_free(be, part);
}

extern "C" void cuda_gdn_prep_backward(gf_backend *be, gf_buf dproj, gf_buf dbqkv, gf_buf dconv_w, gf_buf da_log,
                                       gf_buf ddt_bias,
                                       gf_buf dq, gf_buf dk, gf_buf dv, gf_buf dg, gf_buf dbeta, gf_buf proj,
                                       gf_buf qkv_pre, gf_buf q, gf_buf k, gf_buf g, gf_buf beta, gf_buf conv_w,
                                       gf_buf a_log, gf_buf dt_bias, const gf_gdn_dims *d) {
    const char *op = "gdn_prep_backward";
    (void)q, (void)k; /* the normalized q, k are recomputed from qkv_pre in fp32 */
    if (!dims_ok(be, d, op) ||
        !all_act(be, op, {{dproj, "dproj"}, {dq, "dq"}, {dk, "dk"}, {dv, "dv"}, {proj, "proj"}, {qkv_pre, "qkv_pre"},
                          {a_log, "a_log"}, {dt_bias, "dt_bias"}}, true) ||
        !all_act(be, op, {{conv_w, "conv_w"}}, false))
        return;
    gf_buf f32s[] = {dg, dbeta, g, beta};
    const char *fn[] = {"dg", "dbeta", "g", "beta"};
    for (int i = 0; i < 4; i++)
        if (!gdn_present(be, f32s[i], op, fn[i]) || !gdn_dtype_is(be, f32s[i], GF_F32, op, fn[i])) return;
    if (!gdn_dtype_is(be, dconv_w, GF_F32, op, "dconv_w") || !gdn_dtype_is(be, dbqkv, GF_F32, op, "dbqkv") || !gdn_dtype_is(be, da_log, GF_F32, op, "da_log") ||
        !gdn_dtype_is(be, ddt_bias, GF_F32, op, "ddt_bias"))
        return;
    if (d->conv && !gdn_present(be, conv_w, op, "conv_w")) return;
    if (be->act == GF_BF16)
        prep_backward<bf16>(be, d, dproj, dbqkv, dconv_w, da_log, ddt_bias, dq, dk, dv, dg, dbeta, proj, qkv_pre, g, beta,
                            conv_w, a_log, dt_bias);
    else
        prep_backward<float>(be, d, dproj, dbqkv, dconv_w, da_log, ddt_bias, dq, dk, dv, dg, dbeta, proj, qkv_pre, g, beta,
                             conv_w, a_log, dt_bias);
}

/* ------------------------------------------------------------------ gated norm */

/* One warp per (token, head): z = o / sqrt(mean(o^2) + eps) * w * silu(g columns). */
template <typename T>
__global__ void gdn_gated_norm_kernel(int NH, int H, int dv, float eps, GdnCols pc, const T *__restrict__ o,
                                      const T *__restrict__ proj, const T *__restrict__ w, T *__restrict__ z,
                                      float *__restrict__ rstd) {
    int row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5), lane = threadIdx.x & 31;
    if (row >= NH) return;
    int n = row / H, h = row % H;
    const T *orow = o + (size_t)row * dv, *gp = proj + (size_t)n * pc.width + pc.g + h * dv;
    float x[GDN_MAX_D / 32], ss = 0;
#pragma unroll
    for (int u = 0; u < GDN_MAX_D / 32; u++) {
        int j = lane + 32 * u;
        x[u] = j < dv ? to_f(orow[j]) : 0.f;
        ss += x[u] * x[u];
    }
    float r = rsqrtf(warp_sum(ss) / (float)dv + eps);
    if (lane == 0 && rstd) rstd[row] = r;
#pragma unroll
    for (int u = 0; u < GDN_MAX_D / 32; u++) {
        int j = lane + 32 * u;
        if (j < dv) z[(size_t)row * dv + j] = from_f<T>(x[u] * r * to_f(w[j]) * siluf_(to_f(gp[j])));
    }
}

extern "C" void cuda_gdn_gated_norm(gf_backend *be, gf_buf z, gf_buf rstd, gf_buf o, gf_buf proj, gf_buf w_norm,
                                    const gf_gdn_dims *d) {
    const char *op = "gdn_gated_norm";
    if (!dims_ok(be, d, op) || !all_act(be, op, {{z, "z"}, {o, "o"}, {proj, "proj"}, {w_norm, "w_norm"}}, true) ||
        !gdn_dtype_is(be, rstd, GF_F32, op, "rstd"))
        return;
    GdnCols pc = gdn_cols(d);
    int NH = d->B * d->T * d->H;
    cudaStream_t st = cuda_stream(be);
    (void)st;
    if (be->act == GF_BF16)
        GDN_LAUNCH(gdn_gated_norm_kernel<bf16>, dim3(cuda_blocks((size_t)NH, 4)), dim3(128), 0, st, NH, d->H, d->dv,
                   d->norm_eps, pc, (const bf16 *)o.ptr, (const bf16 *)proj.ptr, (const bf16 *)w_norm.ptr,
                   (bf16 *)z.ptr, (float *)rstd.ptr);
    else
        GDN_LAUNCH(gdn_gated_norm_kernel<float>, dim3(cuda_blocks((size_t)NH, 4)), dim3(128), 0, st, NH, d->H, d->dv,
                   d->norm_eps, pc, (const float *)o.ptr, (const float *)proj.ptr, (const float *)w_norm.ptr,
                   (float *)z.ptr, (float *)rstd.ptr);
    CUDA_CHECK_LAUNCH(be, op);
}

#define GDN_NORM_BWD_BLOCKS 512 /* fixed grid: the dw_norm partials do not depend on timing */

/* Warps stride over the (token, head) rows: d_o (may alias dz: a row is read
 * before it is written), the g columns of dproj, and per-warp partial sums of
 * dw_norm: part [GDN_NORM_BWD_BLOCKS * 4, dv]. */
template <typename T>
__global__ void gdn_gated_norm_bwd_kernel(int NH, int H, int dv, GdnCols pc, const T *dz, const T *__restrict__ o,
                                          const float *__restrict__ rstd, const T *__restrict__ proj,
                                          const T *__restrict__ w, T *d_o, T *__restrict__ dproj,
                                          float *__restrict__ part) {
    int gw = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5), nwarps = gridDim.x * (blockDim.x >> 5);
    int lane = threadIdx.x & 31;
    float dwn[GDN_MAX_D / 32];
#pragma unroll
    for (int u = 0; u < GDN_MAX_D / 32; u++) dwn[u] = 0;
    for (int row = gw; row < NH; row += nwarps) {
        int n = row / H, h = row % H;
        const T *gp = proj + (size_t)n * pc.width + pc.g + h * dv;
        T *dgp = dproj + (size_t)n * pc.width + pc.g + h * dv;
        float r = rstd[row], m[GDN_MAX_D / 32], x[GDN_MAX_D / 32], mo = 0;
#pragma unroll
        for (int u = 0; u < GDN_MAX_D / 32; u++) {
            int j = lane + 32 * u;
            m[u] = x[u] = 0;
            if (j < dv) {
                float dzj = to_f(dz[(size_t)row * dv + j]), gj = to_f(gp[j]), sg = siluf_(gj), wj = to_f(w[j]);
                x[u] = to_f(o[(size_t)row * dv + j]);
                float nj = x[u] * r;
                m[u] = dzj * wj * sg;
                dwn[u] += dzj * nj * sg;
                dgp[j] = from_f<T>(dzj * nj * wj * silu_grad_(gj));
                mo += m[u] * x[u];
            }
        }
        float k3 = r * r * r * warp_sum(mo) / (float)dv;
#pragma unroll
        for (int u = 0; u < GDN_MAX_D / 32; u++) {
            int j = lane + 32 * u;
            if (j < dv) d_o[(size_t)row * dv + j] = from_f<T>(r * m[u] - k3 * x[u]);
        }
    }
#pragma unroll
    for (int u = 0; u < GDN_MAX_D / 32; u++) {
        int j = lane + 32 * u;
        if (j < dv) part[(size_t)gw * dv + j] = dwn[u];
    }
}

extern "C" void cuda_gdn_gated_norm_backward(gf_backend *be, gf_buf d_o, gf_buf dproj, gf_buf dw_norm, gf_buf dz,
                                             gf_buf o, gf_buf rstd, gf_buf proj, gf_buf w_norm, const gf_gdn_dims *d) {
    const char *op = "gdn_gated_norm_backward";
    if (!dims_ok(be, d, op) ||
        !all_act(be, op, {{d_o, "d_o"}, {dproj, "dproj"}, {dz, "dz"}, {o, "o"}, {proj, "proj"}, {w_norm, "w_norm"}},
                 true) ||
        !gdn_present(be, rstd, op, "rstd") || !gdn_dtype_is(be, rstd, GF_F32, op, "rstd") ||
        !gdn_dtype_is(be, dw_norm, GF_F32, op, "dw_norm"))
        return;
    GdnCols pc = gdn_cols(d);
    int NH = d->B * d->T * d->H, nwarps = GDN_NORM_BWD_BLOCKS * 4;
    cudaStream_t st = cuda_stream(be);
    (void)st;
    void *part = nullptr;
    if (!gdn_scratch(be, &part, (size_t)nwarps * d->dv * sizeof(float), op)) return;
    if (be->act == GF_BF16)
        GDN_LAUNCH(gdn_gated_norm_bwd_kernel<bf16>, dim3(GDN_NORM_BWD_BLOCKS), dim3(128), 0, st, NH, d->H, d->dv, pc,
                   (const bf16 *)dz.ptr, (const bf16 *)o.ptr, (const float *)rstd.ptr, (const bf16 *)proj.ptr,
                   (const bf16 *)w_norm.ptr, (bf16 *)d_o.ptr, (bf16 *)dproj.ptr, (float *)part);
    else
        GDN_LAUNCH(gdn_gated_norm_bwd_kernel<float>, dim3(GDN_NORM_BWD_BLOCKS), dim3(128), 0, st, NH, d->H, d->dv, pc,
                   (const float *)dz.ptr, (const float *)o.ptr, (const float *)rstd.ptr, (const float *)proj.ptr,
                   (const float *)w_norm.ptr, (float *)d_o.ptr, (float *)dproj.ptr, (float *)part);
    CUDA_CHECK_LAUNCH(be, op);
    if (!gf_is_none(dw_norm)) colsum_add(be, (float *)dw_norm.ptr, (const float *)part, nwarps, d->dv, op);
    gdn_scratch_free(be, part);
}
