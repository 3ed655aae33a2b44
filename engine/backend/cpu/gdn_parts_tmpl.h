/* Template (included by cpu_gdn.c / engine/gdn/gdn_ref_f64.c with `real` and SFX defined):
 * the GDN layer's element-wise work around the core recurrence, forward and
 * backward, on raw arrays (the backend ops be_gdn_prep, be_gdn_gated_norm and
 * their backwards; the float64 reference layer composes the same parts):
 * optional bias and short conv, activations, per-head L2 norm, decay and
 * write gates, gated RMSNorm. Projections are the caller's (GEMMs). Every
 * reduction runs in a fixed order whatever the thread count. */

static inline real SFX(sigmoid)(real x) { return (real)1 / ((real)1 + exp(-x)); }
static inline real SFX(silu)(real x) { return x * SFX(sigmoid)(x); }
static inline real SFX(silu_grad)(real x) {
    real s = SFX(sigmoid)(x);
    return s * ((real)1 + x * ((real)1 - s));
}
static inline real SFX(softplus)(real x) { return x > (real)20 ? x : log1p(exp(x)); }

/* qkv_pre[n, ch] = sum_w conv[ch, w] proj[n - (K-1) + w, ch] within the sequence
 * (earlier tokens from tail [B, K-1, qkv] when given), or a copy. */
static void SFX(qkv_conv_forward)(const gdn_part_dims *d, const real *proj, const real *conv, const real *tail,
                                  real *qkv_pre, int nt) {
    gdn_cols pc = gdn_cols_of(d);
    int T = d->T, N = d->B * d->T;
#pragma omp parallel for schedule(static) num_threads(gdn_par_threads(d, nt))
    for (int n = 0; n < N; n++) {
        int t = n % T;
        const real *row = proj + (size_t)n * pc.width;
        real *out = qkv_pre + (size_t)n * pc.qkv;
        if (!conv) {
            memcpy(out, row, (size_t)pc.qkv * sizeof(real));
            continue;
        }
        for (int ch = 0; ch < pc.qkv; ch++) {
            const real *w = conv + (size_t)ch * GDN_CONV_K;
            real acc = 0;
            for (int i = 0; i < GDN_CONV_K; i++) {
                int back = GDN_CONV_K - 1 - i; /* tap i reads token t - back */
                if (t - back >= 0)
                    acc += w[i] * row[(ptrdiff_t)ch - (ptrdiff_t)back * pc.width];
                else if (tail) /* token t - back of an earlier call */
                    acc += w[i] * tail[((size_t)(n / T) * (GDN_CONV_K - 1) + (size_t)(GDN_CONV_K - 1 + t - back)) *
                                           pc.qkv + ch];
            }
            out[ch] = acc;
        }
    }
}

/* Keeps the q|k|v projections of the last K-1 tokens of each sequence. */
static void SFX(conv_tail_update)(const gdn_part_dims *d, const real *proj, real *tail) {
    gdn_cols pc = gdn_cols_of(d);
    int K1 = GDN_CONV_K - 1, T = d->T;
    for (int b = 0; b < d->B; b++) {
        real *tb = tail + (size_t)b * K1 * pc.qkv;
        for (int j = 0; j < K1; j++) { /* ascending: reads row T + j >= j before it is overwritten */
            int tau = T - K1 + j;
            const real *src = tau >= 0 ? proj + ((size_t)b * T + tau) * pc.width : tb + (size_t)(K1 + tau) * pc.qkv;
            memmove(tb + (size_t)j * pc.qkv, src, (size_t)pc.qkv * sizeof(real));
        }
    }
}

