/* Template (included by gdn_f32.c / gdn_f64.c with `real`, SFX and GEMM defined):
 * the whole GDN layer around the core recurrence — projections (BLAS), optional
 * bias and short conv, activations, per-head L2 norm, decay and write gates,
 * gated RMSNorm, output projection — forward and backward. */

static inline real SFX(sigmoid)(real x) { return (real)1 / ((real)1 + exp(-x)); }
static inline real SFX(silu)(real x) { return x * SFX(sigmoid)(x); }
static inline real SFX(silu_grad)(real x) {
    real s = SFX(sigmoid)(x);
    return s * ((real)1 + x * ((real)1 - s));
}
static inline real SFX(softplus)(real x) { return x > (real)20 ? x : log1p(exp(x)); }

/* Column offsets inside one row of cache->proj. */
typedef struct { int q, k, v, g, a, b, width, qkv; } SFX(proj_cols);

static SFX(proj_cols) SFX(proj_cols_of)(const gdn_config *c) {
    SFX(proj_cols) pc;
    int hk = c->H * c->dk, hv = c->H * c->dv;
    pc.q = 0;
    pc.k = hk;
    pc.v = 2 * hk;
    pc.g = 2 * hk + hv;
    pc.a = 2 * hk + 2 * hv;
    pc.b = pc.a + c->H;
    pc.width = gdn_in_width(c);
    pc.qkv = gdn_qkv_width(c);
    return pc;
}

/* qkv_pre[n, ch] = sum_w conv[ch, w] proj[n - (K-1) + w, ch] within the sequence, or a copy. */
static void SFX(qkv_conv_forward)(const gdn_config *c, const SFX(gdn_params) *p,
                                  SFX(gdn_cache) *ca, const real *tail) {
    SFX(proj_cols) pc = SFX(proj_cols_of)(c);
    int T = ca->T, N = ca->B * ca->T;
#pragma omp parallel for schedule(static) if ((double)N * c->H * (c->dk + c->dv) > GDN_PAR_MIN_WORK / 64)
    for (int n = 0; n < N; n++) {
        int t = n % T;
        const real *row = ca->proj + (size_t)n * pc.width;
        real *out = ca->qkv_pre + (size_t)n * pc.qkv;
        if (!c->conv) {
            memcpy(out, row, (size_t)pc.qkv * sizeof(real));
            continue;
        }
        for (int ch = 0; ch < pc.qkv; ch++) {
            const real *w = p->conv_q + (size_t)ch * GDN_CONV_K;
            real acc = 0;
            for (int i = 0; i < GDN_CONV_K; i++) {
                int back = GDN_CONV_K - 1 - i;   /* tap i reads token t - back */
                if (t - back >= 0)
                    acc += w[i] * row[(ptrdiff_t)ch - (ptrdiff_t)back * pc.width];
                else if (tail)   /* token t - back of an earlier call */
                    acc += w[i] * tail[((size_t)(n / T) * (GDN_CONV_K - 1) + (size_t)(GDN_CONV_K - 1 + t - back)) *
                                           pc.qkv + ch];
            }
            out[ch] = acc;
        }
    }
}

/* silu on q, k, v; L2 norm of q, k per head; g and beta. */
static void SFX(gates_forward)(const gdn_config *c, const SFX(gdn_params) *p,
                               SFX(gdn_cache) *ca) {
    SFX(proj_cols) pc = SFX(proj_cols_of)(c);
    int H = c->H, dk = c->dk, dv = c->dv, N = ca->B * ca->T;
#pragma omp parallel for schedule(static) if ((double)N * c->H * (c->dk + c->dv) > GDN_PAR_MIN_WORK / 64)
    for (int n = 0; n < N; n++) {
        const real *pre = ca->qkv_pre + (size_t)n * pc.qkv;
        const real *row = ca->proj + (size_t)n * pc.width;
        for (int h = 0; h < H; h++) {
            for (int which = 0; which < 2; which++) {
                const real *in = pre + (which ? pc.k : pc.q) + h * dk;
                real *out = (which ? ca->k : ca->q) + ((size_t)n * H + h) * dk;
                real ss = 0;
                for (int j = 0; j < dk; j++) {
                    out[j] = SFX(silu)(in[j]);
                    ss += out[j] * out[j];
                }
                real inv = (real)1 / sqrt(ss + (real)GDN_QK_L2_EPS);
                for (int j = 0; j < dk; j++) out[j] *= inv;
            }
            const real *vin = pre + pc.v + h * dv;
            real *vout = ca->v + ((size_t)n * H + h) * dv;
            for (int j = 0; j < dv; j++) vout[j] = SFX(silu)(vin[j]);
            ca->g[(size_t)n * H + h] =
                -exp(p->a_log[h]) * SFX(softplus)(row[pc.a + h] + p->dt_bias[h]);
            ca->beta[(size_t)n * H + h] = SFX(sigmoid)(row[pc.b + h]);
        }
    }
}

