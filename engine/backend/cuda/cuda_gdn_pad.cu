/* Head dims that are not multiples of 16 (the small test models: stories260K
 * and the fixtures have head_dim 8) for the GDN core: its tensor-core tiles
 * need dk, dv % 16 == 0, so the op runs on copies padded with zeros to the
 * next multiple of 16 and the results are cut back.
 *
 * Exact, not an approximation: a zero key or query coordinate never enters
 * the state (S <- a S (I - b k k^T) + b v k^T keeps the padded columns of S at
 * zero) nor the output (o = S q); a zero value row makes a state row that
 * starts at zero and stays zero, whose output is dropped. The backward of the
 * same padded problem gives dq, dk, dv whose padded parts are dropped, and dg,
 * dbeta unchanged (the padded state entries are zero). */
#include "backend/cuda/cuda_table.h"
#include "backend/cuda/cuda_gdn_host.cuh"
#include "backend/cuda/cuda_gdn_pad.cuh"

/* dst [outer, ap, bp] <- src [outer, a, b] with zeros beyond (pad), or
 * dst [outer, a, b] <- the leading part of src [outer, ap, bp] (cut). */
template <typename T>
__global__ void gdn_pad_kernel(T *dst, const T *src, size_t outer, int a, int b, int ap, int bp, int cut) {
    const size_t n = outer * (size_t)(cut ? a : ap) * (cut ? b : bp);
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += stride) {
        if (cut) {
            const size_t i = e / ((size_t)a * b);
            const int r = (int)(e % ((size_t)a * b));
            const int j = r / b, k = r % b;
            dst[e] = src[(i * ap + j) * bp + k];
        } else {
            const size_t i = e / ((size_t)ap * bp);
            const int r = (int)(e % ((size_t)ap * bp));
            const int j = r / bp, k = r % bp;
            dst[e] = j < a && k < b ? src[(i * a + j) * b + k] : from_f<T>(0.f);
        }
    }
}

static int up16(int d) { return (d + 15) & ~15; }

static void pad_launch(gf_backend *be, gf_buf dst, gf_buf src, size_t outer, int a, int b, int ap, int bp, bool cut) {
    const size_t n = outer * (size_t)(cut ? a : ap) * (cut ? b : bp);
    const unsigned th = 256, grid = cuda_blocks(n < ((size_t)1 << 24) ? n : ((size_t)1 << 24), th);
    if (src.dtype == GF_BF16)
        GDN_LAUNCH(gdn_pad_kernel<bf16>, dim3(grid), dim3(th), 0, cuda_stream(be), (bf16 *)dst.ptr,
                   (const bf16 *)src.ptr, outer, a, b, ap, bp, (int)cut);
    else
        GDN_LAUNCH(gdn_pad_kernel<float>, dim3(grid), dim3(th), 0, cuda_stream(be), (float *)dst.ptr,
                   (const float *)src.ptr, outer, a, b, ap, bp, (int)cut);
    CUDA_CHECK_LAUNCH(be, "gdn (head-dim padding)");
}

bool gdn_needs_pad(const gf_gdn_shape *s) {
    return s->dk > 0 && s->dv > 0 && s->dk <= GDN_MAX_D && s->dv <= GDN_MAX_D && (s->dk % 16 || s->dv % 16);
}

/* Scratch buffers of this op, freed together. */
struct PadScratch {
    gf_backend *be;
    void *p[8];
    int n;
    bool ok;
    gf_buf take(size_t elems, gf_dtype t, const char *op) {
        gf_buf b = {nullptr, t};
        if (!ok || n == 8 || !gdn_scratch(be, &b.ptr, elems * gf_dtype_size(t), op)) {
            ok = false;
            return b;
        }
        p[n++] = b.ptr;
        return b;
    }
    ~PadScratch() {
        for (int i = 0; i < n; i++) gdn_scratch_free(be, p[i]);
    }
};