/* silu on q, k, v; L2 norm of q, k per head; g and beta. */
static void SFX(gates_forward)(const gdn_part_dims *d, const real *proj, const real *qkv_pre, const real *a_log,
                               const real *dt_bias, real *q, real *k, real *v, real *g, real *beta, int nt) {
    gdn_cols pc = gdn_cols_of(d);
    int H = d->H, dk = d->dk, dv = d->dv, N = d->B * d->T;
#pragma omp parallel for schedule(static) num_threads(gdn_par_threads(d, nt))
    for (int n = 0; n < N; n++) {
        const real *pre = qkv_pre + (size_t)n * pc.qkv;
        const real *row = proj + (size_t)n * pc.width;
        for (int h = 0; h < H; h++) {
            for (int which = 0; which < 2; which++) {
                const real *in = pre + (which ? pc.k : pc.q) + h * dk;
                real *out = (which ? k : q) + ((size_t)n * H + h) * dk;
                real ss = 0;
                for (int j = 0; j < dk; j++) {
                    out[j] = SFX(silu)(in[j]);
                    ss += out[j] * out[j];
                }
                real inv = (real)1 / sqrt(ss + (real)GDN_QK_L2_EPS);
                for (int j = 0; j < dk; j++) out[j] *= inv;
            }
            const real *vin = pre + pc.v + h * dv;
            real *vout = v + ((size_t)n * H + h) * dv;
            for (int j = 0; j < dv; j++) vout[j] = SFX(silu)(vin[j]);
            g[(size_t)n * H + h] = -exp(a_log[h]) * SFX(softplus)(row[pc.a + h] + dt_bias[h]);
            beta[(size_t)n * H + h] = SFX(sigmoid)(row[pc.b + h]);
        }
    }
}

/* proj (in/out: bqkv added to its q|k|v columns) -> qkv_pre, q, k, v, g, beta;
 * tail (optional) read and updated. */
static void SFX(gdn_prep_part)(const gdn_part_dims *d, real *proj, const real *bqkv, const real *conv,
                               real *tail, const real *a_log, const real *dt_bias, real *qkv_pre, real *q,
                               real *k, real *v, real *g, real *beta, int nt) {
    gdn_cols pc = gdn_cols_of(d);
    int N = d->B * d->T;
    if (bqkv)
        for (int n = 0; n < N; n++)
            for (int ch = 0; ch < pc.qkv; ch++) proj[(size_t)n * pc.width + ch] += bqkv[ch];
    SFX(qkv_conv_forward)(d, proj, conv, tail, qkv_pre, nt);
    if (tail) SFX(conv_tail_update)(d, proj, tail);
    SFX(gates_forward)(d, proj, qkv_pre, a_log, dt_bias, q, k, v, g, beta, nt);
}

/* z = RMSNorm(o) * w_norm * silu(g_proj x), per head; rstd [N, H]. */
static void SFX(gdn_gated_norm_part)(const gdn_part_dims *d, const real *o, const real *proj, const real *w_norm,
                                     real *z, real *rstd, int nt) {
    gdn_cols pc = gdn_cols_of(d);
    int H = d->H, dv = d->dv, N = d->B * d->T;
#pragma omp parallel for schedule(static) num_threads(gdn_par_threads(d, nt))
    for (int n = 0; n < N; n++)
        for (int h = 0; h < H; h++) {
            size_t off = ((size_t)n * H + h) * dv;
            const real *on = o + off;
            const real *gp = proj + (size_t)n * pc.width + pc.g + h * dv;
            real ss = 0;
            for (int j = 0; j < dv; j++) ss += on[j] * on[j];
            real r = (real)1 / sqrt(ss / (real)dv + (real)d->norm_eps);
            if (rstd) rstd[(size_t)n * H + h] = r;
            for (int j = 0; j < dv; j++) z[off + j] = on[j] * r * w_norm[j] * SFX(silu)(gp[j]);
        }
}

/* Reals of scratch gdn_gated_norm_backward_part needs (w_norm's partial sums). */
static size_t SFX(gated_norm_work)(const gdn_part_dims *d) {
    size_t N = (size_t)d->B * d->T;
    return (N + GDN_ROW_BLOCK - 1) / GDN_ROW_BLOCK * (size_t)d->dv;
}

/* From dz: d_o (may alias dz), the g columns of dproj, and w_norm's grad (+=,
 * optional; partial sums per block of GDN_ROW_BLOCK rows in `work`, added in order). */