/* z = RMSNorm(o) * w_norm * silu(g_proj x), per head. */
static void SFX(gated_norm_forward)(const gdn_config *c, const SFX(gdn_params) *p,
                                    SFX(gdn_cache) *ca) {
    SFX(proj_cols) pc = SFX(proj_cols_of)(c);
    int H = c->H, dv = c->dv, N = ca->B * ca->T;
#pragma omp parallel for schedule(static) if ((double)N * c->H * (c->dk + c->dv) > GDN_PAR_MIN_WORK / 64)
    for (int n = 0; n < N; n++)
        for (int h = 0; h < H; h++) {
            size_t off = ((size_t)n * H + h) * dv;
            const real *o = ca->o + off;
            const real *gp = ca->proj + (size_t)n * pc.width + pc.g + h * dv;
            real ss = 0;
            for (int j = 0; j < dv; j++) ss += o[j] * o[j];
            real r = (real)1 / sqrt(ss / (real)dv + (real)c->norm_eps);
            ca->rstd[(size_t)n * H + h] = r;
            for (int j = 0; j < dv; j++) ca->z[off + j] = o[j] * r * p->w_norm[j] * SFX(silu)(gp[j]);
        }
}

/* Keeps the q|k|v projections of the last K-1 tokens of each sequence. */
static void SFX(conv_tail_update)(const gdn_config *c, const SFX(gdn_cache) *ca, real *tail) {
    SFX(proj_cols) pc = SFX(proj_cols_of)(c);
    int K1 = GDN_CONV_K - 1, T = ca->T;
    for (int b = 0; b < ca->B; b++) {
        real *tb = tail + (size_t)b * K1 * pc.qkv;
        for (int j = 0; j < K1; j++) {   /* ascending: reads row T + j >= j before it is overwritten */
            int tau = T - K1 + j;
            const real *src = tau >= 0 ? ca->proj + ((size_t)b * T + tau) * pc.width
                                       : tb + (size_t)(K1 + tau) * pc.qkv;
            memmove(tb + (size_t)j * pc.qkv, src, (size_t)pc.qkv * sizeof(real));
        }
    }
}

void SFX(gdn_state_alloc)(SFX(gdn_state) *st, const gdn_config *c, int B) {
    GF_ASSERT(gdn_config_check(c) == 0 && B > 0);
    size_t nS = (size_t)B * c->H * c->dv * c->dk;
    size_t nT = (size_t)B * (GDN_CONV_K - 1) * gdn_qkv_width(c);
    st->B = B;
    st->n = nS + nT;
    st->block = gf_calloc(st->n, sizeof(real));
    st->S = st->block;
    st->conv_tail = st->block + nS;
}

void SFX(gdn_state_reset)(SFX(gdn_state) *st) { memset(st->block, 0, st->n * sizeof(real)); }

void SFX(gdn_state_free)(SFX(gdn_state) *st) {
    free(st->block);
    memset(st, 0, sizeof *st);
}

void SFX(gdn_forward)(const gdn_config *c, const SFX(gdn_params) *p, SFX(gdn_cache) *ca,
                      const real *x, real *y) {
    SFX(gdn_forward_state)(c, p, ca, x, y, NULL);
}

