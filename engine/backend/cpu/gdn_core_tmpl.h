/* Template (included by cpu_gdn.c / engine/gdn/gdn_ref_f64.c with `real`, SFX, GEMM and
 * TRSM defined): the gated delta-rule recurrence, forward in two forms and backward.
 *
 * State per (sequence, head): S [dv][dk] row-major, zero at t = 0.
 *   S_t = a_t S_{t-1} (I - beta_t k_t k_t^T) + beta_t v_t k_t^T,  a_t = exp(g_t)
 *   o_t = S_t (scale q_t)
 * Work is split across (sequence, head) pairs over `nt` OpenMP threads; each
 * pair is serial and owns its outputs, so the bits do not depend on nt.
 * Scratch is the caller's (nt x SFX(core_work) reals). Inner loops over dk / dv
 * carry `omp simd` so that reductions vectorize without -ffast-math (the only
 * reassociation is inside these dot products). */

#include "backend/cpu/blas_serial.h"

/* Below this many multiply-adds a parallel region costs more than it saves. */
#ifndef GDN_PAR_MIN_WORK
#define GDN_PAR_MIN_WORK 2000000.0
#endif

#ifndef GDN_SIMD
/* The per-(sequence, head) workers are also built for AVX2 + FMA and picked at
 * run time (GCC function multi-versioning); the build itself targets x86-64-v2. */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define GDN_HOT __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define GDN_HOT
#endif
#define GDN_SIMD _Pragma("omp simd")
#define GDN_SIMD_REDUCE(...) GDN_PRAGMA_(omp simd reduction(+ : __VA_ARGS__))
#define GDN_PRAGMA_(x) _Pragma(#x)
#endif

/* Offsets of one (b, h) pair in the token-major tensors. */
typedef struct {
    size_t qk_stride, v_stride, h_stride;   /* between consecutive tokens */
    size_t qk0, v0, h0;                     /* token 0 of this (b, h) */
} SFX(core_index);

static SFX(core_index) SFX(core_index_of)(const gdn_core_dims *s, int b, int h) {
    SFX(core_index) ix;
    size_t H = (size_t)s->H, tok0 = (size_t)b * (size_t)s->T;
    ix.qk_stride = H * (size_t)s->dk;
    ix.v_stride = H * (size_t)s->dv;
    ix.h_stride = H;
    ix.qk0 = tok0 * ix.qk_stride + (size_t)h * (size_t)s->dk;
    ix.v0 = tok0 * ix.v_stride + (size_t)h * (size_t)s->dv;
    ix.h0 = tok0 * H + (size_t)h;
    return ix;
}

static real *SFX(ckpt_at)(const gdn_core_dims *s, real *ckpt, int b, int h, int c) {
    int nc = (s->T + s->chunk - 1) / s->chunk;
    size_t sd = (size_t)s->dv * (size_t)s->dk;
    return ckpt + (((size_t)b * (size_t)s->H + (size_t)h) * (size_t)nc + (size_t)c) * sd;
}

static inline __attribute__((always_inline)) real SFX(dot)(const real *a, const real *b, int n) {
    real acc = 0;
    GDN_SIMD_REDUCE(acc)
    for (int j = 0; j < n; j++) acc += a[j] * b[j];
    return acc;
}

/* One token: dst = a src (I - beta k k^T) + beta v k^T (dst may equal src);
 * when o is not NULL also o = dst (scale q). */
