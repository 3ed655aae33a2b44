/* The CUDA backend's attention kernels, the product's code, run on the CPU
 * emulation (emu.h) against a float64 reference: the tensor-core forward
 * (every block shape of cuda_attention_cfg.h, the key range split over
 * blocks with the combine kernel, statistics and log-sum-exp), the tensor-core backward, and
 * the exact SIMT kernels in f32 and bf16. Small shapes (the emulation runs a
 * fiber per thread). Fresh random inputs each run (GRAFT_TEST_SEED repeats);
 * outputs poisoned with NaN first; relative L2 error per output with its
 * tolerance; NaN fails.
 *   make test-core-emu       (tests/integration/cuda_core_emu.sh runs it in make test)
 * Exit 0 all passed, 1 a check failed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <string>
#include <vector>

#include "backend/cuda/cuda_attention_cfg.h"
#include "backend/cuda/cuda_gemv.cuh"
#include "backend/cuda/cuda_ops.cuh"
#include "backend/cuda/cuda_wgmma.cuh"

static uint64_t rng_state;
static double urand() {
    rng_state ^= rng_state >> 12, rng_state ^= rng_state << 25, rng_state ^= rng_state >> 27;
    return ((rng_state * 2685821657736338717ull) >> 11) * (1.0 / 9007199254740992.0);
}
static float bf16r(float x) { return __bfloat162float(__float2bfloat16(x)); }

static int passed, failed;

static void check(const char *what, const std::vector<double> &got, const std::vector<double> &ref, double tol) {
    double num = 0, den = 0;
    size_t bad = 0;
    for (size_t i = 0; i < ref.size(); i++) {
        if (!std::isfinite(got[i])) {
            bad++;
            continue;
        }
        num += (got[i] - ref[i]) * (got[i] - ref[i]);
        den += ref[i] * ref[i];
    }
    const double rel = den > 0 ? sqrt(num / den) : sqrt(num);
    const bool ok = !bad && rel <= tol;
    if (bad) printf("%s  %-64s %zu of %zu not finite\n", ok ? "PASS" : "FAIL", what, bad, ref.size());
    else printf("%s  %-64s rel %.2e  tol %.0e\n", ok ? "PASS" : "FAIL", what, rel, tol);
    ok ? passed++ : failed++;
}

/* ------------------------------------------------------------- a fake backend over host memory */

struct fake_be {
    gf_backend be;
    cuda_state st;
    fake_be(bool fp32, int cfg, int split) {
        memset(&be, 0, sizeof be);
        memset(&st, 0, sizeof st);
        st.base.prop.multiProcessorCount = 132;
        st.base.fp32 = fp32;
        st.attn_cfg = cfg;
        st.attn_split = split;
        be.act = fp32 ? GF_F32 : GF_BF16;
        be.impl = &st;
    }
};

/* A tensor in the backend's storage (host memory), from / to doubles. */
struct tensor {
    std::vector<unsigned char> mem;
    gf_dtype t;
    size_t n;
    tensor(size_t n_, gf_dtype t_) : mem(n_ * gf_dtype_size(t_) + 16), t(t_), n(n_) { poison(); }
    void *ptr() { return mem.data(); }
    gf_buf buf() { return gf_buf{ptr(), t}; }
    void poison() { memset(mem.data(), 0xff, mem.size()); }
    void put(const std::vector<double> &x) {
        for (size_t i = 0; i < n; i++) {
            if (t == GF_BF16) ((bf16 *)ptr())[i] = __float2bfloat16((float)x[i]);
            else if (t == GF_F32) ((float *)ptr())[i] = (float)x[i];
            else ((double *)ptr())[i] = x[i];
        }
    }
    std::vector<double> get() {
        std::vector<double> x(n);
        for (size_t i = 0; i < n; i++)
            x[i] = t == GF_BF16 ? __bfloat162float(((bf16 *)ptr())[i]) : t == GF_F32 ? ((float *)ptr())[i] : ((double *)ptr())[i];
        return x;
    }
};

/* ------------------------------------------------------------- float64 reference */

/* s[j] = q . k_j / sqrt(hd) for the n keys from k0 on (k_j = k0 + j * stride); returns their max */
static double scores(double *s, const double *q, const double *k0, size_t stride, int n, int hd) {
    double m = -INFINITY;
    for (int j = 0; j < n; j++) {
        const double *kr = k0 + (size_t)j * stride;
        double a = 0;
        for (int d = 0; d < hd; d++) a += q[d] * kr[d];
        s[j] = a / sqrt((double)hd);
        m = fmax(m, s[j]);
    }
    return m;
}

struct ref_out {
    std::vector<double> out, lse, stats;
};

static ref_out reference(const std::vector<double> &q, const std::vector<double> &k, const std::vector<double> &v,
                         int B, int T, int H, int KV, int hd, int pos0, int S) {
    ref_out r;
    r.out.assign((size_t)B * T * H * hd, 0);
    r.lse.assign((size_t)B * H * T, 0);
    r.stats.assign((size_t)H * GF_STAT_COUNT, 0);
    const int G = H / KV;
    std::vector<double> s(pos0 + T);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            for (int h = 0; h < H; h++) {
                const int i = pos0 + t, kvh = h / G;
                const double *qr = &q[(((size_t)b * T + t) * H + h) * hd];
                const double m = scores(s.data(), qr, &k[((size_t)b * S * KV + kvh) * hd], (size_t)KV * hd, i + 1, hd);
                double z = 0;
                for (int j = 0; j <= i; j++) z += exp(s[j] - m);
                double *o = &r.out[(((size_t)b * T + t) * H + h) * hd];
                double dist = 0, ent = 0, rest = 0, rest_dist = 0;
                for (int j = 0; j <= i; j++) {
                    const double a = exp(s[j] - m) / z, dj = i - j > 0 ? (double)(i - j) : 0.5;
                    const double *vr = &v[(((size_t)b * S + j) * KV + kvh) * hd];
                    for (int d = 0; d < hd; d++) o[d] += a * vr[d];
                    dist += a * dj;
                    ent -= a * log(fmax(a, 1e-10));
                    if (j >= 1) rest += a, rest_dist += a * dj;
                }
                double ss = 0;
                for (int d = 0; d < hd; d++) ss += o[d] * o[d];
                r.lse[((size_t)b * H + h) * T + t] = m + log(z);
                double *st = &r.stats[(size_t)h * GF_STAT_COUNT];
                st[GF_STAT_DISTANCE] += dist;
                st[GF_STAT_ENTROPY] += ent;
                st[GF_STAT_OUT_RMS] += sqrt(ss / hd);
                st[GF_STAT_DIST_NOSINK] += i > 0 && rest > 0 ? rest_dist / rest : 0.5;
                st[GF_STAT_SINK] += exp(s[0] - m) / z;
            }
    return r;
}