void SFX(gdn_forward_state)(const gdn_config *c, const SFX(gdn_params) *p, SFX(gdn_cache) *ca,
                            const real *x, real *y, SFX(gdn_state) *st) {
    GF_ASSERT(gdn_config_check(c) == 0);
    GF_ASSERT(ca->n_chunks == (ca->T + c->chunk - 1) / c->chunk);
    GF_ASSERT((c->qkv_bias != 0) == (p->bq != NULL) && (c->conv != 0) == (p->conv_q != NULL));
    SFX(proj_cols) pc = SFX(proj_cols_of)(c);
    int N = ca->B * ca->T, D = c->D, hv = c->H * c->dv;
    GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, N, pc.width, D, 1, x, D, p->wq, D, 0,
         ca->proj, pc.width);
    if (c->qkv_bias)
        for (int n = 0; n < N; n++)
            for (int ch = 0; ch < pc.qkv; ch++) ca->proj[(size_t)n * pc.width + ch] += p->bq[ch];
    GF_ASSERT(!st || st->B == ca->B);
    SFX(qkv_conv_forward)(c, p, ca, st ? st->conv_tail : NULL);
    if (st) SFX(conv_tail_update)(c, ca, st->conv_tail);
    SFX(gates_forward)(c, p, ca);
    gdn_core_shape s;
    gdn_core_shape_from(&s, c, ca->B, ca->T);
    SFX(gdn_core_forward_state)(&s, ca->q, ca->k, ca->v, ca->g, ca->beta, ca->o, ca->ckpt,
                                st ? st->S : NULL);
    SFX(gated_norm_forward)(c, p, ca);
    GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, N, D, hv, 1, ca->z, hv, p->wo, hv, 0, y, D);
}

/* ---------------------------------------------------------------- backward */

/* From dz: d_o (core output grad; may alias dz), the g_proj columns of dP, and
 * w_norm's grad. */
static void SFX(gated_norm_backward)(const gdn_config *c, const SFX(gdn_params) *p,
                                     const SFX(gdn_cache) *ca, const real *dz, real *d_o,
                                     real *dP, real *dw_norm) {
    SFX(proj_cols) pc = SFX(proj_cols_of)(c);
    int H = c->H, dv = c->dv, N = ca->B * ca->T;
#pragma omp parallel if ((double)N * c->H * c->dv > GDN_PAR_MIN_WORK / 64)
    {
        real *dwn = gf_calloc((size_t)dv, sizeof(real));
#pragma omp for schedule(static)
        for (int n = 0; n < N; n++)
            for (int h = 0; h < H; h++) {
                size_t off = ((size_t)n * H + h) * dv;
                const real *o = ca->o + off, *dzr = dz + off;
                const real *gp = ca->proj + (size_t)n * pc.width + pc.g + h * dv;
                real *dgp = dP + (size_t)n * pc.width + pc.g + h * dv;
                real *dor = d_o + off;
                real r = ca->rstd[(size_t)n * H + h], mo = 0;
                for (int j = 0; j < dv; j++) {
                    real sg = SFX(silu)(gp[j]), nj = o[j] * r;
                    real m = dzr[j] * p->w_norm[j] * sg;   /* dL/d(normalized o) */
                    dwn[j] += dzr[j] * nj * sg;
                    dgp[j] = dzr[j] * nj * p->w_norm[j] * SFX(silu_grad)(gp[j]);
                    dor[j] = m;
                    mo += m * o[j];
                }
                real k3 = r * r * r * mo / (real)dv;
                for (int j = 0; j < dv; j++) dor[j] = r * dor[j] - k3 * o[j];
            }
#pragma omp critical
        for (int j = 0; j < dv; j++) dw_norm[j] += dwn[j];
        free(dwn);
    }
}

