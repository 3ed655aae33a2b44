/* be_attention and be_attention_backward: shape checks and the choice of
 * kernel. bf16 with head dim 64 or 128 and 16-byte aligned views runs on the
 * tensor cores (cuda_attention_fwd.cu, cuda_attention_bwd.cu); everything else
 * (the f32 checking mode, other head dims up to 256) on the exact SIMT
 * kernels (cuda_attention_simt.cu). */
#include "backend/cuda/cuda_attention.cuh"

static bool shape_ok(gf_backend *be, const char *op, const gf_attn_shape *s) {
    if (!s || s->B < 0 || s->T < 0 || s->H <= 0 || s->KV <= 0 || s->H % s->KV || s->hd <= 0 || s->pos0 < 0 ||
        s->S < s->pos0 + s->T) {
        be_set_error(be, "%s: bad shape (B %d, T %d, H %d, KV %d, hd %d, pos0 %d, S %d)", op, s ? s->B : 0,
                     s ? s->T : 0, s ? s->H : 0, s ? s->KV : 0, s ? s->hd : 0, s ? s->pos0 : 0, s ? s->S : 0);
        return false;
    }
    if (s->hd > 256) {
        be_set_error(be, "%s: head dim %d is more than 256", op, s->hd);
        return false;
    }
    return true;
}

extern "C" void cuda_attention(gf_backend *be, gf_buf out, gf_buf lse, gf_buf stats, gf_buf q, gf_buf k, gf_buf v,
                               const gf_attn_shape *s) {
    const char *op = "attention";
    if (!cuda_need(be, op, "out", out) || !cuda_need(be, op, "q", q) || !cuda_need(be, op, "k", k) ||
        !cuda_need(be, op, "v", v) || !cuda_want(be, op, "out", out, be->act) || !cuda_want(be, op, "q", q, be->act) ||
        !cuda_want(be, op, "k", k, be->act) || !cuda_want(be, op, "v", v, be->act) ||
        !cuda_want(be, op, "lse", lse, GF_F32) || !cuda_want(be, op, "stats", stats, GF_F64) ||
        !shape_ok(be, op, s))
        return;
    if (!s->B || !s->T) return;
    attn_fwd_params p = {};
    p.q = q.ptr;
    p.k = k.ptr;
    p.v = v.ptr;
    p.out = out.ptr;
    p.lse = (float *)lse.ptr;
    p.stats = (double *)stats.ptr;
    p.B = s->B;
    p.T = s->T;
    p.H = s->H;
    p.KV = s->KV;
    p.G = s->H / s->KV;
    p.hd = s->hd;
    p.pos0 = s->pos0;
    p.S = s->S;
    p.scale_log2 = LOG2E_F / sqrtf((float)s->hd);
    const bool mma = attn_fwd_mma_takes(be, p);
    if (mma) attn_fwd_mma_plan(be, p);
    const size_t n_parts = mma ? attn_fwd_mma_parts(p) : attn_fwd_simt_parts(p);
    const size_t n_stats = (size_t)s->H * GF_STAT_COUNT;
    if (p.stats && !(p.stat_parts = (double *)cuda_scratch(be, n_parts * n_stats * sizeof(double), op))) return;
    const size_t split_bytes = mma ? attn_fwd_split_bytes(p) : 0;
    if (split_bytes) {
        if (!(p.part_o = (float *)cuda_scratch(be, split_bytes, op))) {
            cuda_scratch_free(be, p.stat_parts);
            return;
        }
        p.part_s = p.part_o + (size_t)p.B * p.KV * p.rows * p.n_split * p.hd;
    }
    if (mma) attn_fwd_mma_launch(be, p);
    else attn_fwd_simt_launch(be, p);
    if (p.stats) {
        cuda_sum_parts(be, p.stats, p.stat_parts, n_parts, n_stats);
        cuda_scratch_free(be, p.stat_parts);
    }
    cuda_scratch_free(be, p.part_o);
    cuda_after(be, op);
}

/* ------------------------------------------------------------- backward */

/* D[b, t, h] = sum_d dout * out: one warp per row. */
template <typename T> __global__ void rowdot_kernel(float *D, const T *a, const T *b, size_t rows, int hd) {
    const size_t row = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (row >= rows) return;
    float s = 0;
    for (int d = lane; d < hd; d += 32) s += to_f(a[row * hd + d]) * to_f(b[row * hd + d]);
    s = warp_sum(s);
    if (lane == 0) D[row] = s;
}

/* The fp32 sums to bf16 in one launch: acc = [dq | dk | dv] (nq, nkv, nkv floats), dq and dk times
 * scale, dv as it is. Eight floats a thread a turn (two 16-byte loads, one 16-byte store); nq and nkv
 * are multiples of eight because the MMA kernels take hd 64 or 128 only. */
__global__ void grads_convert_kernel(bf16 *dq, bf16 *dk, bf16 *dv, const float *acc, size_t nq8, size_t nkv8,
                                     float scale) {
    const size_t stride = (size_t)gridDim.x * blockDim.x, n8 = nq8 + 2 * nkv8;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n8; i += stride) {
        float f[8], lo[4], hi[4];
        ld_pack<4>(lo, acc + 8 * i);
        ld_pack<4>(hi, acc + 8 * i + 4);
        const bool is_dv = i >= nq8 + nkv8;
        const float s = is_dv ? 1.0f : scale;
#pragma unroll
        for (int e = 0; e < 4; e++) f[e] = lo[e] * s, f[4 + e] = hi[e] * s;
        bf16 *dst = is_dv ? dv + 8 * (i - nq8 - nkv8) : i >= nq8 ? dk + 8 * (i - nq8) : dq + 8 * i;
        st_pack<8>(dst, f);
    }
}