/* dq, dk, dv of sum(out * dout) (pos0 = 0, S = T). */
static void reference_backward(std::vector<double> &dq, std::vector<double> &dk, std::vector<double> &dv,
                               const std::vector<double> &q, const std::vector<double> &k, const std::vector<double> &v,
                               const std::vector<double> &g, int B, int T, int H, int KV, int hd) {
    const int G = H / KV;
    dq.assign((size_t)B * T * H * hd, 0);
    dk.assign((size_t)B * T * KV * hd, 0);
    dv.assign(dk.size(), 0);
    std::vector<double> p(T), dp(T);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int t = 0; t < T; t++) {
                const int kvh = h / G;
                const double *qr = &q[(((size_t)b * T + t) * H + h) * hd], *gr = &g[(((size_t)b * T + t) * H + h) * hd];
                const double m = scores(p.data(), qr, &k[((size_t)b * T * KV + kvh) * hd], (size_t)KV * hd, t + 1, hd);
                double z = 0;
                for (int j = 0; j <= t; j++) z += (p[j] = exp(p[j] - m));
                double pdp = 0;
                for (int j = 0; j <= t; j++) {
                    p[j] /= z;
                    const double *vr = &v[(((size_t)b * T + j) * KV + kvh) * hd];
                    double a = 0;
                    for (int d = 0; d < hd; d++) a += gr[d] * vr[d];
                    dp[j] = a;
                    pdp += p[j] * a;
                }
                for (int j = 0; j <= t; j++) {
                    const double ds = p[j] * (dp[j] - pdp) / sqrt((double)hd);
                    const size_t kj = (((size_t)b * T + j) * KV + kvh) * hd;
                    for (int d = 0; d < hd; d++) {
                        dq[(((size_t)b * T + t) * H + h) * hd + d] += ds * k[kj + d];
                        dk[kj + d] += ds * qr[d];
                        dv[kj + d] += p[j] * gr[d];
                    }
                }
            }
}

static std::vector<double> rand_vec(size_t n, double a, bool round_bf16) {
    std::vector<double> x(n);
    for (auto &e : x) {
        e = (float)((2 * urand() - 1) * a); /* what the device stores: float, or bf16 below */
        if (round_bf16) e = bf16r((float)e);
    }
    return x;
}

/* ------------------------------------------------------------- cases */

static void forward_case(const char *variant, bool fp32, int cfg, int split, int B, int T, int H, int KV, int hd,
                         int pos0) {
    fake_be f(fp32, cfg, split);
    const gf_dtype act = fp32 ? GF_F32 : GF_BF16;
    const int S = pos0 + T + 2;
    auto q = rand_vec((size_t)B * T * H * hd, 2.0, !fp32);
    auto k = rand_vec((size_t)B * S * KV * hd, 2.0, !fp32);
    auto v = rand_vec((size_t)B * S * KV * hd, 1.0, !fp32);
    for (int b = 0; b < B; b++) /* a strong first key: sinks */
        for (int c = 0; c < KV * hd; c++) k[(size_t)b * S * KV * hd + c] = !fp32 ? bf16r((float)(3 * k[(size_t)b * S * KV * hd + c])) : 3 * k[(size_t)b * S * KV * hd + c];
    tensor tq(q.size(), act), tk(k.size(), act), tv(v.size(), act), to(q.size(), act);
    tensor tl((size_t)B * H * T, GF_F32), ts((size_t)H * GF_STAT_COUNT, GF_F64);
    tq.put(q), tk.put(k), tv.put(v);
    /* key rows past pos0 + T stay NaN (poisoned): reading them would show */
    for (int b = 0; b < B; b++)
        for (int j = pos0 + T; j < S; j++)
            for (int c = 0; c < KV * hd; c++) {
                const size_t e = ((size_t)b * S + j) * KV * hd + c;
                if (act == GF_BF16) ((bf16 *)tk.ptr())[e] = ((bf16 *)tv.ptr())[e] = __float2bfloat16(NAN);
                else ((float *)tk.ptr())[e] = ((float *)tv.ptr())[e] = NAN;
            }
    ts.put(std::vector<double>(ts.n, 0.0));
    gf_attn_shape sh = {B, T, H, KV, hd, pos0, S};
    cuda_attention(&f.be, to.buf(), tl.buf(), ts.buf(), tq.buf(), tk.buf(), tv.buf(), &sh);
    char name[160];
    if (f.be.error[0]) {
        printf("FAIL  %s: error: %s\n", variant, f.be.error);
        failed++;
        return;
    }
    ref_out r = reference(q, k, v, B, T, H, KV, hd, pos0, S);
    const double tol_out = fp32 ? 1e-5 : 1e-2;
    snprintf(name, sizeof name, "%s B%d T%d H%d/%d hd%d pos0 %d out", variant, B, T, H, KV, hd, pos0);
    check(name, to.get(), r.out, tol_out);
    snprintf(name, sizeof name, "%s B%d T%d H%d/%d hd%d pos0 %d lse", variant, B, T, H, KV, hd, pos0);
    check(name, tl.get(), r.lse, 1e-5);
    static const char *sn[GF_STAT_COUNT] = {"distance", "entropy", "out_rms", "dist_nosink", "sink"};
    auto got = ts.get();
    for (int c = 0; c < GF_STAT_COUNT; c++) {
        std::vector<double> g1(H), r1(H);
        for (int h = 0; h < H; h++) g1[h] = got[h * GF_STAT_COUNT + c], r1[h] = r.stats[h * GF_STAT_COUNT + c];
        snprintf(name, sizeof name, "%s B%d T%d H%d/%d hd%d pos0 %d %s", variant, B, T, H, KV, hd, pos0, sn[c]);
        check(name, g1, r1, c == GF_STAT_OUT_RMS ? tol_out : 2e-5);
    }
}

static void backward_case(const char *variant, bool fp32, int B, int T, int H, int KV, int hd,
                          int bwd = ATTN_BWD_CHOSEN) {
    fake_be f(fp32, -1, 0);
    f.st.attn_bwd = bwd;
    const gf_dtype act = fp32 ? GF_F32 : GF_BF16;
    auto q = rand_vec((size_t)B * T * H * hd, 2.0, !fp32);
    auto k = rand_vec((size_t)B * T * KV * hd, 2.0, !fp32);
    auto v = rand_vec((size_t)B * T * KV * hd, 1.0, !fp32);
    auto g = rand_vec(q.size(), 1.0, !fp32);
    tensor tq(q.size(), act), tk(k.size(), act), tv(v.size(), act), to(q.size(), act), tg(q.size(), act);
    tensor tl((size_t)B * H * T, GF_F32), dq(q.size(), act), dk(k.size(), act), dv(v.size(), act);
    tq.put(q), tk.put(k), tv.put(v), tg.put(g);
    gf_attn_shape sh = {B, T, H, KV, hd, 0, T};
    cuda_attention(&f.be, to.buf(), tl.buf(), gf_none(), tq.buf(), tk.buf(), tv.buf(), &sh);
    cuda_attention_backward(&f.be, dq.buf(), dk.buf(), dv.buf(), tg.buf(), to.buf(), tl.buf(), tq.buf(), tk.buf(),
                            tv.buf(), &sh);
    if (f.be.error[0]) {
        printf("FAIL  %s: error: %s\n", variant, f.be.error);
        failed++;
        return;
    }
    std::vector<double> rq, rk, rv;
    reference_backward(rq, rk, rv, q, k, v, g, B, T, H, KV, hd);
    const double tol = fp32 ? 1e-4 : 2e-2;
    char name[160];
    snprintf(name, sizeof name, "%s backward B%d T%d H%d/%d hd%d dq", variant, B, T, H, KV, hd);
    check(name, dq.get(), rq, tol);
    snprintf(name, sizeof name, "%s backward B%d T%d H%d/%d hd%d dk", variant, B, T, H, KV, hd);
    check(name, dk.get(), rk, tol);
    snprintf(name, sizeof name, "%s backward B%d T%d H%d/%d hd%d dv", variant, B, T, H, KV, hd);
    check(name, dv.get(), rv, tol);
}

/* ------------------------------------------------------------- dense ops, losses, optimizer */

static const char *mode_name(bool fp32) { return fp32 ? "f32 " : "bf16"; }
static double tol_of(bool fp32) { return fp32 ? 2e-6 : 1e-2; }

static void check_same(const char *what, bool same);

/* be_linear's few-row path (cuda_gemv.cu) against a float64 product: rows 1..4, in with a
 * remainder pack after the two-pack loop, out not a multiple of the block's 8 warps, bias and +=. */