static inline __attribute__((always_inline)) void SFX(core_step)(real *dst, const real *src, int dv, int dk, const real *q,
                           const real *k, const real *v, real a, real beta, real scale,
                           real *o) {
    int r = 0;
    /* Four rows at a time: four independent dot-product chains instead of one. */
    for (; r + 4 <= dv; r += 4) {
        const real *i0 = src + (size_t)r * dk, *i1 = i0 + dk, *i2 = i1 + dk, *i3 = i2 + dk;
        real *w0 = dst + (size_t)r * dk, *w1 = w0 + dk, *w2 = w1 + dk, *w3 = w2 + dk;
        real u0 = 0, u1 = 0, u2 = 0, u3 = 0;
        GDN_SIMD_REDUCE(u0, u1, u2, u3)
        for (int j = 0; j < dk; j++) {
            u0 += i0[j] * k[j];
            u1 += i1[j] * k[j];
            u2 += i2[j] * k[j];
            u3 += i3[j] * k[j];
        }
        real c0 = beta * (v[r] - a * u0), c1 = beta * (v[r + 1] - a * u1);
        real c2 = beta * (v[r + 2] - a * u2), c3 = beta * (v[r + 3] - a * u3);
        if (!o) {
            GDN_SIMD
            for (int j = 0; j < dk; j++) {
                w0[j] = a * i0[j] + c0 * k[j];
                w1[j] = a * i1[j] + c1 * k[j];
                w2[j] = a * i2[j] + c2 * k[j];
                w3[j] = a * i3[j] + c3 * k[j];
            }
            continue;
        }
        real s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        GDN_SIMD_REDUCE(s0, s1, s2, s3)
        for (int j = 0; j < dk; j++) {
            real n0 = a * i0[j] + c0 * k[j], n1 = a * i1[j] + c1 * k[j];
            real n2 = a * i2[j] + c2 * k[j], n3 = a * i3[j] + c3 * k[j];
            w0[j] = n0;
            w1[j] = n1;
            w2[j] = n2;
            w3[j] = n3;
            s0 += n0 * q[j];
            s1 += n1 * q[j];
            s2 += n2 * q[j];
            s3 += n3 * q[j];
        }
        o[r] = scale * s0;
        o[r + 1] = scale * s1;
        o[r + 2] = scale * s2;
        o[r + 3] = scale * s3;
    }
    for (; r < dv; r++) {
        const real *in = src + (size_t)r * dk;
        real *out = dst + (size_t)r * dk;
        real c = beta * (v[r] - a * SFX(dot)(in, k, dk));
        if (!o) {
            GDN_SIMD
            for (int j = 0; j < dk; j++) out[j] = a * in[j] + c * k[j];
            continue;
        }
        real acc = 0;
        GDN_SIMD_REDUCE(acc)
        for (int j = 0; j < dk; j++) {
            out[j] = a * in[j] + c * k[j];
            acc += out[j] * q[j];
        }
        o[r] = scale * acc;
    }
}

/* Carried state [B, H, dv, dk]: NULL means a zero start and nothing kept. */
static void SFX(state_load)(const gdn_core_dims *s, real *S, const real *state, int b, int h) {
    size_t sd = (size_t)s->dv * (size_t)s->dk;
    if (state)
        memcpy(S, state + ((size_t)b * (size_t)s->H + (size_t)h) * sd, sd * sizeof(real));
    else
        memset(S, 0, sd * sizeof(real));
}

static void SFX(state_store)(const gdn_core_dims *s, const real *S, real *state, int b, int h) {
    size_t sd = (size_t)s->dv * (size_t)s->dk;
    if (state) memcpy(state + ((size_t)b * (size_t)s->H + (size_t)h) * sd, S, sd * sizeof(real));
}

GDN_HOT static void SFX(core_recurrent_bh)(const gdn_core_dims *s, int b, int h, const real *q,
                                   const real *k, const real *v, const real *g,
                                   const real *beta, real *o, real *ckpt, real *S,
                                   real *state) {
    SFX(core_index) ix = SFX(core_index_of)(s, b, h);
    int dk = s->dk, dv = s->dv;
    SFX(state_load)(s, S, state, b, h);
    for (int t = 0; t < s->T; t++) {
        if (ckpt && t % s->chunk == 0)
            memcpy(SFX(ckpt_at)(s, ckpt, b, h, t / s->chunk), S, (size_t)dv * dk * sizeof(real));
        size_t it = ix.h0 + (size_t)t * ix.h_stride;
        SFX(core_step)(S, S, dv, dk, q + ix.qk0 + t * ix.qk_stride, k + ix.qk0 + t * ix.qk_stride,
                       v + ix.v0 + t * ix.v_stride, exp(g[it]), beta[it], (real)s->scale,
                       o + ix.v0 + t * ix.v_stride);
    }
    SFX(state_store)(s, S, state, b, h);
}

