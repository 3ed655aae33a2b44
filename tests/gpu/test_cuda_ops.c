/* Every non-GDN op of the CUDA backend against the CPU backend (the float32
 * reference), through backend.h only, in the CUDA backend's f32 checking mode
 * and in bf16. Fresh random inputs each run, GPU outputs poisoned with NaN
 * before each op, relative L2 error and largest absolute error printed per
 * check with its tolerance (gpu_check.h says why those tolerances).
 *
 *   make test-gpu                    (all of tests/gpu)
 *   build/gpu/test_cuda_ops [quick]  (quick: no T >= 1000 attention)
 * Exit: 0 all passed, 1 a check failed, 77 no GPU / no CUDA in the build. */
#include "gpu_check.h"
#include "backend/cuda/cuda_attention_cfg.h"
#include "backend/gemm_choices.h"

#include <fcntl.h>
#include <unistd.h>

static bool quick;

/* ------------------------------------------------------------- memory, copies */

static void t_memory(void) {
    /* f32 -> ACT -> f32 on the device against rounding on the host */
    const size_t n = 1003;
    float *h = malloc(n * sizeof *h), *back = malloc(n * sizeof *back);
    for (size_t i = 0; i < n; i++) h[i] = rng_sym(100.0f);
    gf_buf a, b;
    if (be_alloc(G.gpu, &a, n, GF_F32) < 0 || be_alloc(G.gpu, &b, n, be_act(G.gpu)) < 0) die("alloc");
    if (be_upload(G.gpu, a, h, GF_F32, n) < 0) die("upload");
    be_copy(G.gpu, b, a, n);
    be_copy(G.gpu, a, b, n);
    if (be_download(G.gpu, back, GF_F32, a, n) < 0) die("download");
    size_t wrong = 0;
    for (size_t i = 0; i < n; i++) {
        const float want = be_act(G.gpu) == GF_BF16 ? bf16_round(h[i]) : h[i];
        if (memcmp(&want, &back[i], 4) != 0) wrong++;
    }
    printf("%s  %-5s %-44s %zu of %zu differ from the host's rounding\n", wrong ? "FAIL" : "PASS", G.mode,
           "copy f32 -> act -> f32", wrong, n);
    wrong ? G.failed++ : G.passed++;
    /* zero, then download as the other float type */
    be_zero(G.gpu, b, n);
    if (be_download(G.gpu, back, GF_F32, b, n) < 0) die("download");
    wrong = 0;
    for (size_t i = 0; i < n; i++) wrong += back[i] != 0.0f;
    printf("%s  %-5s %-44s %zu of %zu not zero\n", wrong ? "FAIL" : "PASS", G.mode, "zero", wrong, n);
    wrong ? G.failed++ : G.passed++;
    be_free(G.gpu, &a);
    be_free(G.gpu, &b);
    free(h);
    free(back);

    /* out of device memory: -1 at once with the amounts, and the backend still works */
    size_t fr = 0, tot = 0;
    if (be_mem_info(G.gpu, &fr, &tot) < 0) die("mem_info");
    gf_buf big;
    const int rc = be_alloc(G.gpu, &big, tot / 2 * 3, GF_F32); /* 6x the device's memory */
    const char *msg = gf_last_error();
    const int ok = rc == -1 && gf_is_none(big) && strstr(msg, "out of memory on cuda:") && strstr(msg, "GiB free");
    printf("%s  %-5s %-44s %s\n", ok ? "PASS" : "FAIL", G.mode, "alloc too much: -1 with a message", msg);
    ok ? G.passed++ : G.failed++;
    if (be_sync(G.gpu) < 0) {
        printf("FAIL  %-5s %-44s %s\n", G.mode, "sync after a failed alloc", gf_last_error());
        G.failed++;
    }
}

/* ------------------------------------------------------------- dense ops */

static void t_embedding(int N, int D, int V) {
    char name[96];
    pair E = mk_rand((size_t)V * D, ACT, 1.0f), tok = mk(N, GF_I32), x = mk((size_t)N * D, ACT);
    int *t = malloc(N * sizeof *t);
    for (int i = 0; i < N; i++) t[i] = (int)(rng_next() % (uint64_t)(V / 2)); /* repeats: the backward adds them */
    put_i32(&tok, t);
    poison(&x);
    be_embedding(G.cpu, x.c, E.c, tok.c, N, D);
    be_embedding(G.gpu, x.g, E.g, tok.g, N, D);
    snprintf(name, sizeof name, "embedding N %d D %d", N, D);
    cmp(name, &x, 0); /* a copy: exact */
    pair dE = mk_rand((size_t)V * D, GF_F32, 1.0f), dx = mk_rand((size_t)N * D, ACT, 1.0f);
    be_embedding_backward(G.cpu, dE.c, dx.c, tok.c, N, D);
    be_embedding_backward(G.gpu, dE.g, dx.g, tok.g, N, D);
    snprintf(name, sizeof name, "embedding_backward N %d D %d (+=)", N, D);
    /* float32 sums of the repeats in another order: ~1e-7 relative for a few repeats; 1e-5 where each
     * row adds hundreds (N / (V / 2) of them: worst case ~ repeats x 2^-24) */
    cmp(name, &dE, 2.0 * N / V > 50 ? 1e-5 : 1e-6);
    free(t);
    drop(&E), drop(&tok), drop(&x), drop(&dE), drop(&dx);
}