static void gemv_case(bool fp32, int M, int in, int out, bool bias, bool accumulate) {
    fake_be f(fp32, -1, 0);
    gf_backend *be = &f.be;
    const gf_dtype act = fp32 ? GF_F32 : GF_BF16;
    auto x = rand_vec((size_t)M * in, 1.0, !fp32), W = rand_vec((size_t)out * in, 0.5, !fp32),
         b = rand_vec(out, 1.0, !fp32), y0 = rand_vec((size_t)M * out, 1.0, !fp32);
    tensor tx(x.size(), act), tW(W.size(), act), tb(out, act), ty(y0.size(), act);
    tx.put(x), tW.put(W), tb.put(b), ty.put(y0);
    if (!cuda_gemv_takes(be, tx.buf(), tW.buf(), M, in)) {
        check_same("gemv takes its shape", false);
        return;
    }
    cuda_gemv(be, ty.buf(), tx.buf(), tW.buf(), bias ? tb.buf() : gf_none(), M, in, out, accumulate);
    std::vector<double> ry((size_t)M * out);
    for (int m = 0; m < M; m++)
        for (int n = 0; n < out; n++) {
            double s = (bias ? b[n] : 0) + (accumulate ? y0[(size_t)m * out + n] : 0);
            for (int k = 0; k < in; k++) s += x[(size_t)m * in + k] * W[(size_t)n * in + k];
            ry[(size_t)m * out + n] = s;
        }
    char name[96];
    snprintf(name, sizeof name, "%s gemv M %d in %d out %d%s%s", mode_name(fp32), M, in, out, bias ? " bias" : "",
             accumulate ? " +=" : "");
    check(name, ty.get(), ry, tol_of(fp32));
}

/* RMSNorm at a row count: up to 2 x the multiprocessors (264 here) a block per row, beyond a warp per row. */
static void rmsnorm_rows_case(bool fp32, int N, int D) {
    fake_be f(fp32, -1, 0);
    gf_backend *be = &f.be;
    const gf_dtype act = fp32 ? GF_F32 : GF_BF16;
    const float eps = 1e-5f;
    auto x = rand_vec((size_t)N * D, 2.0, !fp32), w = rand_vec(D, 1.5, !fp32);
    tensor tx(x.size(), act), tw(D, act), ty(x.size(), act), tr(N, GF_F32);
    tx.put(x), tw.put(w);
    cuda_rmsnorm(be, ty.buf(), tr.buf(), tx.buf(), tw.buf(), N, D, eps);
    std::vector<double> ry(x.size()), rr(N);
    for (int n = 0; n < N; n++) {
        double ss = 0;
        for (int d = 0; d < D; d++) ss += x[(size_t)n * D + d] * x[(size_t)n * D + d];
        rr[n] = 1.0 / sqrt(ss / D + eps);
        for (int d = 0; d < D; d++) ry[(size_t)n * D + d] = x[(size_t)n * D + d] * rr[n] * w[d];
    }
    char name[96];
    snprintf(name, sizeof name, "%s rmsnorm %dx%d", mode_name(fp32), N, D);
    check(name, ty.get(), ry, tol_of(fp32));
    snprintf(name, sizeof name, "%s rmsnorm rstd %d rows", mode_name(fp32), N);
    check(name, tr.get(), rr, tol_of(fp32));
}

/* The RMSNorm backward with dx and dw at a shape: where both are asked for, 16-byte packs fit and a
 * row is at most 8 packs a lane, one kernel writes dx and the blocks' partial dw (32 rows each, four
 * a warp, their warps' sums added in warp order). alias: dx is dy (the q / k norms' call); accumulate: dx +=. */
static void rmsnorm_backward_case(bool fp32, int N, int D, bool alias, bool accumulate) {
    fake_be f(fp32, -1, 0);
    gf_backend *be = &f.be;
    const gf_dtype act = fp32 ? GF_F32 : GF_BF16;
    const bool rb = !fp32;
    auto x = rand_vec((size_t)N * D, 2.0, rb), w = rand_vec(D, 1.5, rb), gy = rand_vec((size_t)N * D, 1.0, rb);
    auto d0 = rand_vec((size_t)N * D, 1.0, rb), dw0 = rand_vec(D, 1.0, false);
    tensor tx(x.size(), act), tw(D, act), tgy(x.size(), act), tdx(x.size(), act), tr(N, GF_F32), tdw(D, GF_F32);
    tx.put(x), tw.put(w), tgy.put(gy), tdx.put(d0), tdw.put(dw0);
    std::vector<double> rr(N), rdx(x.size()), rdw(dw0.begin(), dw0.end());
    for (int n = 0; n < N; n++) {
        double ss = 0, dot = 0;
        for (int d = 0; d < D; d++) ss += x[(size_t)n * D + d] * x[(size_t)n * D + d];
        rr[n] = 1.0 / sqrt(ss / D + 1e-5);
        for (int d = 0; d < D; d++) {
            const size_t e = (size_t)n * D + d;
            dot += gy[e] * w[d] * x[e];
            rdw[d] += gy[e] * x[e] * rr[n];
        }
        for (int d = 0; d < D; d++) {
            const size_t e = (size_t)n * D + d;
            rdx[e] = rr[n] * gy[e] * w[d] - rr[n] * rr[n] * rr[n] * dot / D * x[e] + (accumulate ? d0[e] : 0);
        }
    }
    tr.put(rr);
    tensor &dx = alias ? tgy : tdx;
    cuda_rmsnorm_backward(be, dx.buf(), tdw.buf(), tgy.buf(), tx.buf(), tw.buf(), tr.buf(), N, D, 1e-5f, accumulate);
    char name[128];
    snprintf(name, sizeof name, "%s rmsnorm_backward %dx%d%s%s: dx", mode_name(fp32), N, D, alias ? " dx = dy" : "",
             accumulate ? " +=" : "");
    check(name, dx.get(), rdx, tol_of(fp32));
    snprintf(name, sizeof name, "%s rmsnorm_backward %dx%d%s%s: dw", mode_name(fp32), N, D, alias ? " dx = dy" : "",
             accumulate ? " +=" : "");
    check(name, tdw.get(), rdw, 1e-5); /* F32 sums of the same rounded inputs: only their order differs */
}