/* Chunked (WY / UT transform) form, METHOD.md section 3. Within a chunk of L
 * tokens, gam = cumulative g; M[i][j] = beta_i exp(gam_i - gam_j) k_i.k_j (j < i);
 * W = (I + M)^-1 (beta exp(gam) K), U = (I + M)^-1 (beta V) (one unit-lower
 * triangular solve, the inverse is never formed); V' = U - W S^T;
 * O = scale [exp(gam) Q S^T + Lower(exp(gam_i - gam_j) Q K^T) V'] (diagonal included);
 * S <- exp(gam_L) S + sum_i exp(gam_L - gam_i) V'_i k_i^T. Every exponent is <= 0.
 * The products are small BLAS calls (single-threaded inside the OpenMP region). */
GDN_HOT static void SFX(core_chunked_bh)(const gdn_core_dims *s, int b, int h, const real *q,
                                 const real *k, const real *v, const real *g,
                                 const real *beta, real *o, real *ckpt, real *S,
                                 real *work, real *state) {
    SFX(core_index) ix = SFX(core_index_of)(s, b, h);
    int dk = s->dk, dv = s->dv, C = s->chunk, wu = dk + dv;
    int ldq = (int)ix.qk_stride, ldo = (int)ix.v_stride;
    real *gam = work;                       /* [C] */
    real *M = gam + C;                      /* [C][C]: K K^T, then the strict lower M */
    real *A = M + (size_t)C * C;            /* [C][C]: Q K^T, then the decayed lower part */
    real *WU = A + (size_t)C * C;           /* [C][dk + dv]: W | U, then W | V' */
    real *Kd = WU + (size_t)C * wu;         /* [C][dk]: exp(gam_L - gam_i) k_i */
    real scale = (real)s->scale;
    SFX(state_load)(s, S, state, b, h);
    for (int t0 = 0, c = 0; t0 < s->T; t0 += C, c++) {
        int L = s->T - t0 < C ? s->T - t0 : C;
        if (ckpt) memcpy(SFX(ckpt_at)(s, ckpt, b, h, c), S, (size_t)dv * dk * sizeof(real));
        const real *Q = q + ix.qk0 + (size_t)t0 * ix.qk_stride;
        const real *K = k + ix.qk0 + (size_t)t0 * ix.qk_stride;
        const real *V = v + ix.v0 + (size_t)t0 * ix.v_stride;
        real *O = o + ix.v0 + (size_t)t0 * ix.v_stride;
        const real *G = g + ix.h0 + (size_t)t0 * ix.h_stride;
        const real *Bt = beta + ix.h0 + (size_t)t0 * ix.h_stride;
        real run = 0;
        for (int i = 0; i < L; i++) gam[i] = run += G[(size_t)i * ix.h_stride];

        /* W | U right-hand sides, then (I + M) [W | U] = [beta e^gam K | beta V]. */
        GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, L, L, dk, 1, K, ldq, K, ldq, 0, M, C);
        for (int i = 0; i < L; i++) {
            real bi = Bt[(size_t)i * ix.h_stride], eg = bi * exp(gam[i]);
            for (int j = 0; j < i; j++) M[(size_t)i * C + j] *= bi * exp(gam[i] - gam[j]);
            const real *ki = K + (size_t)i * ix.qk_stride, *vi = V + (size_t)i * ix.v_stride;
            real *Wi = WU + (size_t)i * wu;
            GDN_SIMD
            for (int j = 0; j < dk; j++) Wi[j] = eg * ki[j];
            GDN_SIMD
            for (int r = 0; r < dv; r++) Wi[dk + r] = bi * vi[r];
        }
        TRSM(CblasRowMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, L, wu, 1, M, C, WU, wu);
        /* V' = U - W S^T */
        GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, L, dv, dk, -1, WU, wu, S, dk, 1, WU + dk, wu);
        /* O = scale exp(gam) Q S^T + scale Lower(exp(gam_i - gam_j) Q K^T) V' */
        GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, L, dv, dk, 1, Q, ldq, S, dk, 0, O, ldo);
        GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, L, L, dk, 1, Q, ldq, K, ldq, 0, A, C);
        for (int i = 0; i < L; i++) {
            real *Oi = O + (size_t)i * ix.v_stride, f = scale * exp(gam[i]);
            GDN_SIMD
            for (int r = 0; r < dv; r++) Oi[r] *= f;
            real *Ai = A + (size_t)i * C;
            for (int j = 0; j <= i; j++) Ai[j] *= exp(gam[i] - gam[j]);
            for (int j = i + 1; j < L; j++) Ai[j] = 0;
        }
        GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, L, dv, L, scale, A, C, WU + dk, wu, 1, O, ldo);
        /* S <- exp(gam_L) S + V'^T Kd */
        real eL = exp(gam[L - 1]);
        for (int i = 0; i < L; i++) {
            real f = exp(gam[L - 1] - gam[i]);
            const real *ki = K + (size_t)i * ix.qk_stride;
            real *kd = Kd + (size_t)i * dk;
            GDN_SIMD
            for (int j = 0; j < dk; j++) kd[j] = f * ki[j];
        }
        GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, dv, dk, L, 1, WU + dk, wu, Kd, dk, eL, S, dk);
    }
    SFX(state_store)(s, S, state, b, h);
}