static void t_linear(int N, int in, int out, bool bias, bool acc) {
    char name[96];
    pair x = mk_rand((size_t)N * in, ACT, 1.0f), W = mk_rand((size_t)out * in, ACT, 0.5f);
    pair b = bias ? mk_rand(out, ACT, 1.0f) : (pair){gf_none(), gf_none(), 0, ACT};
    pair y = mk((size_t)N * out, ACT);
    if (acc) rand_put(&y, 1.0f);
    else poison(&y);
    be_linear(G.cpu, y.c, x.c, W.c, b.c, N, in, out, acc);
    be_linear(G.gpu, y.g, x.g, W.g, b.g, N, in, out, acc);
    snprintf(name, sizeof name, "linear %dx%d->%d%s%s", N, in, out, bias ? " +b" : "", acc ? " (+=)" : "");
    cmp(name, &y, tol_mm());

    /* backward: dx, dW and db all = (NaN before: nothing of them may be read) or all += */
    pair dy = mk_rand((size_t)N * out, ACT, 1.0f), dx = mk((size_t)N * in, ACT);
    pair dW = mk((size_t)out * in, GF_F32), db = mk(out, GF_F32);
    if (acc) rand_put(&dx, 1.0f), rand_put(&dW, 1.0f), rand_put(&db, 1.0f);
    else poison(&dx), poison(&dW), poison(&db);
    be_linear_backward(G.cpu, dx.c, dW.c, db.c, dy.c, x.c, W.c, N, in, out, acc, acc);
    be_linear_backward(G.gpu, dx.g, dW.g, db.g, dy.g, x.g, W.g, N, in, out, acc, acc);
    const char *how = acc ? " (+=)" : "";
    snprintf(name, sizeof name, "linear_backward dx %dx%d<-%d%s", N, in, out, how);
    cmp(name, &dx, tol_mm());
    snprintf(name, sizeof name, "linear_backward dW %dx%d%s", out, in, how);
    cmp(name, &dW, tol_mm());
    snprintf(name, sizeof name, "linear_backward db %d%s", out, how);
    cmp(name, &db, 1e-5);
    drop(&x), drop(&W), drop(&y), drop(&dy), drop(&dx), drop(&dW), drop(&db);
    if (bias) drop(&b);
}

/* y = x W^T (+ b) + r with r a buffer of its own (the training forward's residual in the
 * epilogue: cublasLt's C != D, or a copy then y += on the few-row GEMV path); r unchanged. */
static void t_linear_add(int N, int in, int out, bool bias) {
    char name[96];
    pair x = mk_rand((size_t)N * in, ACT, 1.0f), W = mk_rand((size_t)out * in, ACT, 0.5f);
    pair b = bias ? mk_rand(out, ACT, 1.0f) : (pair){gf_none(), gf_none(), 0, ACT};
    pair r = mk_rand((size_t)N * out, ACT, 1.0f), r0 = mk((size_t)N * out, ACT), y = mk((size_t)N * out, ACT);
    be_copy(G.cpu, r0.c, r.c, r0.n);
    be_copy(G.gpu, r0.g, r.g, r0.n);
    poison(&y);
    be_linear_add(G.cpu, y.c, x.c, W.c, b.c, N, in, out, r.c);
    be_linear_add(G.gpu, y.g, x.g, W.g, b.g, N, in, out, r.g);
    snprintf(name, sizeof name, "linear_add %dx%d->%d%s + r", N, in, out, bias ? " +b" : "");
    cmp(name, &y, tol_mm());
    snprintf(name, sizeof name, "linear_add %dx%d->%d: r unchanged", N, in, out);
    cmp(name, &r, 0); /* read only: exact */
    be_copy(G.gpu, y.g, r0.g, r0.n); /* and r the same buffer as y: y += */
    be_copy(G.cpu, y.c, r0.c, r0.n);
    be_linear_add(G.cpu, y.c, x.c, W.c, b.c, N, in, out, y.c);
    be_linear_add(G.gpu, y.g, x.g, W.g, b.g, N, in, out, y.g);
    snprintf(name, sizeof name, "linear_add %dx%d->%d%s, r = y", N, in, out, bias ? " +b" : "");
    cmp(name, &y, tol_mm());
    drop(&x), drop(&W), drop(&r), drop(&r0), drop(&y);
    if (bias) drop(&b);
}

static void t_rmsnorm(int rows, int n, bool alias) {
    char name[96];
    const float eps = 1e-5f;
    pair x = mk_rand((size_t)rows * n, ACT, 2.0f), w = mk_rand(n, ACT, 1.5f), rstd = mk(rows, GF_F32);
    pair y = alias ? x : mk((size_t)rows * n, ACT);
    pair x0 = mk((size_t)rows * n, ACT); /* x kept for the backward when y overwrites it */
    be_copy(G.cpu, x0.c, x.c, x0.n);
    be_copy(G.gpu, x0.g, x.g, x0.n);
    if (!alias) poison(&y);
    poison(&rstd);
    be_rmsnorm(G.cpu, y.c, rstd.c, x.c, w.c, rows, n, eps);
    be_rmsnorm(G.gpu, y.g, rstd.g, x.g, w.g, rows, n, eps);
    snprintf(name, sizeof name, "rmsnorm %dx%d%s", rows, n, alias ? " in place" : "");
    cmp(name, &y, tol_ew());
    snprintf(name, sizeof name, "rmsnorm rstd %d", rows);
    cmp(name, &rstd, 1e-5);
    /* case 2: rstd not given, recomputed from x with eps (contract v1) */
    for (int c = 0; c < 3; c++) {
        const bool acc = c == 1, own_rstd = c == 2;
        pair dy = mk_rand((size_t)rows * n, ACT, 1.0f), dx = mk((size_t)rows * n, ACT), dw = mk_rand(n, GF_F32, 1.0f);
        if (acc) rand_put(&dx, 1.0f);
        else poison(&dx);
        be_rmsnorm_backward(G.cpu, dx.c, dw.c, dy.c, x0.c, w.c, own_rstd ? gf_none() : rstd.c, rows, n, eps, acc);
        be_rmsnorm_backward(G.gpu, dx.g, dw.g, dy.g, x0.g, w.g, own_rstd ? gf_none() : rstd.g, rows, n, eps, acc);
        snprintf(name, sizeof name, "rmsnorm_backward dx %dx%d%s", rows, n,
                 acc ? " (+=)" : own_rstd ? " (rstd recomputed)" : "");
        cmp(name, &dx, tol_ew());
        snprintf(name, sizeof name, "rmsnorm_backward dw %d (+=)", n);
        cmp(name, &dw, 1e-5);
        drop(&dy), drop(&dx), drop(&dw);
    }
    if (!alias) drop(&y);
    drop(&x), drop(&w), drop(&rstd), drop(&x0);
}