/* The bf16 MMA backward: dQ, dK and dV summed in fp32 scratch by the kernel's atomics, then converted.
 * False where no MMA kernel takes the shape or the gradients are not 16-byte aligned for the
 * conversion's stores (the caller runs the SIMT one). */
static bool backward_mma(gf_backend *be, attn_bwd_params &p, size_t nq, size_t nkv) {
    const char *op = "attention_backward";
    if (!cuda_aligned16(p.dq) || !cuda_aligned16(p.dk) || !cuda_aligned16(p.dv)) return false;
    float *acc = (float *)cuda_scratch(be, (nq + 2 * nkv) * sizeof(float), op);
    if (!acc) return true; /* the error is recorded; nothing else to run */
    p.dq_acc = acc;
    p.dk_acc = acc + nq;
    p.dv_acc = acc + nq + nkv;
    cudaStream_t s = cuda_stream(be);
    cuda_memset_async(acc, 0, (nq + 2 * nkv) * sizeof(float), s);
    /* the kernel the backend settled on at open (ATTN_BWD_MMA, ATTN_BWD_WGMMA or ATTN_BWD_WGMMA2) */
    const int kind = cuda_st(be)->attn_bwd;
    const bool launched = kind == ATTN_BWD_MMA ? attn_bwd_mma_launch(be, p)
                                               : attn_bwd_wg_launch(be, p, kind == ATTN_BWD_WGMMA2);
    if (!launched) {
        cuda_scratch_free(be, acc);
        return false;
    }
    const unsigned cap = 16u * (unsigned)cuda_of(be)->prop.multiProcessorCount;
    cuda_launch(cuda_grid((nq + 2 * nkv) / 8, 256, cap), 256, 0, s, grads_convert_kernel, (bf16 *)p.dq,
                (bf16 *)p.dk, (bf16 *)p.dv, (const float *)acc, nq / 8, nkv / 8, p.scale);
    cuda_scratch_free(be, acc);
    return true;
}

extern "C" void cuda_attention_backward(gf_backend *be, gf_buf dq, gf_buf dk, gf_buf dv, gf_buf dout, gf_buf out,
                                        gf_buf lse, gf_buf q, gf_buf k, gf_buf v, const gf_attn_shape *s) {
    const char *op = "attention_backward";
    if (!cuda_need(be, op, "dq", dq) || !cuda_need(be, op, "dk", dk) || !cuda_need(be, op, "dv", dv) ||
        !cuda_need(be, op, "dout", dout) || !cuda_need(be, op, "out", out) || !cuda_need(be, op, "lse", lse) ||
        !cuda_need(be, op, "q", q) || !cuda_need(be, op, "k", k) || !cuda_need(be, op, "v", v) ||
        !cuda_want(be, op, "dq", dq, be->act) || !cuda_want(be, op, "dk", dk, be->act) ||
        !cuda_want(be, op, "dv", dv, be->act) || !cuda_want(be, op, "dout", dout, be->act) ||
        !cuda_want(be, op, "out", out, be->act) || !cuda_want(be, op, "lse", lse, GF_F32) ||
        !cuda_want(be, op, "q", q, be->act) || !cuda_want(be, op, "k", k, be->act) ||
        !cuda_want(be, op, "v", v, be->act) || !shape_ok(be, op, s))
        return;
    if (s->pos0 != 0 || s->S != s->T) {
        be_set_error(be, "%s: the backward takes pos0 = 0 and S = T (got pos0 %d, S %d, T %d)", op, s->pos0, s->S,
                     s->T);
        return;
    }
    if (!s->B || !s->T) return;
    attn_bwd_params p = {};
    p.q = q.ptr;
    p.k = k.ptr;
    p.v = v.ptr;
    p.dout = dout.ptr;
    p.lse = (const float *)lse.ptr;
    p.dq = dq.ptr;
    p.dk = dk.ptr;
    p.dv = dv.ptr;
    p.B = s->B;
    p.T = s->T;
    p.H = s->H;
    p.KV = s->KV;
    p.G = s->H / s->KV;
    p.hd = s->hd;
    p.scale = 1.0f / sqrtf((float)s->hd);
    p.scale_log2 = p.scale * LOG2E_F;

    const size_t rows = (size_t)s->B * s->T * s->H, nq = rows * s->hd, nkv = (size_t)s->B * s->T * s->KV * s->hd;
    float *D = (float *)cuda_scratch(be, rows * sizeof(float), op);
    if (!D) return;
    p.Dr = D;
    const unsigned grid = (unsigned)((rows * 32 + 255) / 256);
    if (be->act == GF_BF16) {
        cuda_launch(grid, 256, 0, cuda_stream(be), rowdot_kernel<bf16>, D, (const bf16 *)dout.ptr,
                    (const bf16 *)out.ptr, rows, s->hd);
        if (!backward_mma(be, p, nq, nkv)) attn_bwd_simt_launch(be, p);
    } else {
        cuda_launch(grid, 256, 0, cuda_stream(be), rowdot_kernel<float>, D, (const float *)dout.ptr,
                    (const float *)out.ptr, rows, s->hd);
        attn_bwd_simt_launch(be, p);
    }
    cuda_scratch_free(be, D);
    cuda_after(be, op);
}