void gdn_core_padded(gf_backend *be, gf_buf o, gf_buf ckpt, gf_buf state, gf_buf q, gf_buf k, gf_buf v, gf_buf g,
                     gf_buf beta, const gf_gdn_shape *s) {
    const char *op = "gdn_core";
    const int dk = s->dk, dv = s->dv, dkp = up16(dk), dvp = up16(dv);
    const size_t nt = (size_t)s->B * s->T * s->H, nbh = (size_t)s->B * s->H;
    const size_t nc = ((size_t)s->T + s->chunk - 1) / s->chunk;
    const gf_dtype A = be->act;
    PadScratch sc = {be, {}, 0, true};
    gf_buf qp = sc.take(nt * dkp, A, op), kp = sc.take(nt * dkp, A, op), vp = sc.take(nt * dvp, A, op);
    gf_buf op_ = sc.take(nt * dvp, A, op);
    /* the padded states in ACT; a checkpoint is an F32 buffer that holds them (gf_gdn_ckpt_floats) */
    gf_buf cp = gf_is_none(ckpt) ? gf_none() : sc.take(nbh * nc * dvp * dkp, A, op);
    gf_buf sp = gf_is_none(state) ? gf_none() : sc.take(nbh * dvp * dkp, GF_F32, op);
    if (!sc.ok) return;
    pad_launch(be, qp, q, nt, 1, dk, 1, dkp, false);
    pad_launch(be, kp, k, nt, 1, dk, 1, dkp, false);
    pad_launch(be, vp, v, nt, 1, dv, 1, dvp, false);
    if (!gf_is_none(state)) pad_launch(be, sp, state, nbh, dv, dk, dvp, dkp, false);
    gf_gdn_shape ps = *s;
    ps.dk = dkp;
    ps.dv = dvp;
    ps.keep_wy = false; /* the padded checkpoint is states only (gdn_wy_kept) */
    cuda_gdn_core(be, op_, gf_bytes(cp, 0, GF_F32), sp, qp, kp, vp, g, beta, &ps);
    pad_launch(be, o, op_, nt, 1, dv, 1, dvp, true);
    if (!gf_is_none(ckpt)) pad_launch(be, gf_bytes(ckpt, 0, A), cp, nbh * nc, dv, dk, dvp, dkp, true);
    if (!gf_is_none(state)) pad_launch(be, state, sp, nbh, dv, dk, dvp, dkp, true);
}

void gdn_core_backward_padded(gf_backend *be, gf_buf dq, gf_buf dk, gf_buf dv, gf_buf dg, gf_buf dbeta, gf_buf d_o,
                              gf_buf q, gf_buf k, gf_buf v, gf_buf g, gf_buf beta, gf_buf ckpt,
                              const gf_gdn_shape *s) {
    const char *op = "gdn_core_backward";
    const int dkk = s->dk, dvv = s->dv, dkp = up16(dkk), dvp = up16(dvv);
    const size_t nt = (size_t)s->B * s->T * s->H, nbh = (size_t)s->B * s->H;
    const size_t nc = ((size_t)s->T + s->chunk - 1) / s->chunk;
    const gf_dtype A = be->act;
    PadScratch sc = {be, {}, 0, true};
    gf_buf qp = sc.take(nt * dkp, A, op), kp = sc.take(nt * dkp, A, op), vp = sc.take(nt * dvp, A, op);
    gf_buf dop = sc.take(nt * dvp, A, op), cp = sc.take(nbh * nc * dvp * dkp, A, op); /* states in ACT */
    gf_buf dqp = sc.take(nt * dkp, A, op), dkp_ = sc.take(nt * dkp, A, op), dvp_ = sc.take(nt * dvp, A, op);
    if (!sc.ok) return;
    pad_launch(be, qp, q, nt, 1, dkk, 1, dkp, false);
    pad_launch(be, kp, k, nt, 1, dkk, 1, dkp, false);
    pad_launch(be, vp, v, nt, 1, dvv, 1, dvp, false);
    pad_launch(be, dop, d_o, nt, 1, dvv, 1, dvp, false);
    pad_launch(be, cp, gf_bytes(ckpt, 0, A), nbh * nc, dvv, dkk, dvp, dkp, false);
    gf_gdn_shape ps = *s;
    ps.dk = dkp;
    ps.dv = dvp;
    ps.keep_wy = false; /* the padded checkpoint is states only (gdn_wy_kept) */
    cuda_gdn_core_backward(be, dqp, dkp_, dvp_, dg, dbeta, dop, qp, kp, vp, g, beta, gf_bytes(cp, 0, GF_F32), &ps);
    pad_launch(be, dq, dqp, nt, 1, dkk, 1, dkp, true);
    pad_launch(be, dk, dkp_, nt, 1, dkk, 1, dkp, true);
    pad_launch(be, dv, dvp_, nt, 1, dvv, 1, dvp, true);
}