static void t_rope(int B, int T, int nh, int hd, int pos0, rope_pairing pairing, bool inverse) {
    char name[96];
    const int n_pos = pos0 + T + 5, half = hd / 2;
    pair tab = mk((size_t)n_pos * half * 2, GF_F32);
    float *h = malloc(tab.n * sizeof *h);
    for (int p = 0; p < n_pos; p++)
        for (int i = 0; i < half; i++) {
            const double a = p * pow(10000.0, -2.0 * i / hd);
            h[((size_t)p * half + i) * 2] = (float)cos(a);
            h[((size_t)p * half + i) * 2 + 1] = (float)sin(a);
        }
    put(&tab, h);
    free(h);
    pair x = mk_rand((size_t)B * T * nh * hd, ACT, 1.0f);
    be_rope(G.cpu, x.c, tab.c, B, T, nh, hd, pos0, pairing, inverse);
    be_rope(G.gpu, x.g, tab.g, B, T, nh, hd, pos0, pairing, inverse);
    snprintf(name, sizeof name, "rope B %d T %d nh %d hd %d pos0 %d %s%s", B, T, nh, hd, pos0,
             pairing == ROPE_ADJACENT ? "adj" : "half", inverse ? " inv" : "");
    cmp(name, &x, tol_ew());
    drop(&tab), drop(&x);
}

static void t_swiglu(size_t n) {
    char name[96];
    pair g = mk_rand(n, ACT, 4.0f), u = mk_rand(n, ACT, 2.0f), o = mk(n, ACT);
    poison(&o);
    be_swiglu(G.cpu, o.c, g.c, u.c, n);
    be_swiglu(G.gpu, o.g, g.g, u.g, n);
    snprintf(name, sizeof name, "swiglu %zu", n);
    cmp(name, &o, tol_ew());
    pair d = mk_rand(n, ACT, 1.0f), dg = mk(n, ACT), du = mk(n, ACT);
    poison(&dg), poison(&du);
    be_swiglu_backward(G.cpu, dg.c, du.c, d.c, g.c, u.c, n);
    be_swiglu_backward(G.gpu, dg.g, du.g, d.g, g.g, u.g, n);
    snprintf(name, sizeof name, "swiglu_backward dgate %zu", n);
    cmp(name, &dg, tol_ew());
    snprintf(name, sizeof name, "swiglu_backward dup %zu", n);
    cmp(name, &du, tol_ew());
    /* out aliasing gate */
    be_swiglu(G.cpu, g.c, g.c, u.c, n);
    be_swiglu(G.gpu, g.g, g.g, u.g, n);
    snprintf(name, sizeof name, "swiglu %zu in place", n);
    cmp(name, &g, tol_ew());
    drop(&g), drop(&u), drop(&o), drop(&d), drop(&dg), drop(&du);
}

static void t_add_scale(size_t n) {
    char name[96];
    pair y = mk_rand(n, ACT, 1.0f), x = mk_rand(n, ACT, 1.0f), f = mk_rand(n, GF_F32, 1.0f);
    be_add(G.cpu, y.c, x.c, n);
    be_add(G.gpu, y.g, x.g, n);
    snprintf(name, sizeof name, "add %zu", n);
    cmp(name, &y, tol_ew());
    be_scale(G.cpu, y.c, n, -0.37f);
    be_scale(G.gpu, y.g, n, -0.37f);
    snprintf(name, sizeof name, "scale act %zu", n);
    cmp(name, &y, tol_ew());
    be_scale(G.cpu, f.c, n, 3.1f);
    be_scale(G.gpu, f.g, n, 3.1f);
    snprintf(name, sizeof name, "scale f32 %zu", n);
    cmp(name, &f, 1e-7);
    drop(&y), drop(&x), drop(&f);
}

/* ------------------------------------------------------------- attention */

/* q [B, T, H, hd]; k, v [B, S, KV, hd] with S past pos0 + T and the rows
 * past pos0 + T set to NaN on both sides: reading them would show. */
static void attn_inputs(pair *q, pair *k, pair *v, int B, int T, int H, int KV, int hd, int pos0, int S, float amp) {
    *q = mk_rand((size_t)B * T * H * hd, ACT, amp);
    *k = mk((size_t)B * S * KV * hd, ACT);
    *v = mk((size_t)B * S * KV * hd, ACT);
    float *h = malloc(k->n * sizeof *h);
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < k->n; i++) {
            const int j = (int)(i / ((size_t)KV * hd) % S);
            h[i] = j < pos0 + T ? rng_sym(pass ? 1.0f : amp) : NAN;
        }
        put(pass ? v : k, h);
    }
    free(h);
}

static void t_attention(int B, int T, int H, int KV, int hd, int pos0, float amp) {
    char name[128];
    const int S = pos0 + T + 3;
    pair q, k, v;
    attn_inputs(&q, &k, &v, B, T, H, KV, hd, pos0, S, amp);
    pair out = mk((size_t)B * T * H * hd, ACT), lse = mk((size_t)B * H * T, GF_F32);
    pair st = mk_rand((size_t)H * GF_STAT_COUNT, GF_F64, 1.0f); /* += onto what is there */
    poison(&out), poison(&lse);
    gf_attn_shape s = {B, T, H, KV, hd, pos0, S};
    be_attention(G.cpu, out.c, lse.c, st.c, q.c, k.c, v.c, &s);
    be_attention(G.gpu, out.g, lse.g, st.g, q.g, k.g, v.g, &s);
    snprintf(name, sizeof name, "attention B%d T%d H%d/%d hd%d pos0 %d a%.0f out", B, T, H, KV, hd, pos0, amp);
    cmp(name, &out, tol_ew());
    snprintf(name, sizeof name, "attention B%d T%d H%d/%d hd%d pos0 %d lse", B, T, H, KV, hd, pos0);
    cmp(name, &lse, 1e-5);
    /* each statistic apart: they differ in size by orders of magnitude */
    static const char *stat_name[GF_STAT_COUNT] = {"distance", "entropy", "out_rms", "dist_nosink", "sink"};
    for (int c = 0; c < GF_STAT_COUNT; c++) {
        pair one = mk(H, GF_F64);
        double *hc = fetch(G.cpu, st.c, st.n, GF_F64), *hg = fetch(G.gpu, st.g, st.n, GF_F64);
        double *pc = malloc(H * sizeof *pc), *pg = malloc(H * sizeof *pg);
        for (int h = 0; h < H; h++) pc[h] = hc[h * GF_STAT_COUNT + c], pg[h] = hg[h * GF_STAT_COUNT + c];
        if (be_upload(G.cpu, one.c, pc, GF_F64, H) < 0 || be_upload(G.gpu, one.g, pg, GF_F64, H) < 0) die("upload");
        snprintf(name, sizeof name, "attention B%d T%d H%d/%d hd%d pos0 %d %s", B, T, H, KV, hd, pos0, stat_name[c]);
        /* stats come from f32 scores on both sides (bf16 only rounds the output before its RMS) */
        cmp(name, &one, c == GF_STAT_OUT_RMS ? tol_ew() : 2e-5);
        free(hc), free(hg), free(pc), free(pg);
        drop(&one);
    }
    /* without lse and statistics (the other kernel instance) */
    poison(&out);
    be_attention(G.cpu, out.c, gf_none(), gf_none(), q.c, k.c, v.c, &s);
    be_attention(G.gpu, out.g, gf_none(), gf_none(), q.g, k.g, v.g, &s);
    snprintf(name, sizeof name, "attention B%d T%d H%d/%d hd%d pos0 %d (no stats)", B, T, H, KV, hd, pos0);
    cmp(name, &out, tol_ew());
    drop(&q), drop(&k), drop(&v), drop(&out), drop(&lse), drop(&st);
}