/* (dq_n, dk_n, dv) -> pre-activation grads dC [N, qkv]; (dg, dbeta) -> a, b columns of dP. */
static void SFX(gates_backward)(const gdn_config *c, const SFX(gdn_params) *p,
                                const SFX(gdn_cache) *ca, const real *dqn, const real *dkn,
                                const real *dvv, const real *dg, const real *dbeta, real *dC,
                                real *dP) {
    SFX(proj_cols) pc = SFX(proj_cols_of)(c);
    int H = c->H, dk = c->dk, dv = c->dv, N = ca->B * ca->T;
#pragma omp parallel for schedule(static) if ((double)N * c->H * (c->dk + c->dv) > GDN_PAR_MIN_WORK / 64)
    for (int n = 0; n < N; n++) {
        const real *pre = ca->qkv_pre + (size_t)n * pc.qkv;
        const real *row = ca->proj + (size_t)n * pc.width;
        real *dpre = dC + (size_t)n * pc.qkv;
        real *drow = dP + (size_t)n * pc.width;
        for (int h = 0; h < H; h++) {
            for (int which = 0; which < 2; which++) {
                size_t off = ((size_t)n * H + h) * dk;
                const real *xn = (which ? ca->k : ca->q) + off;
                const real *dxn = (which ? dkn : dqn) + off;
                const real *in = pre + (which ? pc.k : pc.q) + h * dk;
                real *dout = dpre + (which ? pc.k : pc.q) + h * dk;
                real ss = 0, proj = 0;
                for (int j = 0; j < dk; j++) {
                    real a = SFX(silu)(in[j]);
                    ss += a * a;
                    proj += xn[j] * dxn[j];
                }
                real inv = (real)1 / sqrt(ss + (real)GDN_QK_L2_EPS);
                for (int j = 0; j < dk; j++)
                    dout[j] = inv * (dxn[j] - xn[j] * proj) * SFX(silu_grad)(in[j]);
            }
            const real *vin = pre + pc.v + h * dv;
            const real *dvr = dvv + ((size_t)n * H + h) * dv;
            real *dvo = dpre + pc.v + h * dv;
            for (int j = 0; j < dv; j++) dvo[j] = dvr[j] * SFX(silu_grad)(vin[j]);
            size_t nh = (size_t)n * H + h;
            real u = row[pc.a + h] + p->dt_bias[h];
            /* g = -exp(A_log) softplus(u): dg/du = -exp(A_log) sigmoid(u) */
            drow[pc.a + h] = dg[nh] * -exp(p->a_log[h]) * SFX(sigmoid)(u);
            drow[pc.b + h] = dbeta[nh] * ca->beta[nh] * ((real)1 - ca->beta[nh]);
        }
    }
}

/* dC -> q, k, v columns of dP (through the conv when on) and conv / bias grads.
 * Threads own blocks of 64 channels, so rows are read in contiguous runs and
 * the conv / bias gradients need no reduction across threads. */
static void SFX(qkv_conv_backward)(const gdn_config *c, const SFX(gdn_params) *p,
                                   const SFX(gdn_cache) *ca, const real *dC, real *dP,
                                   SFX(gdn_params) *grad) {
    SFX(proj_cols) pc = SFX(proj_cols_of)(c);
    int B = ca->B, T = ca->T, N = B * T, K = GDN_CONV_K, blk = 64;
    int nblk = (pc.qkv + blk - 1) / blk;
#pragma omp parallel for schedule(static) if ((double)N * c->H * (c->dk + c->dv) > GDN_PAR_MIN_WORK / 64)
    for (int ib = 0; ib < nblk; ib++) {
        int c0 = ib * blk, c1 = c0 + blk < pc.qkv ? c0 + blk : pc.qkv;
        real dbias[64] = {0};
        for (int b = 0; b < B; b++)
            for (int t = 0; t < T; t++) {
                size_t n = (size_t)b * T + t;
                const real *dc = dC + n * pc.qkv;
                real *dp = dP + n * pc.width;
                if (!c->conv) {
                    for (int ch = c0; ch < c1; ch++) dp[ch] = dc[ch];
                } else {
                    for (int ch = c0; ch < c1; ch++) dp[ch] = 0;
                    /* proj[t] feeds qkv_pre[t + back] through tap K-1-back */
                    for (int back = 0; back < K && t + back < T; back++) {
                        const real *dcb = dc + (size_t)back * pc.qkv;
                        for (int ch = c0; ch < c1; ch++)
                            dp[ch] += p->conv_q[(size_t)ch * K + K - 1 - back] * dcb[ch];
                    }
                    for (int back = 0; back < K && back <= t; back++) {
                        const real *pr = ca->proj + (n - back) * pc.width;
                        for (int ch = c0; ch < c1; ch++)
                            grad->conv_q[(size_t)ch * K + K - 1 - back] += dc[ch] * pr[ch];
                    }
                }
                for (int ch = c0; ch < c1; ch++) dbias[ch - c0] += dp[ch];
            }
        if (c->qkv_bias)
            for (int ch = c0; ch < c1; ch++) grad->bq[ch] += dbias[ch - c0];
    }
}