static void ops_cases(bool fp32) {
    fake_be f(fp32, -1, 0);
    gf_backend *be = &f.be;
    const gf_dtype act = fp32 ? GF_F32 : GF_BF16;
    const bool rb = !fp32;
    const double tol = tol_of(fp32);
    char name[128];
    for (int D : {48, 44}) { /* 48: 16-byte packs; 44: one element at a time (bf16) */
        const int N = 9, V = 13;
        /* embedding */
        auto E = rand_vec((size_t)V * D, 1.0, rb);
        std::vector<int> tok(N);
        for (int i = 0; i < N; i++) tok[i] = (int)(urand() * 6); /* repeats */
        tensor tE(E.size(), act), tx((size_t)N * D, act);
        tensor tt(N, GF_I32);
        memcpy(tt.ptr(), tok.data(), N * sizeof(int));
        tE.put(E);
        cuda_embedding(be, tx.buf(), tE.buf(), tt.buf(), N, D);
        std::vector<double> rx((size_t)N * D);
        for (int n = 0; n < N; n++)
            for (int d = 0; d < D; d++) rx[(size_t)n * D + d] = E[(size_t)tok[n] * D + d];
        snprintf(name, sizeof name, "%s embedding N %d D %d", mode_name(fp32), N, D);
        check(name, tx.get(), rx, 0);
        /* embedding_backward sorts with CUB (cuda_embedding_bwd.cu): GPU only (test_cuda_ops) */

        /* RMSNorm (+ backward), rows of D */
        const float eps = 1e-5f;
        auto x = rand_vec((size_t)N * D, 2.0, rb), w = rand_vec(D, 1.5, rb), gy = rand_vec((size_t)N * D, 1.0, rb);
        tensor ttx(x.size(), act), tw(D, act), ty(x.size(), act), tr(N, GF_F32), tgy(x.size(), act), tdx2(x.size(), act),
            tdw(D, GF_F32);
        ttx.put(x), tw.put(w), tgy.put(gy);
        cuda_rmsnorm(be, ty.buf(), tr.buf(), ttx.buf(), tw.buf(), N, D, eps);
        std::vector<double> ry(x.size()), rr(N), rdx(x.size()), rdw(D, 0.0);
        for (int n = 0; n < N; n++) {
            double ss = 0, dot = 0;
            for (int d = 0; d < D; d++) ss += x[(size_t)n * D + d] * x[(size_t)n * D + d];
            const double r = 1.0 / sqrt(ss / D + eps);
            rr[n] = r;
            for (int d = 0; d < D; d++) {
                const size_t e = (size_t)n * D + d;
                ry[e] = x[e] * r * w[d];
                dot += gy[e] * w[d] * x[e];
                rdw[d] += gy[e] * x[e] * r;
            }
            for (int d = 0; d < D; d++) {
                const size_t e = (size_t)n * D + d;
                rdx[e] = r * gy[e] * w[d] - r * r * r * dot / D * x[e];
            }
        }
        snprintf(name, sizeof name, "%s rmsnorm %dx%d", mode_name(fp32), N, D);
        check(name, ty.get(), ry, tol);
        snprintf(name, sizeof name, "%s rmsnorm rstd", mode_name(fp32));
        check(name, tr.get(), rr, 1e-6);
        tdw.put(std::vector<double>(D, 0.0));
        cuda_rmsnorm_backward(be, tdx2.buf(), tdw.buf(), tgy.buf(), ttx.buf(), tw.buf(), tr.buf(), N, D, 1e-5f, false);
        snprintf(name, sizeof name, "%s rmsnorm_backward dx %dx%d", mode_name(fp32), N, D);
        check(name, tdx2.get(), rdx, tol);
        snprintf(name, sizeof name, "%s rmsnorm_backward dw %d", mode_name(fp32), D);
        check(name, tdw.get(), rdw, 1e-5);
        /* rstd not kept: recomputed from x (rstd_kernel) */
        tdw.put(std::vector<double>(D, 0.0));
        cuda_rmsnorm_backward(be, tdx2.buf(), tdw.buf(), tgy.buf(), ttx.buf(), tw.buf(), gf_none(), N, D, eps, false);
        snprintf(name, sizeof name, "%s rmsnorm_backward dx %dx%d, rstd recomputed", mode_name(fp32), N, D);
        check(name, tdx2.get(), rdx, tol);
        snprintf(name, sizeof name, "%s rmsnorm_backward dw %d, rstd recomputed", mode_name(fp32), D);
        check(name, tdw.get(), rdw, 1e-5);
        /* dx += (accumulating onto what is there) */
        auto d0 = tdx2.get();
        cuda_rmsnorm_backward(be, tdx2.buf(), gf_none(), tgy.buf(), ttx.buf(), tw.buf(), tr.buf(), N, D, 1e-5f, true);
        for (size_t e = 0; e < rdx.size(); e++) rdx[e] += d0[e];
        snprintf(name, sizeof name, "%s rmsnorm_backward dx %dx%d (+=)", mode_name(fp32), N, D);
        check(name, tdx2.get(), rdx, tol);
        /* in place: y aliases x */
        cuda_rmsnorm(be, ttx.buf(), gf_none(), ttx.buf(), tw.buf(), N, D, eps);
        snprintf(name, sizeof name, "%s rmsnorm in place", mode_name(fp32));
        check(name, ttx.get(), ry, tol);

        /* SwiGLU (+ backward), add, scale over N D elements */
        const size_t n = (size_t)N * D;
        auto g = rand_vec(n, 4.0, rb), u = rand_vec(n, 2.0, rb), go = rand_vec(n, 1.0, rb);
        tensor tg(n, act), tu(n, act), to(n, act), tgo(n, act), tdg(n, act), tdu(n, act);
        tg.put(g), tu.put(u), tgo.put(go);
        cuda_swiglu(be, to.buf(), tg.buf(), tu.buf(), n);
        cuda_swiglu_backward(be, tdg.buf(), tdu.buf(), tgo.buf(), tg.buf(), tu.buf(), n);
        std::vector<double> ro(n), rdg(n), rdu(n);
        for (size_t e = 0; e < n; e++) {
            const double sg = 1 / (1 + exp(-g[e]));
            ro[e] = g[e] * sg * u[e];
            rdu[e] = go[e] * g[e] * sg;
            rdg[e] = go[e] * u[e] * sg * (1 + g[e] * (1 - sg));
        }
        snprintf(name, sizeof name, "%s swiglu %zu", mode_name(fp32), n);
        check(name, to.get(), ro, tol);
        snprintf(name, sizeof name, "%s swiglu_backward dgate", mode_name(fp32));
        check(name, tdg.get(), rdg, tol);
        snprintf(name, sizeof name, "%s swiglu_backward dup", mode_name(fp32));
        check(name, tdu.get(), rdu, tol);
        cuda_add(be, tg.buf(), tu.buf(), n);
        cuda_scale(be, tg.buf(), n, -0.5f);
        for (size_t e = 0; e < n; e++) ro[e] = (g[e] + u[e]) * -0.5;
        snprintf(name, sizeof name, "%s add, scale %zu", mode_name(fp32), n);
        check(name, tg.get(), ro, tol);
    }

    /* RoPE, both pairings, forward then inverse */
    /* hd 16: one pack a head side (bf16); 64: several; 6: no pack fits, the element-wise kernel */
    for (int hd : {16, 64, 6})
    for (int adj = 0; adj < 2; adj++) {
        const int B = 2, T = 5, nh = 3, pos0 = 4, half = hd / 2, n_pos = pos0 + T;
        std::vector<double> tab((size_t)n_pos * half * 2);
        for (int p = 0; p < n_pos; p++)
            for (int i = 0; i < half; i++) {
                const double a = p * pow(10000.0, -2.0 * i / hd);
                tab[((size_t)p * half + i) * 2] = (float)cos(a);
                tab[((size_t)p * half + i) * 2 + 1] = (float)sin(a);
            }
        auto x = rand_vec((size_t)B * T * nh * hd, 1.0, rb);
        tensor tt(tab.size(), GF_F32), tx(x.size(), act);
        tt.put(tab), tx.put(x);
        cuda_rope(be, tx.buf(), tt.buf(), B, T, nh, hd, pos0, adj ? ROPE_ADJACENT : ROPE_HALF, false);
        std::vector<double> ry(x);
        for (int b = 0; b < B; b++)
            for (int t = 0; t < T; t++)
                for (int h = 0; h < nh; h++)
                    for (int i = 0; i < half; i++) {
                        const size_t base = (((size_t)b * T + t) * nh + h) * hd;
                        const int i0 = adj ? 2 * i : i, i1 = adj ? 2 * i + 1 : i + half;
                        const double c = tab[((size_t)(pos0 + t) * half + i) * 2], sn = tab[((size_t)(pos0 + t) * half + i) * 2 + 1];
                        ry[base + i0] = x[base + i0] * c - x[base + i1] * sn;
                        ry[base + i1] = x[base + i0] * sn + x[base + i1] * c;
                    }
        snprintf(name, sizeof name, "%s rope %s hd %d", mode_name(fp32), adj ? "adjacent" : "half", hd);
        check(name, tx.get(), ry, tol);
        cuda_rope(be, tx.buf(), tt.buf(), B, T, nh, hd, pos0, adj ? ROPE_ADJACENT : ROPE_HALF, true);
        snprintf(name, sizeof name, "%s rope %s hd %d, then inverse", mode_name(fp32), adj ? "adjacent" : "half", hd);
        check(name, tx.get(), x, fp32 ? 1e-6 : 2e-2);
    }

    /* cross-entropy (a skipped row; the gradient replacing the logits), KL, MSE, row L2 */
    {
        const int N = 5, V = 300;
        auto z = rand_vec((size_t)N * V, 6.0, rb), zt = rand_vec((size_t)N * V, 6.0, rb);
        std::vector<int> tg(N);
        for (int i = 0; i < N; i++) tg[i] = i == 2 ? -1 : (int)(urand() * V);
        tensor tz(z.size(), act), ttz(z.size(), act), ttg(N, GF_I32), tl(1, GF_F64), td(z.size(), act);
        memcpy(ttg.ptr(), tg.data(), N * sizeof(int));
        tz.put(z), ttz.put(zt), tl.put({1.5});
        double rl = 1.5;
        std::vector<double> rd(z.size(), 0.0);
        for (int r = 0; r < N; r++) {
            if (tg[r] < 0) continue;
            double m = -INFINITY, sum = 0;
            for (int i = 0; i < V; i++) m = fmax(m, z[(size_t)r * V + i]);
            for (int i = 0; i < V; i++) sum += exp(z[(size_t)r * V + i] - m);
            rl += m + log(sum) - z[(size_t)r * V + tg[r]];
            for (int i = 0; i < V; i++) rd[(size_t)r * V + i] = 0.25 * (exp(z[(size_t)r * V + i] - m) / sum - (i == tg[r]));
        }
        cuda_cross_entropy(be, tl.buf(), tz.buf(), tz.buf(), ttg.buf(), N, V, 0.25f);
        snprintf(name, sizeof name, "%s cross_entropy loss (+=)", mode_name(fp32));
        check(name, tl.get(), {rl}, 1e-6);
        snprintf(name, sizeof name, "%s cross_entropy grad (in place)", mode_name(fp32));
        check(name, tz.get(), rd, tol);

        tz.put(z), tl.put({0.0});
        const double tau = 2.0;
        double kl = 0;
        for (int r = 0; r < N; r++) {
            double ms = -INFINITY, mt = -INFINITY, ss = 0, st = 0;
            for (int i = 0; i < V; i++) ms = fmax(ms, z[(size_t)r * V + i] / tau), mt = fmax(mt, zt[(size_t)r * V + i] / tau);
            for (int i = 0; i < V; i++) ss += exp(z[(size_t)r * V + i] / tau - ms), st += exp(zt[(size_t)r * V + i] / tau - mt);
            for (int i = 0; i < V; i++) {
                const double ls = z[(size_t)r * V + i] / tau - ms - log(ss), lt = zt[(size_t)r * V + i] / tau - mt - log(st);
                kl += tau * tau * exp(lt) * (lt - ls);
                rd[(size_t)r * V + i] = 0.5 * tau * (exp(ls) - exp(lt));
            }
        }
        cuda_kl_div(be, tl.buf(), td.buf(), tz.buf(), ttz.buf(), N, V, (float)tau, 0.5f);
        snprintf(name, sizeof name, "%s kl_div loss", mode_name(fp32));
        check(name, tl.get(), {kl}, 1e-5);
        snprintf(name, sizeof name, "%s kl_div grad", mode_name(fp32));
        check(name, td.get(), rd, tol);

        const size_t n = (size_t)N * V;
        tl.put({0.0});
        double mse = 0;
        std::vector<double> rm(n);
        for (size_t e = 0; e < n; e++) {
            mse += (z[e] - zt[e]) * (z[e] - zt[e]);
            rm[e] = 0.1 * 2 * (z[e] - zt[e]);
        }
        cuda_mse(be, tl.buf(), td.buf(), tz.buf(), ttz.buf(), n, 0.1f);
        snprintf(name, sizeof name, "%s mse loss", mode_name(fp32));
        check(name, tl.get(), {mse}, 1e-6);
        snprintf(name, sizeof name, "%s mse grad", mode_name(fp32));
        check(name, td.get(), rm, tol);

        tl.put({0.0});
        auto ds0 = rand_vec(n, 1.0, rb);
        td.put(ds0);
        double l2 = 0;
        for (int r = 0; r < N; r++) {
            double ss = 0;
            for (int i = 0; i < V; i++) ss += (z[(size_t)r * V + i] - zt[(size_t)r * V + i]) * (z[(size_t)r * V + i] - zt[(size_t)r * V + i]);
            const double nr = sqrt(ss);
            l2 += nr / sqrt((double)V);
            for (int i = 0; i < V; i++)
                ds0[(size_t)r * V + i] += 0.5 * (z[(size_t)r * V + i] - zt[(size_t)r * V + i]) / (nr * sqrt((double)V));
        }
        cuda_row_l2(be, tl.buf(), td.buf(), tz.buf(), ttz.buf(), N, V, 0.5f);
        snprintf(name, sizeof name, "%s row_l2 loss", mode_name(fp32));
        check(name, tl.get(), {l2}, 1e-6);
        snprintf(name, sizeof name, "%s row_l2 grad (+=)", mode_name(fp32));
        check(name, td.get(), ds0, tol);
    }

    /* sumsq and AdamW (the same float operations as the CPU's: compared bit for bit) */
    {
        const size_t n = 1003;
        std::vector<double> g(n), p(n), m(n), v(n);
        for (size_t i = 0; i < n; i++) {
            g[i] = (float)(2 * urand() - 1), p[i] = (float)(2 * urand() - 1);
            m[i] = (float)(0.1 * (2 * urand() - 1)), v[i] = (float)(0.01 * urand() + 1e-6);
        }
        tensor tg(n, GF_F32), tp(n, GF_F32), tm(n, GF_F32), tv(n, GF_F32), tpa(n, act), tacc(1, GF_F64);
        tg.put(g), tp.put(p), tm.put(m), tv.put(v), tacc.put({2.0});
        double ss = 2.0;
        for (size_t i = 0; i < n; i++) ss += g[i] * g[i];
        cuda_sumsq(be, tacc.buf(), tg.buf(), n);
        snprintf(name, sizeof name, "%s sumsq (+=)", mode_name(fp32));
        check(name, tacc.get(), {ss}, 1e-14);
        std::vector<float> P(n), M(n), Vv(n), Gf(n);
        for (size_t i = 0; i < n; i++) P[i] = (float)p[i], M[i] = (float)m[i], Vv[i] = (float)v[i], Gf[i] = (float)g[i];
        for (int step = 1; step <= 3; step++) {
            gf_adamw h = {1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f, step, step == 2 ? 0.5f : 1.0f};
            cuda_adamw(be, tp.buf(), tpa.buf(), tg.buf(), tm.buf(), tv.buf(), n, &h);
            /* engine/optim/adamw.c, with the gradient scaled first */
            const double bc1 = 1.0 - pow(h.beta1, step), bc2 = 1.0 - pow(h.beta2, step);
            const float decay = 1.0f - h.lr * h.weight_decay, step_size = (float)(h.lr / bc1),
                        inv = (float)(1.0 / sqrt(bc2));
            for (size_t i = 0; i < n; i++) {
                const float gi = Gf[i] * h.grad_scale;
                P[i] *= decay;
                M[i] = h.beta1 * M[i] + (1.0f - h.beta1) * gi;
                Vv[i] = h.beta2 * Vv[i] + (1.0f - h.beta2) * gi * gi;
                P[i] -= step_size * M[i] / (sqrtf(Vv[i]) * inv + h.eps);
            }
        }
        std::vector<double> rp(P.begin(), P.end()), rm(M.begin(), M.end()), rv(Vv.begin(), Vv.end());
        snprintf(name, sizeof name, "%s adamw x3 p (bit for bit)", mode_name(fp32));
        check(name, tp.get(), rp, 0);
        snprintf(name, sizeof name, "%s adamw x3 m, v (bit for bit)", mode_name(fp32));
        auto gm = tm.get(), gv = tv.get();
        gm.insert(gm.end(), gv.begin(), gv.end());
        rm.insert(rm.end(), rv.begin(), rv.end());
        check(name, gm, rm, 0);
        snprintf(name, sizeof name, "%s adamw p_act", mode_name(fp32));
        check(name, tpa.get(), rp, fp32 ? 0 : 1e-2);
    }
    if (be->error[0]) {
        printf("FAIL  %s ops: error: %s\n", mode_name(fp32), be->error);
        failed++;
    }
}