static void t_attention_backward(int B, int T, int H, int KV, int hd) {
    char name[128];
    pair q, k, v;
    attn_inputs(&q, &k, &v, B, T, H, KV, hd, 0, T, 2.0f);
    pair out = mk((size_t)B * T * H * hd, ACT), lse = mk((size_t)B * H * T, GF_F32);
    gf_attn_shape s = {B, T, H, KV, hd, 0, T};
    be_attention(G.cpu, out.c, lse.c, gf_none(), q.c, k.c, v.c, &s);
    be_attention(G.gpu, out.g, lse.g, gf_none(), q.g, k.g, v.g, &s);
    pair dout = mk_rand(out.n, ACT, 1.0f), dq = mk(q.n, ACT), dk = mk(k.n, ACT), dv = mk(v.n, ACT);
    poison(&dq), poison(&dk), poison(&dv);
    be_attention_backward(G.cpu, dq.c, dk.c, dv.c, dout.c, out.c, lse.c, q.c, k.c, v.c, &s);
    be_attention_backward(G.gpu, dq.g, dk.g, dv.g, dout.g, out.g, lse.g, q.g, k.g, v.g, &s);
    /* bf16: P and dS are rounded to bf16 before their products */
    const double tol = be_act(G.gpu) == GF_BF16 ? 2e-2 : 1e-4;
    snprintf(name, sizeof name, "attention_backward B%d T%d H%d/%d hd%d dq", B, T, H, KV, hd);
    cmp(name, &dq, tol);
    snprintf(name, sizeof name, "attention_backward B%d T%d H%d/%d hd%d dk", B, T, H, KV, hd);
    cmp(name, &dk, tol);
    snprintf(name, sizeof name, "attention_backward B%d T%d H%d/%d hd%d dv", B, T, H, KV, hd);
    cmp(name, &dv, tol);
    drop(&q), drop(&k), drop(&v), drop(&out), drop(&lse), drop(&dout), drop(&dq), drop(&dk), drop(&dv);
}

/* ------------------------------------------------------------- losses, optimizer */

/* Rows of V logits starting `off` elements into their buffer (odd offsets and V:
 * rows whose starts are not 16-byte aligned, the kernels' element-wise path);
 * the gradient in place, or apart as ACT or F32 (bf16 logits, f32 gradient). */
static void t_cross_entropy(int N, int V, size_t off, bool in_place, bool d_f32) {
    char name[96];
    const size_t n = (size_t)N * V;
    pair z = mk_rand(n + off, ACT, 6.0f), tg = mk(N, GF_I32), loss = mk_rand(1, GF_F64, 3.0f);
    int *t = malloc(N * sizeof *t);
    for (int i = 0; i < N; i++) t[i] = i == 1 ? -1 : (int)(rng_next() % (uint64_t)V);
    if (N > 2) t[2] = V - 1; /* in the row's last elements */
    put_i32(&tg, t);
    pair d = in_place ? z : mk(n + off, d_f32 ? GF_F32 : ACT);
    if (!in_place) poison(&d);
    be_cross_entropy(G.cpu, loss.c, gf_at(d.c, off), gf_at(z.c, off), tg.c, N, V, 0.25f);
    be_cross_entropy(G.gpu, loss.g, gf_at(d.g, off), gf_at(z.g, off), tg.g, N, V, 0.25f);
    const char *how = in_place ? " in place" : d_f32 ? " f32 grad" : "";
    snprintf(name, sizeof name, "cross_entropy N %d V %d off %zu loss (+=)%s", N, V, off, how);
    cmp(name, &loss, 1e-5);
    snprintf(name, sizeof name, "cross_entropy N %d V %d off %zu grad%s", N, V, off, how);
    cmp_range(name, &d, off, n, d_f32 ? 1e-5 : tol_ew()); /* f32 gradient: float arithmetic, 1e-5 */
    free(t);
    if (!in_place) drop(&d);
    drop(&z), drop(&tg), drop(&loss);
}

static void t_kl(int N, int V, float tau, size_t off, bool in_place) {
    char name[96];
    const size_t n = (size_t)N * V;
    pair s = mk_rand(n + off, ACT, 5.0f), t = mk_rand(n, ACT, 5.0f), loss = mk_rand(1, GF_F64, 1.0f);
    pair d = in_place ? s : mk(n + off, ACT);
    if (!in_place) poison(&d);
    be_kl_div(G.cpu, loss.c, gf_at(d.c, off), gf_at(s.c, off), t.c, N, V, tau, 0.5f);
    be_kl_div(G.gpu, loss.g, gf_at(d.g, off), gf_at(s.g, off), t.g, N, V, tau, 0.5f);
    snprintf(name, sizeof name, "kl_div N %d V %d tau %.1f off %zu loss (+=)%s", N, V, tau, off,
             in_place ? " in place" : "");
    cmp(name, &loss, 1e-5);
    snprintf(name, sizeof name, "kl_div N %d V %d tau %.1f off %zu grad", N, V, tau, off);
    cmp_range(name, &d, off, n, tol_ew());
    if (!in_place) drop(&d);
    drop(&s), drop(&t), drop(&loss);
}