static void SFX(gdn_gated_norm_backward_part)(const gdn_part_dims *d, const real *dz, const real *o,
                                              const real *rstd, const real *proj, const real *w_norm, real *d_o,
                                              real *dproj, real *dw_norm, real *work, int nt) {
    gdn_cols pc = gdn_cols_of(d);
    int H = d->H, dv = d->dv, N = d->B * d->T;
    int nblk = (N + GDN_ROW_BLOCK - 1) / GDN_ROW_BLOCK;
#pragma omp parallel for schedule(static) num_threads(gdn_par_threads(d, nt))
    for (int ib = 0; ib < nblk; ib++) {
        real *dwn = work + (size_t)ib * dv;
        for (int j = 0; j < dv; j++) dwn[j] = 0;
        int n1 = (ib + 1) * GDN_ROW_BLOCK < N ? (ib + 1) * GDN_ROW_BLOCK : N;
        for (int n = ib * GDN_ROW_BLOCK; n < n1; n++)
            for (int h = 0; h < H; h++) {
                size_t off = ((size_t)n * H + h) * dv;
                const real *on = o + off, *dzr = dz + off;
                const real *gp = proj + (size_t)n * pc.width + pc.g + h * dv;
                real *dgp = dproj + (size_t)n * pc.width + pc.g + h * dv;
                real *dor = d_o + off;
                real r = rstd[(size_t)n * H + h], mo = 0;
                for (int j = 0; j < dv; j++) {
                    real sg = SFX(silu)(gp[j]), nj = on[j] * r;
                    real m = dzr[j] * w_norm[j] * sg; /* dL/d(normalized o) */
                    dwn[j] += dzr[j] * nj * sg;
                    dgp[j] = dzr[j] * nj * w_norm[j] * SFX(silu_grad)(gp[j]);
                    dor[j] = m;
                    mo += m * on[j];
                }
                real k3 = r * r * r * mo / (real)dv;
                for (int j = 0; j < dv; j++) dor[j] = r * dor[j] - k3 * on[j];
            }
    }
    if (dw_norm)
        for (int ib = 0; ib < nblk; ib++)
            for (int j = 0; j < dv; j++) dw_norm[j] += work[(size_t)ib * dv + j];
}

/* (dq_n, dk_n, dv) -> pre-activation grads dC [N, qkv]; (dg, dbeta) -> a, b columns of dproj. */
static void SFX(gates_backward)(const gdn_part_dims *d, const real *proj, const real *qkv_pre, const real *q,
                                const real *k, const real *beta, const real *a_log, const real *dt_bias,
                                const real *dqn, const real *dkn, const real *dvv, const real *dg,
                                const real *dbeta, real *dC, real *dproj, int nt) {
    gdn_cols pc = gdn_cols_of(d);
    int H = d->H, dk = d->dk, dv = d->dv, N = d->B * d->T;
#pragma omp parallel for schedule(static) num_threads(gdn_par_threads(d, nt))
    for (int n = 0; n < N; n++) {
        const real *pre = qkv_pre + (size_t)n * pc.qkv;
        const real *row = proj + (size_t)n * pc.width;
        real *dpre = dC + (size_t)n * pc.qkv;
        real *drow = dproj + (size_t)n * pc.width;
        for (int h = 0; h < H; h++) {
            for (int which = 0; which < 2; which++) {
                size_t off = ((size_t)n * H + h) * dk;
                const real *xn = (which ? k : q) + off;
                const real *dxn = (which ? dkn : dqn) + off;
                const real *in = pre + (which ? pc.k : pc.q) + h * dk;
                real *dout = dpre + (which ? pc.k : pc.q) + h * dk;
                real ss = 0, prj = 0;
                for (int j = 0; j < dk; j++) {
                    real a = SFX(silu)(in[j]);
                    ss += a * a;
                    prj += xn[j] * dxn[j];
                }
                real inv = (real)1 / sqrt(ss + (real)GDN_QK_L2_EPS);
                for (int j = 0; j < dk; j++) dout[j] = inv * (dxn[j] - xn[j] * prj) * SFX(silu_grad)(in[j]);
            }
            const real *vin = pre + pc.v + h * dv;
            const real *dvr = dvv + ((size_t)n * H + h) * dv;
            real *dvo = dpre + pc.v + h * dv;
            for (int j = 0; j < dv; j++) dvo[j] = dvr[j] * SFX(silu_grad)(vin[j]);
            size_t nh = (size_t)n * H + h;
            real u = row[pc.a + h] + dt_bias[h];
            /* g = -exp(A_log) softplus(u): dg/du = -exp(A_log) sigmoid(u) */
            drow[pc.a + h] = dg[nh] * -exp(a_log[h]) * SFX(sigmoid)(u);
            drow[pc.b + h] = dbeta[nh] * beta[nh] * ((real)1 - beta[nh]);
        }
    }
}