void SFX(gdn_backward)(const gdn_config *c, const SFX(gdn_params) *p, SFX(gdn_cache) *ca,
                       const real *x, const real *dy, real *dx, SFX(gdn_params) *grad) {
    GF_ASSERT(gdn_config_check(c) == 0);
    GF_ASSERT(grad->n == p->n && (grad->bq != NULL) == (p->bq != NULL) &&
              (grad->conv_q != NULL) == (p->conv_q != NULL));
    SFX(proj_cols) pc = SFX(proj_cols_of)(c);
    int N = ca->B * ca->T, D = c->D, H = c->H, hk = H * c->dk, hv = H * c->dv;
    size_t nN = (size_t)N;
    /* Scratch kept in the cache between steps: fresh pages every step cost ~6 %. */
    size_t need = nN * ((size_t)hv + (size_t)pc.width + (size_t)(2 * hk + hv + 2 * H) + (size_t)pc.qkv);
    if (ca->n_bwork < need) {
        free(ca->bwork);
        ca->bwork = gf_malloc(need * sizeof(real));
        ca->n_bwork = need;
    }
    real *dz = ca->bwork;                       /* [N, hv]; becomes d_o in place */
    real *d_o = dz;
    real *dP = dz + nN * hv;                    /* [N, in_width] */
    real *dq = dP + nN * pc.width;              /* dq dk [N, hk], dv [N, hv], dg dbeta [N, H] */
    real *dk = dq + nN * hk, *dv = dk + nN * hk, *dg = dv + nN * hv, *dbeta = dg + nN * H;
    real *dC = dbeta + nN * H;                  /* [N, qkv] */

    /* y = z Wo^T */
    GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, hv, D, 1, dy, D, p->wo, hv, 0, dz, hv);
    GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, D, hv, N, 1, dy, D, ca->z, hv, 1, grad->wo, hv);
    SFX(gated_norm_backward)(c, p, ca, dz, d_o, dP, grad->w_norm);

    gdn_core_shape s;
    gdn_core_shape_from(&s, c, ca->B, ca->T);
    SFX(gdn_core_backward)(&s, ca->q, ca->k, ca->v, ca->g, ca->beta, ca->ckpt, d_o, dq, dk, dv,
                           dg, dbeta);
    SFX(gates_backward)(c, p, ca, dq, dk, dv, dg, dbeta, dC, dP);
    for (int h = 0; h < H; h++) {   /* A_log and dt_bias: sums over tokens */
        real dal = 0, ddt = 0;
        for (int n = 0; n < N; n++) {
            size_t nh = (size_t)n * H + h;
            dal += dg[nh] * ca->g[nh];   /* dg/dA_log = g */
            ddt += dP[(size_t)n * pc.width + pc.a + h];
        }
        grad->a_log[h] += dal;
        grad->dt_bias[h] += ddt;
    }
    SFX(qkv_conv_backward)(c, p, ca, dC, dP, grad);

    /* proj = x W_in^T */
    if (dx) GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, D, pc.width, 1, dP, pc.width, p->wq, D,
                 0, dx, D);
    GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, pc.width, D, N, 1, dP, pc.width, x, D, 1, grad->wq,
         D);
}