/* sumsq of n floats starting `off` floats into the buffer (a head before the
 * first 16-byte boundary, float4s, a tail) */
static void t_sumsq(size_t n, size_t off) {
    char name[96];
    pair g = mk_rand(n + off, GF_F32, 1.0f), acc = mk_rand(1, GF_F64, 10.0f);
    be_sumsq(G.cpu, acc.c, gf_at(g.c, off), n);
    be_sumsq(G.gpu, acc.g, gf_at(g.g, off), n);
    snprintf(name, sizeof name, "sumsq %zu off %zu (+=)", n, off);
    cmp(name, &acc, 1e-12); /* double sums of the same float squares, another order */
    drop(&g), drop(&acc);
}

static void t_mse_l2(int N, int D) {
    char name[96];
    const size_t n = (size_t)N * D;
    pair y = mk_rand(n, ACT, 1.0f), t = mk_rand(n, ACT, 1.0f), loss = mk_rand(1, GF_F64, 1.0f), d = mk(n, ACT);
    poison(&d);
    be_mse(G.cpu, loss.c, d.c, y.c, t.c, n, 1.0f / (float)n);
    be_mse(G.gpu, loss.g, d.g, y.g, t.g, n, 1.0f / (float)n);
    snprintf(name, sizeof name, "mse %zu loss (+=)", n);
    cmp(name, &loss, 1e-6);
    snprintf(name, sizeof name, "mse %zu grad", n);
    cmp(name, &d, tol_ew());
    pair l2 = mk_rand(1, GF_F64, 1.0f), ds = mk_rand(n, ACT, 1.0f);
    be_row_l2(G.cpu, l2.c, ds.c, y.c, t.c, N, D, 0.5f);
    be_row_l2(G.gpu, l2.g, ds.g, y.g, t.g, N, D, 0.5f);
    snprintf(name, sizeof name, "row_l2 %dx%d loss (+=)", N, D);
    cmp(name, &l2, 1e-6);
    snprintf(name, sizeof name, "row_l2 %dx%d grad (+=)", N, D);
    cmp(name, &ds, tol_ew());
    drop(&y), drop(&t), drop(&loss), drop(&d), drop(&l2), drop(&ds);
}

static void t_optim(size_t n) {
    char name[96];
    pair g = mk_rand(n, GF_F32, 1.0f), acc = mk_rand(1, GF_F64, 10.0f);
    be_sumsq(G.cpu, acc.c, g.c, n);
    be_sumsq(G.gpu, acc.g, g.g, n);
    snprintf(name, sizeof name, "sumsq %zu (+=)", n);
    cmp(name, &acc, 1e-12); /* double sums of the same float squares, another order */
    pair p = mk_rand(n, GF_F32, 1.0f), m = mk_rand(n, GF_F32, 0.1f), v = mk(n, GF_F32), pa = mk(n, ACT);
    float *h = malloc(n * sizeof *h);
    for (size_t i = 0; i < n; i++) h[i] = 0.01f * rng_uniform() + 1e-6f;
    put(&v, h);
    free(h);
    poison(&pa);
    for (int step = 1; step <= 3; step++) {
        gf_adamw hp = {1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f, step, step == 2 ? 0.5f : 1.0f};
        be_adamw(G.cpu, p.c, pa.c, g.c, m.c, v.c, n, &hp);
        be_adamw(G.gpu, p.g, pa.g, g.g, m.g, v.g, n, &hp);
    }
    /* the same float operations in the same order on both sides */
    snprintf(name, sizeof name, "adamw %zu x3 p", n);
    cmp(name, &p, 1e-6);
    snprintf(name, sizeof name, "adamw %zu x3 m", n);
    cmp(name, &m, 1e-6);
    snprintf(name, sizeof name, "adamw %zu x3 v", n);
    cmp(name, &v, 1e-6);
    snprintf(name, sizeof name, "adamw %zu x3 p_act", n);
    cmp(name, &pa, tol_ew());
    drop(&g), drop(&acc), drop(&p), drop(&m), drop(&v), drop(&pa);
}

/* ------------------------------------------------------------- tasks */

typedef struct {
    pair *x;
    int n_each;
} task_ud;

static int task_scale(void *ud, int i, gf_backend *sub) {
    task_ud *t = ud;
    if (i == 5) return gf_fail("task %d refuses", i);
    be_scale(sub, gf_at(t->x->g, (size_t)i * t->n_each), t->n_each, (float)(i + 2));
    return 0;
}

static void t_tasks(void) {
    const int n_tasks = 6, each = 4099;
    pair x = mk_rand((size_t)n_tasks * each, ACT, 1.0f);
    task_ud ud = {&x, each};
    const int rc = be_run_tasks(G.gpu, n_tasks, task_scale, &ud);
    const int ok_rc = rc == -1 && strstr(gf_last_error(), "task 5 refuses");
    printf("%s  %-5s %-44s rc %d: %s\n", ok_rc ? "PASS" : "FAIL", G.mode, "run_tasks: a failing task", rc,
           gf_last_error());
    ok_rc ? G.passed++ : G.failed++;
    for (int i = 0; i < 5; i++) be_scale(G.cpu, gf_at(x.c, (size_t)i * each), each, (float)(i + 2));
    cmp("run_tasks: 5 tasks on streams", &x, tol_ew());
    drop(&x);
}

/* The linear cases under GRAFT_CUDA_GEMM_TUNE=8 (already set), G.gpu opened for them; with stderr
 * into LOG when it is not NULL. */