/* ------------------------------------------------------------- split-row losses, sumsq */

/* n elements of type t at element offset `off` into their allocation (off 0 is
 * 16-byte aligned: the kernels' packed path; other offsets: single elements). */
struct view {
    tensor mem;
    size_t off;
    view(size_t n, gf_dtype t, size_t off_) : mem(n + off_, t), off(off_) {}
    gf_buf buf() { return gf_at(mem.buf(), off); }
    void put(const std::vector<double> &x) {
        std::vector<double> all(off, 0.0);
        all.insert(all.end(), x.begin(), x.end());
        mem.put(all);
    }
    std::vector<double> get() {
        auto all = mem.get();
        return std::vector<double>(all.begin() + (long)off, all.end());
    }
};

static const char *ty(gf_dtype t) { return t == GF_BF16 ? "bf16" : "f32"; }
/* Tolerance of a gradient stored as t: bf16 rounding (RMS ~2.3e-3 relative), or
 * float exp / log against double (~1e-7 per element). */
static double grad_tol(gf_dtype t) { return t == GF_BF16 ? 1e-2 : 2e-6; }

static bool same_bits(const std::vector<double> &a, const std::vector<double> &b) {
    return a.size() == b.size() && memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}
static void check_same(const char *what, bool same) {
    printf("%s  %-64s\n", same ? "PASS" : "FAIL", what);
    same ? passed++ : failed++;
}