/* Reals of scratch per thread for the forward / backward. */
static size_t SFX(core_work)(const gdn_core_dims *s) {
    size_t sd = (size_t)s->dv * (size_t)s->dk, C = (size_t)s->chunk;
    size_t fwd = sd + C + 2 * C * C + C * (2 * (size_t)s->dk + (size_t)s->dv);
    size_t bwd = (C + 2) * sd + 2 * (size_t)s->dv;
    return fwd > bwd ? fwd : bwd;
}

static int SFX(core_threads)(const gdn_core_dims *s, int nt) {
    if ((double)s->B * s->H * s->T * s->dk * s->dv <= GDN_PAR_MIN_WORK) return 1;
    int items = s->B * s->H;
    return nt < items ? nt : items;
}

/* state [B, H, dv, dk]: NULL is a zero start with nothing kept. work: nt x core_work. */
static void SFX(core_forward_w)(const gdn_core_dims *s, const real *q, const real *k, const real *v,
                                const real *g, const real *beta, real *o, real *ckpt, real *state, int nt,
                                real *work) {
    GF_ASSERT(s->B > 0 && s->T > 0 && s->H > 0 && s->dk > 0 && s->dv > 0 && s->chunk > 0);
    size_t sd = (size_t)s->dv * (size_t)s->dk, per = SFX(core_work)(s);
    nt = SFX(core_threads)(s, nt);
#pragma omp parallel num_threads(nt)
    {
        cpu_region_blas_serial();
        real *S = work + (size_t)omp_get_thread_num() * per;
#pragma omp for collapse(2) schedule(dynamic)
        for (int b = 0; b < s->B; b++)
            for (int h = 0; h < s->H; h++) {
                if (s->recurrent)
                    SFX(core_recurrent_bh)(s, b, h, q, k, v, g, beta, o, ckpt, S, state);
                else
                    SFX(core_chunked_bh)(s, b, h, q, k, v, g, beta, o, ckpt, S, S + sd, state);
            }
    }
}

/* Backward for one (b, h). Chunks are visited last to first; each one replays its
 * states from the checkpoint (states[i] = S before token t0 + i), then runs the
 * reverse recurrence token by token carrying dS = dL/dS_t:
 *   dS += do_t (scale q_t)^T;  dq_t = scale S_t^T do_t
 *   u = a S_{t-1} k;  delta = v - u;  e = dS k
 *   dbeta = e . delta;  dv = beta e;  dk = beta dS^T delta - beta a S_{t-1}^T e
 *   dS' = dS - beta e k^T;  dg = a sum(dS' * S_{t-1});  dS <- a dS'            */