static void tuned_linears(const gf_backend_opts *co, const char *log) {
    int saved = -1;
    if (log) {
        fflush(stderr);
        const int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) die("cannot write the stderr log");
        saved = dup(2);
        dup2(fd, 2);
        close(fd);
    }
    G.gpu = open_gpu_or_skip(false);
    if (be_open(&G.cpu, co) < 0) die("cpu backend");
    t_linear(65, 136, 24, true, true);
    t_linear(256, 1536, 512, true, false);
    t_linear(300, 1024, 896, false, true);
    t_linear_add(300, 1024, 896, false);
    be_close(G.gpu);
    be_close(G.cpu);
    if (log) {
        fflush(stderr);
        dup2(saved, 2);
        close(saved);
    }
}

static int lines_with(const char *path, const char *what) {
    FILE *f = fopen(path, "r");
    char line[512];
    int n = 0;
    while (f && fgets(line, sizeof line, f)) n += strstr(line, what) != NULL;
    if (f) fclose(f);
    return n;
}

/* GRAFT_CUDA_GEMM_TUNE=8: each product shape's first call times up to 8 cublasLt algorithms on its
 * own operands before the product; the sums in place (+=: dx, dW) must still take it once. The
 * choices go into GRAFT_CUDA_GEMM_TUNE_FILE, and a second run takes every one of them from there,
 * timing none. A file that is not a choice file fails the open, naming it. */
static void tuned_runs(const gf_backend_opts *co) {
    char dir[] = "/tmp/graft_gemm_tune_XXXXXX", path[96], log[96], bad[96];
    if (!mkdtemp(dir)) die("mkdtemp");
    snprintf(path, sizeof path, "%s/choices.json", dir);
    snprintf(log, sizeof log, "%s/second-run.log", dir);
    snprintf(bad, sizeof bad, "%s/foreign.json", dir);
    setenv("GRAFT_CUDA_GEMM_TUNE", "8", 1);
    setenv("GRAFT_CUDA_GEMM_TUNE_FILE", path, 1);
    G.mode = "tuned";
    printf("== GRAFT_CUDA_GEMM_TUNE=8, choices into %s\n", path);
    tuned_linears(co, NULL);
    gemm_choices kept;
    const int rc = gemm_choices_open(&kept, path);
    const int n_kept = rc == 0 ? (int)kept.n : -1;
    gemm_choices_free(&kept);
    /* 3 shapes a case (forward, dx, dW) over 3 distinct (N, in, out): at most 9 (t_linear_add repeats
     * the third's forward); one with a single candidate is neither timed nor kept */
    bool ok = n_kept >= 1 && n_kept <= 9;
    printf("%s  tuned choices kept in the file: %d (%s)\n", ok ? "PASS" : "FAIL", n_kept,
           rc == 0 ? "read back" : gf_last_error());
    ok ? G.passed++ : G.failed++;
    G.mode = "kept";
    tuned_linears(co, log);
    const int from_file = lines_with(log, "from the choice file"), timed = lines_with(log, "the heuristic's first");
    ok = from_file == n_kept && timed == 0;
    printf("%s  second run: %d of %d shapes from the file, %d timed\n", ok ? "PASS" : "FAIL", from_file, n_kept,
           timed);
    ok ? G.passed++ : G.failed++;
    FILE *f = fopen(bad, "w");
    if (!f) die("cannot write the foreign file");
    fputs("{\"not\": \"a choice file\"}", f);
    fclose(f);
    char why[512];
    ok = gpu_open_refused("GRAFT_CUDA_GEMM_TUNE_FILE", bad, false, bad, why, sizeof why) &&
         strstr(why, "not a graft GEMM choice file");
    printf("%s  tuned: a foreign GRAFT_CUDA_GEMM_TUNE_FILE refused at open: %s\n", ok ? "PASS" : "FAIL", why);
    ok ? G.passed++ : G.failed++;
    unsetenv("GRAFT_CUDA_GEMM_TUNE");
    unsetenv("GRAFT_CUDA_GEMM_TUNE_FILE");
    unlink(path), unlink(log), unlink(bad);
    char lock[104];
    snprintf(lock, sizeof lock, "%s.lock", path);
    unlink(lock);
    rmdir(dir);
}

/* GRAFT_CUDA_GEMM_TUNE outside 1..GEMM_TUNE_MAX (16), or not a whole number, fails at open with a
 * line that names it. */
static void tune_refusals(void) {
    static const char *const bad[] = {"0", "17", "8x", "-1", " 8"};
    for (int i = 0; i < 5; i++) {
        char why[512];
        const bool ok = gpu_open_refused("GRAFT_CUDA_GEMM_TUNE", bad[i], true, "GRAFT_CUDA_GEMM_TUNE", why, sizeof why);
        printf("%s  tune  GRAFT_CUDA_GEMM_TUNE=\"%s\" refused at open: %s\n", ok ? "PASS" : "FAIL", bad[i], why);
        ok ? G.passed++ : G.failed++;
    }
    unsetenv("GRAFT_CUDA_GEMM_TUNE");
}

/* ------------------------------------------------------------- determinism */

/* The ops whose cross-block sums run in a fixed order give the same bits twice. */
static int same_bits(gf_buf a, gf_buf b, size_t bytes_n, gf_dtype t) {
    void *ha = malloc(bytes_n * gf_dtype_size(t)), *hb = malloc(bytes_n * gf_dtype_size(t));
    if (be_download(G.gpu, ha, t, a, bytes_n) < 0 || be_download(G.gpu, hb, t, b, bytes_n) < 0) die("download");
    const int same = memcmp(ha, hb, bytes_n * gf_dtype_size(t)) == 0;
    free(ha), free(hb);
    return same;
}