/* wgmma_desc_at steps a descriptor with one add where wgmma_desc would build it again: the same 64
 * bits for every 16-byte-aligned shared address, every step below 64 KiB (the attention kernels'
 * largest, Q's second column block at 192 rows, is 24 KiB) whose sum stays below 256 KiB, and both
 * strides the kernels use. (A CTA's shared address carries its cluster rank from bit 24 up, which
 * wgmma_desc masks off; only the low 18 bits reach the field.) The kernels' checks see only the
 * addresses their shapes reach; this covers every one. */
static void descriptor_step_case() {
    bool same = true;
    const uint32_t lbos[2] = {16, 64 * 128};
    for (uint32_t lbo : lbos)
        for (uint32_t a = 0; a < (256u << 10); a += 16)
            for (uint32_t off = 0; off < (64u << 10) && a + off < (256u << 10); off += 16)
                same &= wgmma_desc_at(wgmma_desc(a, lbo, 1024), off) == wgmma_desc(a + off, lbo, 1024);
    check_same("wgmma_desc_at: every address and step, the same descriptor as wgmma_desc", same);
}

/* Cross-entropy over N rows of V (rows 1 and N - 1 skipped) with logits of
 * type lt at element offset off, the gradient of type dt (in place: replacing
 * the logits), against float64; then the loss alone, and the same inputs at
 * offset 0 when off > 0, give the same bits. */
static void ce_case(gf_dtype lt, gf_dtype dt, int N, int V, size_t off, bool in_place) {
    fake_be f(false, -1, 0);
    gf_backend *be = &f.be;
    char name[160];
    const size_t n = (size_t)N * V;
    auto z = rand_vec(n, 6.0, lt == GF_BF16);
    std::vector<int> tg(N);
    for (int i = 0; i < N; i++) tg[i] = i == 1 || i == N - 1 ? -1 : (int)(urand() * V);
    if (N > 2) tg[2] = V - 1; /* the target in the row's tail (V % 8 elements) */
    if (N > 3) tg[3] = 0;
    tensor ttg(N, GF_I32), tl(1, GF_F64), tl2(1, GF_F64);
    memcpy(ttg.ptr(), tg.data(), N * sizeof(int));
    view tz(n, lt, off), td(n, dt, off);
    tz.put(z), tl.put({1.5}), tl2.put({1.5});
    double rl = 1.5;
    std::vector<double> rd(n, 0.0);
    for (int r = 0; r < N; r++) {
        if (tg[r] < 0) continue;
        const double *zr = &z[(size_t)r * V];
        double m = -INFINITY, sum = 0;
        for (int i = 0; i < V; i++) m = fmax(m, zr[i]);
        for (int i = 0; i < V; i++) sum += exp(zr[i] - m);
        rl += m + log(sum) - zr[tg[r]];
        for (int i = 0; i < V; i++) rd[(size_t)r * V + i] = 0.25 * (exp(zr[i] - m) / sum - (i == tg[r]));
    }
    const char *how = in_place ? "in place" : "";
    cuda_cross_entropy(be, tl2.buf(), gf_none(), tz.buf(), ttg.buf(), N, V, 0.25f); /* loss alone first */
    cuda_cross_entropy(be, tl.buf(), in_place ? tz.buf() : td.buf(), tz.buf(), ttg.buf(), N, V, 0.25f);
    const auto grad = in_place ? tz.get() : td.get();
    /* lse in float: ~1e-7 of |lse| (about 10) per row, against a sum of N such rows and 1.5 */
    snprintf(name, sizeof name, "ce %s->%s %dx%d off %zu %s loss (+=)", ty(lt), ty(dt), N, V, off, how);
    check(name, tl.get(), {rl}, 1e-6);
    snprintf(name, sizeof name, "ce %s->%s %dx%d off %zu %s grad", ty(lt), ty(dt), N, V, off, how);
    check(name, grad, rd, grad_tol(dt));
    snprintf(name, sizeof name, "ce %s %dx%d off %zu loss alone: the same bits", ty(lt), N, V, off);
    check_same(name, same_bits(tl.get(), tl2.get()));
    if (be->error[0]) {
        printf("FAIL  ce: error: %s\n", be->error);
        failed++;
    }
    if (!off) return;
    fake_be f0(false, -1, 0);
    view az(n, lt, 0), ad(n, dt, 0);
    tensor al(1, GF_F64);
    az.put(z), al.put({1.5});
    if (((uintptr_t)az.buf().ptr & 15u) != 0) {
        printf("FAIL  ce: the aligned allocation is not 16-byte aligned\n");
        failed++;
    }
    cuda_cross_entropy(&f0.be, al.buf(), in_place ? az.buf() : ad.buf(), az.buf(), ttg.buf(), N, V, 0.25f);
    snprintf(name, sizeof name, "ce %s->%s %dx%d packed (off 0) and off %zu: the same bits", ty(lt), ty(dt), N, V, off);
    check_same(name, same_bits(al.get(), tl.get()) && same_bits(in_place ? az.get() : ad.get(), grad));
}

/* KL with temperature 2 over N rows of V: student st at offset off, teacher
 * tt at offset 0, the gradient dt (in place: replacing the student). */
