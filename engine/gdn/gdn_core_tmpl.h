/* Template (included by gdn_f32.c / gdn_f64.c with `real` and SFX defined):
 * the gated delta-rule recurrence, forward in two forms and backward.
 *
 * State per (sequence, head): S [dv][dk] row-major, zero at t = 0.
 *   S_t = a_t S_{t-1} (I - beta_t k_t k_t^T) + beta_t v_t k_t^T,  a_t = exp(g_t)
 *   o_t = S_t (scale q_t)
 * Work is split across (sequence, head) pairs with OpenMP; each pair is serial.
 * Inner loops over dk / dv carry `omp simd` so that reductions vectorize without
 * -ffast-math (the only reassociation is inside these dot products). */

#ifndef GDN_SIMD
#define GDN_SIMD _Pragma("omp simd")
#define GDN_SIMD_REDUCE(...) GDN_PRAGMA_(omp simd reduction(+ : __VA_ARGS__))
#define GDN_PRAGMA_(x) _Pragma(#x)
#endif

/* Offsets of one (b, h) pair in the token-major tensors. */
typedef struct {
    size_t qk_stride, v_stride, h_stride;   /* between consecutive tokens */
    size_t qk0, v0, h0;                     /* token 0 of this (b, h) */
} SFX(core_index);