static void t_determinism(void) {
    const int B = 2, T = 300, H = 12, KV = 2, hd = 128, N = 64, V = 5000, rows = 512, n = 256;
    pair q, k, v;
    attn_inputs(&q, &k, &v, B, T, H, KV, hd, 0, T, 2.0f);
    pair o1 = mk(q.n, ACT), o2 = mk(q.n, ACT), s1 = mk(H * GF_STAT_COUNT, GF_F64), s2 = mk(H * GF_STAT_COUNT, GF_F64);
    be_zero(G.gpu, s1.g, s1.n), be_zero(G.gpu, s2.g, s2.n);
    gf_attn_shape s = {B, T, H, KV, hd, 0, T};
    be_attention(G.gpu, o1.g, gf_none(), s1.g, q.g, k.g, v.g, &s);
    be_attention(G.gpu, o2.g, gf_none(), s2.g, q.g, k.g, v.g, &s);
    int ok = same_bits(o1.g, o2.g, o1.n, be_act(G.gpu)) && same_bits(s1.g, s2.g, s1.n, GF_F64);

    pair z = mk_rand((size_t)N * V, ACT, 6.0f), tg = mk(N, GF_I32), l1 = mk(1, GF_F64), l2 = mk(1, GF_F64);
    int *t = malloc(N * sizeof *t);
    for (int i = 0; i < N; i++) t[i] = (int)(rng_next() % (uint64_t)V);
    put_i32(&tg, t);
    free(t);
    be_zero(G.gpu, l1.g, 1), be_zero(G.gpu, l2.g, 1);
    be_cross_entropy(G.gpu, l1.g, gf_none(), z.g, tg.g, N, V, 1.0f);
    be_cross_entropy(G.gpu, l2.g, gf_none(), z.g, tg.g, N, V, 1.0f);
    ok = ok && same_bits(l1.g, l2.g, 1, GF_F64);

    pair x = mk_rand((size_t)rows * n, ACT, 1.0f), w = mk_rand(n, ACT, 1.0f), dy = mk_rand(x.n, ACT, 1.0f);
    pair r = mk(rows, GF_F32), y = mk(x.n, ACT), dw1 = mk(n, GF_F32), dw2 = mk(n, GF_F32);
    be_zero(G.gpu, dw1.g, n), be_zero(G.gpu, dw2.g, n);
    be_rmsnorm(G.gpu, y.g, r.g, x.g, w.g, rows, n, 1e-6f);
    be_rmsnorm_backward(G.gpu, gf_none(), dw1.g, dy.g, x.g, w.g, r.g, rows, n, 1e-6f, false);
    be_rmsnorm_backward(G.gpu, gf_none(), dw2.g, dy.g, x.g, w.g, r.g, rows, n, 1e-6f, false);
    ok = ok && same_bits(dw1.g, dw2.g, n, GF_F32);

    /* embedding_backward: 4096 tokens from 7 (every token repeated ~600 times) */
    const int NE = 4096, DE = 96, VE = 7;
    pair ex = mk_rand((size_t)NE * DE, ACT, 1.0f), et = mk(NE, GF_I32), e1 = mk((size_t)VE * DE, GF_F32),
         e2 = mk((size_t)VE * DE, GF_F32);
    int *et_h = malloc(NE * sizeof *et_h);
    for (int i = 0; i < NE; i++) et_h[i] = (int)(rng_next() % (uint64_t)VE);
    put_i32(&et, et_h);
    free(et_h);
    be_zero(G.gpu, e1.g, e1.n), be_zero(G.gpu, e2.g, e2.n);
    be_embedding_backward(G.gpu, e1.g, ex.g, et.g, NE, DE);
    be_embedding_backward(G.gpu, e2.g, ex.g, et.g, NE, DE);
    ok = ok && same_bits(e1.g, e2.g, e1.n, GF_F32);
    drop(&ex), drop(&et), drop(&e1), drop(&e2);
    printf("%s  %-5s %-44s\n", ok ? "PASS" : "FAIL", G.mode, "same bits twice: attention+stats, CE, dw, dE");
    ok ? G.passed++ : G.failed++;
    drop(&q), drop(&k), drop(&v), drop(&o1), drop(&o2), drop(&s1), drop(&s2), drop(&z), drop(&tg), drop(&l1),
        drop(&l2), drop(&x), drop(&w), drop(&dy), drop(&r), drop(&y), drop(&dw1), drop(&dw2);
}

/* ------------------------------------------------------------- main */

/* The attention checks alone (for the kernel variants gf_backend_variants forces). */
static void run_attention(void) {
    t_attention(1, 1, 12, 2, 128, 300, 2.0f);
    t_attention(2, 17, 4, 2, 64, 0, 2.0f);
    t_attention(2, 129, 6, 1, 128, 0, 3.0f);
    t_attention(1, 17, 8, 4, 128, 100, 2.0f);
    t_attention(1, 300, 12, 2, 128, 0, 2.0f);
    t_attention(3, 5, 12, 2, 128, 700, 2.0f);
    if (!quick) t_attention(1, 1000, 12, 2, 128, 0, 2.0f);
}