static void kl_case(gf_dtype st, gf_dtype tt, gf_dtype dt, int N, int V, size_t off, bool in_place) {
    fake_be f(false, -1, 0);
    gf_backend *be = &f.be;
    char name[160];
    const size_t n = (size_t)N * V;
    const double tau = 2.0;
    auto zs = rand_vec(n, 6.0, st == GF_BF16), zt = rand_vec(n, 6.0, tt == GF_BF16);
    view ts(n, st, off), tt_(n, tt, 0), td(n, dt, off);
    tensor tl(1, GF_F64);
    ts.put(zs), tt_.put(zt), tl.put({0.25});
    double kl = 0.25;
    std::vector<double> rd(n);
    for (int r = 0; r < N; r++) {
        const double *a = &zs[(size_t)r * V], *b = &zt[(size_t)r * V];
        double ms = -INFINITY, mt = -INFINITY, ss = 0, sst = 0;
        for (int i = 0; i < V; i++) ms = fmax(ms, a[i] / tau), mt = fmax(mt, b[i] / tau);
        for (int i = 0; i < V; i++) ss += exp(a[i] / tau - ms), sst += exp(b[i] / tau - mt);
        for (int i = 0; i < V; i++) {
            const double ls = a[i] / tau - ms - log(ss), lt = b[i] / tau - mt - log(sst);
            kl += tau * tau * exp(lt) * (lt - ls);
            rd[(size_t)r * V + i] = 0.5 * tau * (exp(ls) - exp(lt));
        }
    }
    cuda_kl_div(be, tl.buf(), in_place ? ts.buf() : td.buf(), ts.buf(), tt_.buf(), N, V, (float)tau, 0.5f);
    /* y = z / tau - lse in float (~1e-6 absolute) weighted by p_t: ~1e-6 of a KL of order 1 per row */
    snprintf(name, sizeof name, "kl %s,%s->%s %dx%d off %zu %s loss (+=)", ty(st), ty(tt), ty(dt), N, V, off,
             in_place ? "in place" : "");
    check(name, tl.get(), {kl}, 1e-5);
    snprintf(name, sizeof name, "kl %s,%s->%s %dx%d off %zu %s grad", ty(st), ty(tt), ty(dt), N, V, off,
             in_place ? "in place" : "");
    check(name, in_place ? ts.get() : td.get(), rd, grad_tol(dt));
    if (be->error[0]) {
        printf("FAIL  kl: error: %s\n", be->error);
        failed++;
    }
}

/* The bias gradient: dst[out] += column sums of x[N, out] (ACT) at element offset off (off > 0 or
 * out % 8 != 0: the scalar path), against float64. The kernel's f32 sums of N inputs of magnitude <= 1
 * against exact ones: <= N 2^-24 sum |x| per column at worst, ~1e-6 relative here. */
static void col_sums_case(bool fp32, int N, int out, size_t off) {
    fake_be f(fp32, -1, 0);
    const gf_dtype act = fp32 ? GF_F32 : GF_BF16;
    auto x = rand_vec((size_t)N * out, 1.0, !fp32), d0 = rand_vec(out, 1.0, false);
    view tx(x.size(), act, off);
    tensor td(out, GF_F32);
    tx.put(x), td.put(d0);
    cuda_col_sums(&f.be, (float *)td.ptr(), tx.buf(), gf_none(), NULL, N, out);
    std::vector<double> rd(d0);
    for (int r = 0; r < N; r++)
        for (int j = 0; j < out; j++) rd[j] += x[(size_t)r * out + j];
    char name[96];
    snprintf(name, sizeof name, "%s column sums N %d out %d off %zu (+=)", mode_name(fp32), N, out, off);
    check(name, td.get(), rd, 1e-5);
    if (f.be.error[0]) {
        printf("FAIL  column sums: error: %s\n", f.be.error);
        failed++;
    }
}

/* sumsq of n floats at offset off (head, float4 body, tail) on a GPU of `sms`
 * multiprocessors (few: several blocks, each thread several batches). */
static void sumsq_case(size_t n, size_t off, int sms) {
    fake_be f(true, -1, 0);
    f.st.base.prop.multiProcessorCount = sms;
    char name[160];
    std::vector<double> g(n);
    for (auto &e : g) e = (float)(2 * urand() - 1);
    view tg(n, GF_F32, off);
    tensor tacc(1, GF_F64);
    tg.put(g), tacc.put({2.0});
    double ss = 2.0;
    for (double e : g) ss += e * e;
    cuda_sumsq(&f.be, tacc.buf(), tg.buf(), n);
    /* double sums of the same positive float squares in another order: the reference's one-by-one sum is
     * within (n + 1) 2^-53 relative of the exact sum at worst, the kernel's tree much closer */
    snprintf(name, sizeof name, "sumsq n %zu off %zu, %d SMs (+=)", n, off, sms);
    check(name, tacc.get(), {ss}, fmax(1e-15, (double)(n + 1) * 0x1p-53));
    if (f.be.error[0]) {
        printf("FAIL  sumsq: error: %s\n", f.be.error);
        failed++;
    }
}

static void loss_cases() {
    /* V = 2 spans + 13: three splits, the last one's tail 13 % 8 = 5 (bf16) or 1 (f32) elements; rows of an
     * odd V start unaligned every other row */
    const int V3 = 2 * 8192 + 13;
    for (gf_dtype lt : {GF_F32, GF_BF16})
        for (gf_dtype dt : {GF_F32, GF_BF16}) ce_case(lt, dt, 5, V3, 0, false);
    ce_case(GF_BF16, GF_BF16, 5, V3, 0, true);
    ce_case(GF_F32, GF_F32, 4, V3, 0, true);
    ce_case(GF_BF16, GF_BF16, 5, 2 * 8192 + 16, 1, true); /* every row unaligned */
    ce_case(GF_BF16, GF_F32, 4, V3, 3, false);
    ce_case(GF_F32, GF_BF16, 4, 8192 + 4, 2, false);
    ce_case(GF_F32, GF_F32, 4, 8192, 1, true); /* exactly one span */
    ce_case(GF_BF16, GF_BF16, 4, 7, 0, false); /* shorter than a pack */
    for (gf_dtype st : {GF_F32, GF_BF16})
        for (gf_dtype tt : {GF_F32, GF_BF16})
            for (gf_dtype dt : {GF_F32, GF_BF16}) kl_case(st, tt, dt, 3, V3, 0, false);
    kl_case(GF_BF16, GF_BF16, GF_BF16, 3, V3, 0, true);
    kl_case(GF_BF16, GF_F32, GF_BF16, 3, 8192 + 8, 1, true);
    kl_case(GF_F32, GF_BF16, GF_F32, 2, 8192 + 3, 2, false);
    for (size_t off : {0, 1, 2, 3}) {
        sumsq_case(2 * 8 * 256 * 4 * 4 + 7, off, 1); /* 8 blocks, two batches per thread, a tail */
        sumsq_case(1003, off, 132);
    }
    for (bool fp32 : {false, true}) {
        col_sums_case(fp32, 300, 264, 0);   /* packs, two column blocks, chunks of 32 rows, a short last one */
        col_sums_case(fp32, 2000, 1536, 0); /* the model's width: chunks of 16 x 8 rows */
        col_sums_case(fp32, 7, 40, 0);      /* fewer rows than a block has lanes */
        col_sums_case(fp32, 300, 264, 1);   /* unaligned: one column a thread */
        col_sums_case(fp32, 65, 37, 0);     /* a width no pack divides */
    }
    sumsq_case(2, 1, 132); /* all head */
    sumsq_case(3, 2, 132);
    sumsq_case(4, 0, 132);
    sumsq_case(5, 3, 132);
}

/* ------------------------------------------------------------- the emulation's own named barriers */

/* Two groups of four warps in one block, each meeting at its own bar.sync (ids 1
 * and 2, 128 threads) for a different number of rounds, then the whole block at
 * __syncthreads: each round a thread writes its slot and, after the group's
 * barrier, reads its neighbour's. Fails if a named barrier does not hold a
 * group back (the neighbour's old value shows: 256 values wrong when it is a
 * no-op) or is the whole block's (the groups' round counts differ, so rounds
 * pair across groups: 128 wrong). Run in the three fiber orders. */