GDN_HOT static void SFX(core_backward_bh)(const gdn_core_dims *s, int b, int h, const real *q,
                                  const real *k, const real *v, const real *g,
                                  const real *beta, const real *ckpt, const real *d_o,
                                  real *dq, real *dk_out, real *dv_out, real *dg,
                                  real *dbeta, real *states, real *dS, real *vec) {
    SFX(core_index) ix = SFX(core_index_of)(s, b, h);
    int dk = s->dk, dv = s->dv, C = s->chunk;
    size_t sd = (size_t)dv * dk;
    real scale = (real)s->scale;
    real *e = vec, *delta = vec + dv;
    memset(dS, 0, sd * sizeof(real));
    int nc = (s->T + C - 1) / C;
    for (int c = nc - 1; c >= 0; c--) {
        int t0 = c * C, L = s->T - t0 < C ? s->T - t0 : C;
        memcpy(states, SFX(ckpt_at)(s, (real *)ckpt, b, h, c), sd * sizeof(real));
        for (int i = 0; i < L; i++) {
            size_t t = (size_t)(t0 + i), it = ix.h0 + t * ix.h_stride;
            SFX(core_step)(states + (i + 1) * sd, states + i * sd, dv, dk, NULL,
                           k + ix.qk0 + t * ix.qk_stride, v + ix.v0 + t * ix.v_stride,
                           exp(g[it]), beta[it], scale, NULL);
        }
        for (int i = L - 1; i >= 0; i--) {
            size_t t = (size_t)(t0 + i), it = ix.h0 + t * ix.h_stride;
            const real *St = states + (i + 1) * sd, *Sp = states + i * sd;
            const real *qt = q + ix.qk0 + t * ix.qk_stride, *kt = k + ix.qk0 + t * ix.qk_stride;
            const real *vt = v + ix.v0 + t * ix.v_stride, *dot_ = d_o + ix.v0 + t * ix.v_stride;
            real *dqt = dq + ix.qk0 + t * ix.qk_stride, *dkt = dk_out + ix.qk0 + t * ix.qk_stride;
            real *dvt = dv_out + ix.v0 + t * ix.v_stride;
            real a = exp(g[it]), bt = beta[it];
            GDN_SIMD
            for (int j = 0; j < dk; j++) dqt[j] = dkt[j] = 0;
            real db = 0;
            int r = 0;
            for (; r + 4 <= dv; r += 4) {   /* four rows at a time, as in core_step */
                real *d0 = dS + (size_t)r * dk, *d1 = d0 + dk, *d2 = d1 + dk, *d3 = d2 + dk;
                const real *t0_ = St + (size_t)r * dk, *t1_ = t0_ + dk, *t2_ = t1_ + dk, *t3_ = t2_ + dk;
                const real *p0 = Sp + (size_t)r * dk, *p1 = p0 + dk, *p2 = p1 + dk, *p3 = p2 + dk;
                real o0 = scale * dot_[r], o1 = scale * dot_[r + 1];
                real o2 = scale * dot_[r + 2], o3 = scale * dot_[r + 3];
                real e0 = 0, e1 = 0, e2 = 0, e3 = 0, u0 = 0, u1 = 0, u2 = 0, u3 = 0;
                GDN_SIMD_REDUCE(e0, e1, e2, e3, u0, u1, u2, u3)
                for (int j = 0; j < dk; j++) {
                    real x0 = d0[j] + o0 * qt[j], x1 = d1[j] + o1 * qt[j];
                    real x2 = d2[j] + o2 * qt[j], x3 = d3[j] + o3 * qt[j];
                    d0[j] = x0;
                    d1[j] = x1;
                    d2[j] = x2;
                    d3[j] = x3;
                    dqt[j] += o0 * t0_[j] + o1 * t1_[j] + o2 * t2_[j] + o3 * t3_[j];
                    e0 += x0 * kt[j];
                    e1 += x1 * kt[j];
                    e2 += x2 * kt[j];
                    e3 += x3 * kt[j];
                    u0 += p0[j] * kt[j];
                    u1 += p1[j] * kt[j];
                    u2 += p2[j] * kt[j];
                    u3 += p3[j] * kt[j];
                }
                real ev[4] = {e0, e1, e2, e3}, uv[4] = {u0, u1, u2, u3};
                for (int i4 = 0; i4 < 4; i4++) {
                    e[r + i4] = ev[i4];
                    delta[r + i4] = vt[r + i4] - a * uv[i4];
                    db += ev[i4] * delta[r + i4];
                    dvt[r + i4] = bt * ev[i4];
                }
            }
            for (; r < dv; r++) {
                real *dSr = dS + (size_t)r * dk;
                const real *Str = St + (size_t)r * dk, *Spr = Sp + (size_t)r * dk;
                real sdo = scale * dot_[r], ek = 0, uk = 0;
                GDN_SIMD_REDUCE(ek, uk)
                for (int j = 0; j < dk; j++) {
                    dSr[j] += sdo * qt[j];
                    dqt[j] += sdo * Str[j];
                    ek += dSr[j] * kt[j];
                    uk += Spr[j] * kt[j];
                }
                e[r] = ek;
                delta[r] = vt[r] - a * uk;
                db += ek * delta[r];
                dvt[r] = bt * ek;
            }
            real dgs = 0;
            for (r = 0; r + 4 <= dv; r += 4) {
                real *d0 = dS + (size_t)r * dk, *d1 = d0 + dk, *d2 = d1 + dk, *d3 = d2 + dk;
                const real *p0 = Sp + (size_t)r * dk, *p1 = p0 + dk, *p2 = p1 + dk, *p3 = p2 + dk;
                real cd0 = bt * delta[r], cd1 = bt * delta[r + 1];
                real cd2 = bt * delta[r + 2], cd3 = bt * delta[r + 3];
                real be0 = bt * e[r], be1 = bt * e[r + 1], be2 = bt * e[r + 2], be3 = bt * e[r + 3];
                real ce0 = a * be0, ce1 = a * be1, ce2 = a * be2, ce3 = a * be3;
                real s0 = 0, s1 = 0, s2 = 0, s3 = 0;
                GDN_SIMD_REDUCE(s0, s1, s2, s3)
                for (int j = 0; j < dk; j++) {
                    real x0 = d0[j], x1 = d1[j], x2 = d2[j], x3 = d3[j];
                    real y0 = p0[j], y1 = p1[j], y2 = p2[j], y3 = p3[j];
                    dkt[j] += (cd0 * x0 - ce0 * y0) + (cd1 * x1 - ce1 * y1) +
                              (cd2 * x2 - ce2 * y2) + (cd3 * x3 - ce3 * y3);
                    real z0 = x0 - be0 * kt[j], z1 = x1 - be1 * kt[j];
                    real z2 = x2 - be2 * kt[j], z3 = x3 - be3 * kt[j];
                    s0 += z0 * y0;
                    s1 += z1 * y1;
                    s2 += z2 * y2;
                    s3 += z3 * y3;
                    d0[j] = a * z0;
                    d1[j] = a * z1;
                    d2[j] = a * z2;
                    d3[j] = a * z3;
                }
                dgs += (s0 + s1) + (s2 + s3);
            }
            for (; r < dv; r++) {
                real *dSr = dS + (size_t)r * dk;
                const real *Spr = Sp + (size_t)r * dk;
                real cd = bt * delta[r], ce = bt * a * e[r], be = bt * e[r], acc = 0;
                GDN_SIMD_REDUCE(acc)
                for (int j = 0; j < dk; j++) {
                    dkt[j] += cd * dSr[j] - ce * Spr[j];
                    real dsp = dSr[j] - be * kt[j];
                    acc += dsp * Spr[j];
                    dSr[j] = a * dsp;
                }
                dgs += acc;
            }
            dg[it] = a * dgs;
            dbeta[it] = db;
        }
    }
}

static void SFX(core_backward_w)(const gdn_core_dims *s, const real *q, const real *k, const real *v,
                                 const real *g, const real *beta, const real *ckpt, const real *d_o, real *dq,
                                 real *dk, real *dv, real *dg, real *dbeta, int nt, real *work) {
    GF_ASSERT(s->B > 0 && s->T > 0 && s->H > 0 && s->dk > 0 && s->dv > 0 && s->chunk > 0);
    size_t sd = (size_t)s->dv * (size_t)s->dk, C = (size_t)s->chunk, per = SFX(core_work)(s);
    nt = SFX(core_threads)(s, nt);
#pragma omp parallel num_threads(nt)
    {
        cpu_region_blas_serial();
        real *states = work + (size_t)omp_get_thread_num() * per;
#pragma omp for collapse(2) schedule(dynamic)
        for (int b = 0; b < s->B; b++)
            for (int h = 0; h < s->H; h++)
                SFX(core_backward_bh)(s, b, h, q, k, v, g, beta, ckpt, d_o, dq, dk, dv, dg, dbeta,
                                      states, states + (C + 1) * sd, states + (C + 2) * sd);
    }
}