static void run_all(void) {
    t_memory();
    t_embedding(37, 96, 50);
    t_embedding(19, 90, 40);
    t_embedding(5000, 256, 17); /* ~300 repeats of each token: the sorted, fixed-order sums */
    t_linear(33, 72, 40, false, false);
    t_linear(33, 72, 40, true, false);
    t_linear(65, 136, 24, true, true);
    t_linear(256, 1536, 512, true, false);
    t_linear(300, 1024, 896, false, true);
    t_linear_add(300, 1024, 896, false);
    t_linear_add(65, 136, 24, true);
    t_linear_add(2, 1536, 40, false); /* few rows: the GEMV path */
    t_rmsnorm(50, 96, false);
    t_rmsnorm(33, 100, false);
    t_rmsnorm(64 * 4, 128, true); /* per-head rows */
    t_rmsnorm(2100, 1536, false); /* the 1.5B's block norms: dx and dw in one kernel, 66 blocks */
    t_rmsnorm(300, 264, true);    /* a warp a row from 16-byte packs, a lane's second pack past n; in place */
    t_rmsnorm(280, 2048, false);  /* 8 packs a lane (bf16) */
    t_rope(2, 5, 3, 16, 3, ROPE_HALF, false);
    t_rope(2, 5, 3, 16, 0, ROPE_ADJACENT, false);
    t_rope(1, 7, 4, 128, 11, ROPE_HALF, true);
    t_swiglu(1000);
    t_swiglu(1003);
    t_add_scale(4096);
    t_add_scale(4097);

    /* attention: T in {1, 17, 64, 129, 1000, 2048+}, pos0 > 0, groups 1, 2, 6, hd 64 / 128 (tensor cores in
     * bf16) and others (the exact kernel) */
    t_attention(1, 1, 4, 4, 64, 0, 2.0f);
    t_attention(2, 17, 4, 2, 64, 0, 2.0f);
    t_attention(1, 64, 12, 2, 128, 0, 2.0f);
    t_attention(2, 129, 6, 1, 128, 0, 3.0f);
    t_attention(1, 1, 12, 2, 128, 300, 2.0f);  /* decode */
    t_attention(1, 17, 8, 4, 128, 100, 2.0f);  /* chunk after a cache */
    t_attention(2, 33, 8, 4, 8, 5, 2.0f);      /* stories260K's head dim */
    t_attention(1, 40, 4, 2, 80, 0, 2.0f);     /* another head dim */
    if (!quick) {
        t_attention(1, 1000, 12, 2, 128, 0, 2.0f);
        t_attention(1, 1000, 4, 4, 64, 24, 2.0f);
        t_attention(1, 2100, 12, 2, 128, 0, 2.0f);
    }
    t_attention_backward(1, 17, 4, 2, 64);
    t_attention_backward(2, 64, 12, 2, 128);
    t_attention_backward(1, 129, 6, 6, 128);
    t_attention_backward(1, 70, 4, 2, 80);
    if (!quick) t_attention_backward(1, 1000, 12, 2, 128);

    t_cross_entropy(7, 1000, 0, false, false);
    t_cross_entropy(3, 151936, 0, true, false);
    /* the emulation's shapes: rows split over 3 blocks (8192 logits each), V not a multiple of 8, rows
     * starting unaligned, the gradient in place or f32 */
    t_cross_entropy(5, 2 * 8192 + 13, 0, false, false);
    t_cross_entropy(5, 2 * 8192 + 13, 0, false, true);
    t_cross_entropy(5, 2 * 8192 + 16, 1, true, false);
    t_cross_entropy(4, 2 * 8192 + 13, 3, false, true);
    t_cross_entropy(4, 7, 0, false, false);
    t_cross_entropy(220, 151936, 0, true, false); /* the trainer's chunk at qwen2.5's vocabulary */
    t_kl(5, 1000, 2.0f, 0, false);
    t_kl(2, 151936, 1.0f, 0, false);
    t_kl(3, 2 * 8192 + 13, 2.0f, 0, true);
    t_kl(3, 8192 + 8, 2.0f, 1, true);
    t_kl(2, 8192 + 3, 1.0f, 2, false);
    for (size_t off = 0; off < 4; off++) {
        t_sumsq(1003, off);
        t_sumsq(2 * 132 * 8 * 256 * 4 * 4 + 7, off); /* every block, two batches of float4s per thread */
    }
    t_sumsq(2, 1);
    t_sumsq(5, 3);
    t_mse_l2(9, 96);
    t_optim(100003);
    t_tasks();
    t_determinism();
}

/* The attention backward's cases with its kernel forced to `bwd` (ATTN_BWD_*), against the CPU. */
static void backward_on(int bwd, const char *mode, const char *what, const gf_backend_opts *co) {
    const gf_backend_variants v = {.attn_bwd = bwd};
    G.gpu = open_gpu_variants_or_skip(false, &v);
    if (be_open(&G.cpu, co) < 0) die("cpu backend");
    G.mode = mode;
    printf("== %s with the attention backward %s forced\n", be_name(G.gpu), what);
    t_attention_backward(1, 17, 4, 2, 64);
    t_attention_backward(2, 64, 12, 2, 128);
    t_attention_backward(1, 129, 6, 6, 128);
    t_attention_backward(1, 1000, 12, 2, 128);
    t_attention_backward(1, 2048, 12, 2, 128);
    be_close(G.gpu);
    be_close(G.cpu);
}

int main(int argc, char **argv) {
    quick = argc > 1 && strcmp(argv[1], "quick") == 0;
    setvbuf(stdout, NULL, _IOLBF, 0);
    seed_from_env();
    gf_backend_opts co = {"cpu", 0, false};
    for (int fp32 = 1; fp32 >= 0; fp32--) {
        G.gpu = open_gpu_or_skip(fp32);
        if (be_open(&G.cpu, &co) < 0) die("cpu backend");
        G.mode = fp32 ? "fp32" : "bf16";
        printf("== %s against %s\n", be_name(G.gpu), be_name(G.cpu));
        run_all();
        be_close(G.gpu);
        be_close(G.cpu);
    }
    /* every block shape of the tensor-core attention (bf16; cuda_attention_cfg.h), the
     * defaults too (the runs above take each only for the calls it is the default of);
     * key ranges split */
#define ATTN_FWD_ID(id, nw, sl, bc, ns, minb, fold, ov, text) (id),
    static const int ids[ATTN_FWD_CONFIGS] = {ATTN_FWD_ALL_CONFIG_LIST(ATTN_FWD_ID)};
#undef ATTN_FWD_ID
    for (int i = 0; i < ATTN_FWD_CONFIGS; i++) {
        char mode[16];
        snprintf(mode, sizeof mode, "cfg%d", ids[i]);
        const gf_backend_variants v = {.attn_cfg = 1 + ids[i]};
        G.gpu = open_gpu_variants_or_skip(false, &v);
        if (be_open(&G.cpu, &co) < 0) die("cpu backend");
        G.mode = mode;
        printf("== %s with attention cfg %d forced\n", be_name(G.gpu), ids[i]);
        run_attention();
        be_close(G.gpu);
        be_close(G.cpu);
    }
    /* the attention backward's wgmma kernels forced: one warpgroup a block of 64 keys, and two a block
     * of 128 (the default on compute capability 9.0; hd 64 runs the one-group kernel) */
    backward_on(ATTN_BWD_WGMMA, "bwd-wgmma", "on wgmma", &co);
    backward_on(ATTN_BWD_WGMMA2, "bwd-wgmma2", "on two warpgroups", &co);
    const gf_backend_variants split = {.attn_split = 3};
    G.gpu = open_gpu_variants_or_skip(false, &split);
    if (be_open(&G.cpu, &co) < 0) die("cpu backend");
    G.mode = "split";
    printf("== %s with 3 key-range splits forced\n", be_name(G.gpu));
    run_attention();
    be_close(G.gpu);
    be_close(G.cpu);
    tuned_runs(&co);
    tune_refusals();
    printf("%d passed, %d failed\n", G.passed, G.failed);
    return G.failed ? 1 : 0;
}