/* dC -> q, k, v columns of dproj (through the conv when on) and conv / bias grads.
 * Threads own blocks of 64 channels, so rows are read in contiguous runs and
 * the conv / bias gradients need no reduction across threads. */
static void SFX(qkv_conv_backward)(const gdn_part_dims *d, const real *proj, const real *conv, const real *dC,
                                   real *dproj, real *dconv, real *dbias, int nt) {
    gdn_cols pc = gdn_cols_of(d);
    int B = d->B, T = d->T, K = GDN_CONV_K, blk = 64;
    int nblk = (pc.qkv + blk - 1) / blk;
#pragma omp parallel for schedule(static) num_threads(gdn_par_threads(d, nt))
    for (int ib = 0; ib < nblk; ib++) {
        int c0 = ib * blk, c1 = c0 + blk < pc.qkv ? c0 + blk : pc.qkv;
        real db[64] = {0};
        for (int b = 0; b < B; b++)
            for (int t = 0; t < T; t++) {
                size_t n = (size_t)b * T + t;
                const real *dc = dC + n * pc.qkv;
                real *dp = dproj + n * pc.width;
                if (!conv) {
                    for (int ch = c0; ch < c1; ch++) dp[ch] = dc[ch];
                } else {
                    for (int ch = c0; ch < c1; ch++) dp[ch] = 0;
                    /* proj[t] feeds qkv_pre[t + back] through tap K-1-back */
                    for (int back = 0; back < K && t + back < T; back++) {
                        const real *dcb = dc + (size_t)back * pc.qkv;
                        for (int ch = c0; ch < c1; ch++) dp[ch] += conv[(size_t)ch * K + K - 1 - back] * dcb[ch];
                    }
                    if (dconv)
                        for (int back = 0; back < K && back <= t; back++) {
                            const real *pr = proj + (n - back) * pc.width;
                            for (int ch = c0; ch < c1; ch++) dconv[(size_t)ch * K + K - 1 - back] += dc[ch] * pr[ch];
                        }
                }
                for (int ch = c0; ch < c1; ch++) db[ch - c0] += dp[ch];
            }
        if (dbias)
            for (int ch = c0; ch < c1; ch++) dbias[ch] += db[ch - c0];
    }
}

/* Backward of gdn_prep_part (zero conv history): dproj's q k v a b columns
 * (overwritten), parameter grads += (each optional). dC: [N, qkv] scratch. */
static void SFX(gdn_prep_backward_part)(const gdn_part_dims *d, const real *proj, const real *qkv_pre,
                                        const real *q, const real *k, const real *g, const real *beta,
                                        const real *conv, const real *a_log, const real *dt_bias, const real *dq,
                                        const real *dk, const real *dv, const real *dg, const real *dbeta,
                                        real *dproj, real *dbqkv, real *dconv, real *da_log, real *ddt_bias,
                                        real *dC, int nt) {
    gdn_cols pc = gdn_cols_of(d);
    int H = d->H, N = d->B * d->T;
    SFX(gates_backward)(d, proj, qkv_pre, q, k, beta, a_log, dt_bias, dq, dk, dv, dg, dbeta, dC, dproj, nt);
    for (int h = 0; h < H; h++) { /* A_log and dt_bias: sums over tokens, in order */
        real dal = 0, ddt = 0;
        for (int n = 0; n < N; n++) {
            size_t nh = (size_t)n * H + h;
            dal += dg[nh] * g[nh]; /* dg/dA_log = g */
            ddt += dproj[(size_t)n * pc.width + pc.a + h];
        }
        if (da_log) da_log[h] += dal;
        if (ddt_bias) ddt_bias[h] += ddt;
    }
    SFX(qkv_conv_backward)(d, proj, conv, dC, dproj, dconv, dbqkv, nt);
}