static SFX(core_index) SFX(core_index_of)(const gdn_core_shape *s, int b, int h) {
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

static real *SFX(ckpt_at)(const gdn_core_shape *s, real *ckpt, int b, int h, int c) {
    int nc = (s->T + s->chunk - 1) / s->chunk;
    size_t sd = (size_t)s->dv * (size_t)s->dk;
    return ckpt + (((size_t)b * (size_t)s->H + (size_t)h) * (size_t)nc + (size_t)c) * sd;
}

static real SFX(dot)(const real *a, const real *b, int n) {
    real acc = 0;
    GDN_SIMD_REDUCE(acc)
    for (int j = 0; j < n; j++) acc += a[j] * b[j];
    return acc;
}

/* One token: dst = a src (I - beta k k^T) + beta v k^T (dst may equal src);
 * when o is not NULL also o = dst (scale q). */
static void SFX(core_step)(real *dst, const real *src, int dv, int dk, const real *q,
                           const real *k, const real *v, real a, real beta, real scale,
                           real *o) {
    for (int r = 0; r < dv; r++) {
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

static void SFX(core_recurrent_bh)(const gdn_core_shape *s, int b, int h, const real *q,
                                   const real *k, const real *v, const real *g,
                                   const real *beta, real *o, real *ckpt, real *S) {
    SFX(core_index) ix = SFX(core_index_of)(s, b, h);
    int dk = s->dk, dv = s->dv;
    memset(S, 0, (size_t)dv * dk * sizeof(real));
    for (int t = 0; t < s->T; t++) {
        if (ckpt && t % s->chunk == 0)
            memcpy(SFX(ckpt_at)(s, ckpt, b, h, t / s->chunk), S, (size_t)dv * dk * sizeof(real));
        size_t it = ix.h0 + (size_t)t * ix.h_stride;
        SFX(core_step)(S, S, dv, dk, q + ix.qk0 + t * ix.qk_stride, k + ix.qk0 + t * ix.qk_stride,
                       v + ix.v0 + t * ix.v_stride, exp(g[it]), beta[it], (real)s->scale,
                       o + ix.v0 + t * ix.v_stride);
    }
}

/* Chunked (WY / UT transform) form, METHOD.md section 3. Within a chunk of L
 * tokens, gam = cumulative g; M[i][j] = beta_i exp(gam_i - gam_j) k_i.k_j (j < i);
 * W = (I + M)^-1 (beta exp(gam) K), U = (I + M)^-1 (beta V) by forward substitution;
 * V' = U - W S^T; O = scale [exp(gam) Q S^T + Lower(exp(gam_i - gam_j) Q K^T) V'];
 * S <- exp(gam_L) S + sum_i exp(gam_L - gam_i) V'_i k_i^T. Every exponent is <= 0. */
static void SFX(core_chunked_bh)(const gdn_core_shape *s, int b, int h, const real *q,
                                 const real *k, const real *v, const real *g,
                                 const real *beta, real *o, real *ckpt, real *S,
                                 real *work) {
    SFX(core_index) ix = SFX(core_index_of)(s, b, h);
    int dk = s->dk, dv = s->dv, C = s->chunk;
    real *gam = work;                       /* [C] */
    real *M = gam + C;                      /* [C][C] */
    real *W = M + (size_t)C * C;            /* [C][dk] */
    real *U = W + (size_t)C * dk;           /* [C][dv], becomes V' */
    real scale = (real)s->scale;
    memset(S, 0, (size_t)dv * dk * sizeof(real));
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

        for (int i = 0; i < L; i++) {
            const real *ki = K + (size_t)i * ix.qk_stride, *vi = V + (size_t)i * ix.v_stride;
            real bi = Bt[(size_t)i * ix.h_stride];
            real *Wi = W + (size_t)i * dk, *Ui = U + (size_t)i * dv;
            real eg = bi * exp(gam[i]);
            GDN_SIMD
            for (int j = 0; j < dk; j++) Wi[j] = eg * ki[j];
            GDN_SIMD
            for (int r = 0; r < dv; r++) Ui[r] = bi * vi[r];
            for (int j = 0; j < i; j++) {
                real m = bi * exp(gam[i] - gam[j]) * SFX(dot)(ki, K + (size_t)j * ix.qk_stride, dk);
                M[(size_t)i * C + j] = m;
                const real *Wj = W + (size_t)j * dk, *Uj = U + (size_t)j * dv;
                GDN_SIMD
                for (int x = 0; x < dk; x++) Wi[x] -= m * Wj[x];
                GDN_SIMD
                for (int r = 0; r < dv; r++) Ui[r] -= m * Uj[r];
            }
        }
        /* Inter-chunk part: V' = U - S W_i, O_i = exp(gam_i) S q_i. */
        for (int i = 0; i < L; i++) {
            const real *Wi = W + (size_t)i * dk, *Qi = Q + (size_t)i * ix.qk_stride;
            real *Ui = U + (size_t)i * dv, *Oi = O + (size_t)i * ix.v_stride;
            real eg = exp(gam[i]);
            for (int r = 0; r < dv; r++) {
                const real *Sr = S + (size_t)r * dk;
                real sw = 0, sq = 0;
                GDN_SIMD_REDUCE(sw, sq)
                for (int j = 0; j < dk; j++) {
                    sw += Sr[j] * Wi[j];
                    sq += Sr[j] * Qi[j];
                }
                Ui[r] -= sw;
                Oi[r] = eg * sq;
            }
        }
        /* Intra-chunk part: O_i += sum_{j <= i} exp(gam_i - gam_j) (q_i . k_j) V'_j. */
        for (int i = 0; i < L; i++) {
            const real *Qi = Q + (size_t)i * ix.qk_stride;
            real *Oi = O + (size_t)i * ix.v_stride;
            for (int j = 0; j <= i; j++) {
                real a = exp(gam[i] - gam[j]) * SFX(dot)(Qi, K + (size_t)j * ix.qk_stride, dk);
                const real *Uj = U + (size_t)j * dv;
                GDN_SIMD
                for (int r = 0; r < dv; r++) Oi[r] += a * Uj[r];
            }
            GDN_SIMD
            for (int r = 0; r < dv; r++) Oi[r] *= scale;
        }
        /* State to the next chunk. */
        real eL = exp(gam[L - 1]);
        for (int i = 0; i < L; i++) gam[i] = exp(gam[L - 1] - gam[i]);
        for (int r = 0; r < dv; r++) {
            real *Sr = S + (size_t)r * dk;
            GDN_SIMD
            for (int j = 0; j < dk; j++) Sr[j] *= eL;
            for (int i = 0; i < L; i++) {
                real cf = gam[i] * U[(size_t)i * dv + r];
                const real *Ki = K + (size_t)i * ix.qk_stride;
                GDN_SIMD
                for (int j = 0; j < dk; j++) Sr[j] += cf * Ki[j];
            }
        }
    }
}

void SFX(gdn_core_forward)(const gdn_core_shape *s, const real *q, const real *k,
                           const real *v, const real *g, const real *beta, real *o,
                           real *ckpt) {
    GF_ASSERT(s->B > 0 && s->T > 0 && s->H > 0 && s->dk > 0 && s->dv > 0 && s->chunk > 0);
    size_t sd = (size_t)s->dv * (size_t)s->dk, C = (size_t)s->chunk;
    size_t nwork = C + C * C + C * (size_t)s->dk + C * (size_t)s->dv;
#pragma omp parallel
    {
        real *S = gf_malloc((sd + nwork) * sizeof(real));
#pragma omp for collapse(2) schedule(dynamic)
        for (int b = 0; b < s->B; b++)
            for (int h = 0; h < s->H; h++) {
                if (s->form == GDN_FORM_RECURRENT)
                    SFX(core_recurrent_bh)(s, b, h, q, k, v, g, beta, o, ckpt, S);
                else
                    SFX(core_chunked_bh)(s, b, h, q, k, v, g, beta, o, ckpt, S, S + sd);
            }
        free(S);
    }
}

/* Backward for one (b, h). Chunks are visited last to first; each one replays its
 * states from the checkpoint (states[i] = S before token t0 + i), then runs the
 * reverse recurrence token by token carrying dS = dL/dS_t:
 *   dS += do_t (scale q_t)^T;  dq_t = scale S_t^T do_t
 *   u = a S_{t-1} k;  delta = v - u;  e = dS k
 *   dbeta = e . delta;  dv = beta e;  dk = beta dS^T delta - beta a S_{t-1}^T e
 *   dS' = dS - beta e k^T;  dg = a sum(dS' * S_{t-1});  dS <- a dS'            */
static void SFX(core_backward_bh)(const gdn_core_shape *s, int b, int h, const real *q,
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
            for (int r = 0; r < dv; r++) {
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
            for (int r = 0; r < dv; r++) {
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

void SFX(gdn_core_backward)(const gdn_core_shape *s, const real *q, const real *k,
                            const real *v, const real *g, const real *beta, const real *ckpt,
                            const real *d_o, real *dq, real *dk, real *dv, real *dg,
                            real *dbeta) {
    GF_ASSERT(s->B > 0 && s->T > 0 && s->H > 0 && s->dk > 0 && s->dv > 0 && s->chunk > 0);
    size_t sd = (size_t)s->dv * (size_t)s->dk, C = (size_t)s->chunk;
#pragma omp parallel
    {
        real *states = gf_malloc(((C + 2) * sd + 2 * (size_t)s->dv) * sizeof(real));
#pragma omp for collapse(2) schedule(dynamic)
        for (int b = 0; b < s->B; b++)
            for (int h = 0; h < s->H; h++)
                SFX(core_backward_bh)(s, b, h, q, k, v, g, beta, ckpt, d_o, dq, dk, dv, dg, dbeta,
                                      states, states + (C + 1) * sd, states + (C + 2) * sd);
        free(states);
    }
}