static void named_barrier_case(const char *order) {
    const int G = 2, W = 128, rounds[G] = {5, 7};
    std::vector<int> slot(G * W, -1), seen(G * W, 0), other(G * W, -1);
    const char *old = getenv("GRAFT_EMU_ORDER");
    std::string keep = old ? old : "";
    setenv("GRAFT_EMU_ORDER", order, 1);
    emu_launch(dim3(1), dim3(G * W), 0, [&]() {
        const int t = (int)threadIdx.x, g = t / W, i = t % W;
        for (int r = 0; r < rounds[g]; r++) {
            slot[g * W + i] = 1000 * r + t;
            emu_bar_sync(1 + g, W);
            seen[g * W + i] += slot[g * W + (i + 1) % W] - 1000 * r; /* the neighbour's t when in step */
            emu_bar_sync(1 + g, W);
        }
        __syncthreads();
        other[t] = slot[(1 - g) * W + i];
    });
    if (old) setenv("GRAFT_EMU_ORDER", keep.c_str(), 1);
    else unsetenv("GRAFT_EMU_ORDER");
    int bad = 0;
    for (int g = 0; g < G; g++)
        for (int i = 0; i < W; i++) {
            const int t = g * W + i, nb = g * W + (i + 1) % W, o = (1 - g) * W + i;
            bad += seen[t] != rounds[g] * nb;
            bad += other[t] != 1000 * (rounds[1 - g] - 1) + o;
        }
    const bool ok = bad == 0;
    printf("%s  emulation: bar.sync groups (ids 1, 2; 5 and 7 rounds), order %-8s %d of %d values wrong\n",
           ok ? "PASS" : "FAIL", order, bad, 2 * G * W);
    ok ? passed++ : failed++;
}

int main() {
    const char *s = getenv("GRAFT_TEST_SEED");
    rng_state = s && *s ? strtoull(s, NULL, 10) : (uint64_t)time(NULL);
    if (!rng_state) rng_state = 1;
    printf("seed %llu (GRAFT_TEST_SEED repeats it)\n", (unsigned long long)rng_state);
    setvbuf(stdout, NULL, _IOLBF, 0);

    /* every block shape: T not a multiple of the tile, groups 1 and 2, head dims 64 and 128, pos0 > 0, and
     * the key range split (with the combine kernel) */
#define ATTN_FWD_ID(i, nw, sl, bc, ns, minb, fold, ov, text) (i),
    static const int ids[ATTN_FWD_CONFIGS] = {ATTN_FWD_ALL_CONFIG_LIST(ATTN_FWD_ID)};
#undef ATTN_FWD_ID
    for (int c = 0; c < ATTN_FWD_CONFIGS; c++) { /* c: the position the backend keeps (cuda_state.attn_cfg) */
        char v[32];
        snprintf(v, sizeof v, "mma cfg%d", ids[c]);
        forward_case(v, false, c, 1, 1, 70, 4, 2, 64, 0);
        forward_case(v, false, c, 1, 2, 33, 6, 1, 128, 40);
        forward_case(v, false, c, 1, 1, 40, 4, 2, 128, 9);
        forward_case(v, false, c, 1, 1, 150, 4, 2, 128, 0); /* more row tiles than one, many key tiles */
        forward_case(v, false, c, 1, 1, 24, 4, 2, 64, 500); /* 524 keys: every shape's ring wraps (5 tiles of 128) */
        snprintf(v, sizeof v, "mma cfg%d split3", ids[c]);
        forward_case(v, false, c, 3, 1, 1, 12, 2, 128, 200);
        forward_case(v, false, c, 3, 2, 5, 4, 2, 64, 150);
        forward_case(v, false, c, 3, 1, 40, 4, 2, 64, 100); /* rows 100..127 see no key in the last range */
        snprintf(v, sizeof v, "mma cfg%d split2", ids[c]);
        forward_case(v, false, c, 2, 1, 20, 4, 2, 64, 140);
    }
    descriptor_step_case();
    forward_case("mma auto", false, -1, 0, 1, 5, 4, 2, 64, 700); /* splits on its own: small grid, 11 key tiles */
    /* a decode step over a long cache: more splits than a warp has lanes and than the combine has warps */
    forward_case("mma decode split-each-tile", false, -1, 1000, 1, 1, 12, 2, 128, 4500); /* >= 36 splits */
    forward_case("simt bf16", false, -1, 0, 2, 20, 8, 4, 8, 3);
    forward_case("simt bf16", false, -1, 0, 1, 24, 4, 2, 80, 0);
    forward_case("simt f32", true, -1, 0, 1, 50, 4, 2, 64, 0);
    forward_case("simt f32", true, -1, 0, 1, 1, 4, 1, 128, 37);

    backward_case("mma", false, 1, 70, 4, 2, 64);
    backward_case("mma", false, 1, 65, 6, 2, 128);
    backward_case("wgmma", false, 1, 70, 4, 2, 64, ATTN_BWD_WGMMA);
    backward_case("wgmma", false, 1, 65, 6, 2, 128, ATTN_BWD_WGMMA);
    backward_case("wgmma", false, 2, 150, 4, 1, 128, ATTN_BWD_WGMMA); /* several row tiles and key blocks */
    /* two warpgroups a block of 128 keys: one block with a partial last row tile; blocks whose second
     * warpgroup skips its first tile, with keys past T in the last block; hd 64 runs the one-group kernel */
    backward_case("wgmma2", false, 1, 65, 6, 2, 128, ATTN_BWD_WGMMA2);
    backward_case("wgmma2", false, 2, 300, 4, 1, 128, ATTN_BWD_WGMMA2);
    backward_case("wgmma2", false, 1, 70, 4, 2, 64, ATTN_BWD_WGMMA2);
    backward_case("simt f32", true, 1, 40, 4, 2, 64);
    backward_case("simt bf16", false, 1, 30, 4, 2, 80);

    ops_cases(true);
    ops_cases(false);
    for (bool fp32 : {true, false}) {
        rmsnorm_rows_case(fp32, 1, 1536);  /* a decode step's row: a block, 16-byte packs */
        rmsnorm_rows_case(fp32, 3, 2100);  /* a row longer than the block's one pass of packs */
        rmsnorm_rows_case(fp32, 300, 40);  /* more rows than 264: a warp per row */
        rmsnorm_rows_case(fp32, 270, 264); /* a warp per row from 16-byte packs, a lane's second past n */
        rmsnorm_rows_case(fp32, 270, 1536); /* the 1.5B's norms: 6 packs a lane (bf16) */
        rmsnorm_backward_case(fp32, 2100, 264, false, true); /* 66 blocks, the last short; a lane's last pack past n */
        rmsnorm_backward_case(fp32, 40, 1536, false, true);  /* the 1.5B's norms: 6 packs a lane (bf16) */
        rmsnorm_backward_case(fp32, 37, 2048, false, false); /* 8 packs a lane (bf16) */
        rmsnorm_backward_case(fp32, 90, 128, true, false);   /* the q / k norms': dx is dy */
        rmsnorm_backward_case(fp32, 20, 2056, false, true);  /* past 8 packs: dw in its own pass */
        for (int M = 1; M <= 4; M++) gemv_case(fp32, M, 40, 13, M % 2 == 1, M >= 3);
        gemv_case(fp32, 1, 1544, 9, true, false);  /* two-pack loop, then one pack */
        gemv_case(fp32, 2, 1536, 17, false, true); /* two-pack loop only */
    }
    loss_cases();
    for (const char *order : {"forward", "reverse", "shuffle"}) named_barrier_case(order);

    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
