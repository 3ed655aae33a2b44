/* Benchmark: one GDN layer at the Qwen2.5-1.5B layer shape (D 1536, H 12,
 * head_dim 128), synthetic random weights. Forward (chunked and recurrent) and
 * backward tokens/s, next to cblas_sgemm GFLOP/s measured in the same run.
 * Usage: bench_gdn [B T]   (default 1 2048; also try 4 512) */
#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/error.h"
#include "gdn/gdn.h"
#include "gdn/gdn_layer.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static unsigned long long rng = 88172645463325252ull;
static float urand(void) { /* [-1, 1) */
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (float)((double)(rng >> 11) / 4503599627370496.0 - 1.0);
}
static void fill(float *a, size_t n, float s) {
    for (size_t i = 0; i < n; i++) a[i] = s * urand();
}

static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Best-of-reps wall time of one call; last_cpu = process CPU seconds of that rep
 * (on a shared machine wall time also counts other programs' turns). */
static double last_cpu;
#define TIME_BEST(reps, out, stmt)                                                     \
    do {                                                                               \
        out = 1e30;                                                                    \
        for (int r_ = 0; r_ < (reps); r_++) {                                          \
            double t0_ = now(), c0_ = cpu_now();                                       \
            stmt;                                                                      \
            double dt_ = now() - t0_, dc_ = cpu_now() - c0_;                           \
            if (dt_ < out) {                                                           \
                out = dt_;                                                             \
                last_cpu = dc_;                                                        \
            }                                                                          \
        }                                                                              \
    } while (0)

/* Reference rate: sgemm 2048 x 1536 x 1536 (tokens x out x in), FLOP/s, best of 4;
 * *per_cpu = FLOP per CPU-second of that run. */
static double sgemm_gflops(double *per_cpu) {
    int m = 2048, n = 1536, k = 1536;
    float *a = malloc((size_t)m * k * sizeof(float)), *b = malloc((size_t)n * k * sizeof(float));
    float *c = malloc((size_t)m * n * sizeof(float));
    fill(a, (size_t)m * k, 1);
    fill(b, (size_t)n * k, 1);
    double t;
    TIME_BEST(4, t, cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1, a, k, b, k,
                                0, c, n));
    free(a);
    free(b);
    free(c);
    *per_cpu = 2.0 * m * n * k / last_cpu;
    return 2.0 * m * n * k / t;
}

int main(int argc, char **argv) {
    int B = argc > 2 ? atoi(argv[1]) : 1, T = argc > 2 ? atoi(argv[2]) : 2048;
    int D = 1536, H = 12, hd = 128;
    if (B <= 0 || T <= 0) {
        fprintf(stderr, "bench_gdn: B and T must be positive\n");
        return 2;
    }
    double N = (double)B * T;
    printf("bench_gdn: one GDN layer, D %d H %d head_dim %d, B %d x T %d, %d OpenMP threads\n",
           D, H, hd, B, T, omp_get_max_threads());

    double sgemm_cpu_rate, again_cpu;
    double sgemm_rate = sgemm_gflops(&sgemm_cpu_rate);   /* measured again at the end; best kept */

    gdn_config cfg;
    gdn_config_default(&cfg, D, H, hd);
    gdn_params p;
    gdn_params_alloc(&p, &cfg);
    fill(p.block, p.n, 0.02f);
    for (int h = 0; h < H; h++) {
        p.a_log[h] = logf(1.0f + 15.0f * (0.5f + 0.5f * urand()));
        p.dt_bias[h] = logf(expm1f(0.001f + 0.05f * (0.5f + 0.5f * urand())));
    }
    for (int j = 0; j < hd; j++) p.w_norm[j] = 1;
    size_t nx = (size_t)B * T * D;
    float *hx = malloc(nx * sizeof(float)), *hdy = malloc(nx * sizeof(float));
    fill(hx, nx, 1.7f);   /* ~unit RMS, like a normalized input */
    fill(hdy, nx, 1e-3f);
    /* the layer on the default (CPU) backend: one arena for everything */
    gf_backend *be = be_default();
    const gf_dtype act = be_act(be);
    arena ar = {gf_none(), 0};
    gf_buf blk, grad, x, y, dy, dx, d_o;
    gdn_acts ca;
    gdn_scratch sc;
    for (int pass = 0; pass < 2; pass++) {
        blk = arena_take(&ar, p.n, act);
        grad = arena_take(&ar, p.n, GF_F32);
        x = arena_take(&ar, nx, act);
        y = arena_take(&ar, nx, act);
        dy = arena_take(&ar, nx, act);
        dx = arena_take(&ar, nx, act);
        d_o = arena_take(&ar, (size_t)(N * H * hd), act);
        gdn_acts_take(&ca, &ar, &cfg, B, T, gdn_keep_for(true, be_gdn_keeps_wy(be)), act);
        gdn_scratch_take(&sc, &ar, &cfg, B, T, act);
        if (pass) break;
        gf_buf all;
        if (be_alloc(be, &all, (ar.off + 3) / 4, GF_F32) != 0) {
            fprintf(stderr, "bench_gdn: %s\n", gf_last_error());
            return 1;
        }
        ar = (arena){all, 0};
    }
    be_upload(be, blk, p.block, GF_F32, p.n);
    be_upload(be, x, hx, GF_F32, nx);
    be_upload(be, dy, hdy, GF_F32, nx);
    be_upload(be, d_o, hdy, GF_F32, (size_t)(N * H * hd) < nx ? (size_t)(N * H * hd) : nx);
    be_zero(be, grad, p.n);
    gdn_weights w, g;
    gdn_weights_bind(&w, &cfg, blk);
    gdn_weights_bind(&g, &cfg, grad);

    double Hd = H, dk = hd, dv = hd, C = cfg.chunk, Dd = D;
    double f_proj = 2 * N * Dd * gdn_in_width(&cfg) + 2 * N * Dd * H * dv;
    double f_rec = N * Hd * 7 * dk * dv;   /* per token-head: S k, update, S q */
    /* per chunk: K K^T + substitution (C^2 (2dk + dv)), S W and S Q (4 C dk dv),
     * intra Q K^T and sum (C^2 (dk + dv)), state update (3 C dk dv) */
    double f_chk = N * Hd * (7 * dk * dv + C * (3 * dk + 2 * dv));
    double f_bwd_core = N * Hd * (5 * dk * dv + 20 * dk * dv);   /* replay + reverse step */
    double f_bwd = 2 * f_proj + f_bwd_core;

    double t_fc, t_fr, t_bw, t_cc, t_cr, t_cb, c_fc, c_fr, c_bw, c_cc, c_cr, c_cb;
    gf_gdn_shape s = {B, T, H, hd, hd, cfg.chunk, (float)gdn_query_scale(&cfg), false, false};
    gdn_layer_forward(be, &cfg, &w, &ca, x, y, gf_none(), NULL); /* warm-up */
    TIME_BEST(3, t_fc, gdn_layer_forward(be, &cfg, &w, &ca, x, y, gf_none(), NULL));
    c_fc = last_cpu;
    TIME_BEST(3, t_cc, be_gdn_core(be, ca.o, ca.ckpt, gf_none(), ca.q, ca.k, ca.v, ca.g, ca.beta, &s));
    c_cc = last_cpu;
    s.recurrent = true;
    TIME_BEST(3, t_cr, be_gdn_core(be, ca.o, ca.ckpt, gf_none(), ca.q, ca.k, ca.v, ca.g, ca.beta, &s));
    c_cr = last_cpu;
    cfg.form = GDN_FORM_RECURRENT;
    TIME_BEST(3, t_fr, gdn_layer_forward(be, &cfg, &w, &ca, x, y, gf_none(), NULL));
    c_fr = last_cpu;
    cfg.form = GDN_FORM_CHUNKED;
    gdn_layer_forward(be, &cfg, &w, &ca, x, y, gf_none(), NULL);
    TIME_BEST(3, t_bw, gdn_layer_backward(be, &cfg, &w, &g, &ca, &sc, x, dy, dx, false, true));
    c_bw = last_cpu;
    s.recurrent = false;
    TIME_BEST(3, t_cb, be_gdn_core_backward(be, sc.dq, sc.dk, sc.dv, sc.dg, sc.dbeta, d_o, ca.q, ca.k, ca.v, ca.g,
                                            ca.beta, ca.ckpt, &s));
    c_cb = last_cpu;
    if (be_sync(be) != 0) {
        fprintf(stderr, "bench_gdn: %s\n", gf_last_error());
        return 1;
    }
    double again = sgemm_gflops(&again_cpu);
    if (again > sgemm_rate) sgemm_rate = again;
    if (again_cpu > sgemm_cpu_rate) sgemm_cpu_rate = again_cpu;

    printf("sgemm 2048x1536x1536 (reference, best before/after): %.1f GFLOP/s wall, %.1f GFLOP per CPU-second\n",
           sgemm_rate * 1e-9, sgemm_cpu_rate * 1e-9);
    printf("%-34s %8s %8s %9s %8s %8s %9s\n", "pass", "wall ms", "cpu ms", "tokens/s", "GFLOP",
           "GFLOP/s", "vs sgemm");
    /* vs sgemm: FLOP per CPU-second relative to sgemm's, robust to other programs' load */
#define ROW(name, t, cpu, f)                                                               \
    printf("%-34s %8.1f %8.1f %9.0f %8.2f %8.1f %8.1f%%\n", name, (t) * 1e3, (cpu) * 1e3,     \
           N / (t), (f) * 1e-9, (f) / (t) * 1e-9, 100.0 * (f) / (cpu) / sgemm_cpu_rate)
    ROW("forward, chunked C=64 (layer)", t_fc, c_fc, f_proj + f_chk);
    ROW("forward, recurrent (layer)", t_fr, c_fr, f_proj + f_rec);
    ROW("  core only, chunked C=64", t_cc, c_cc, f_chk);
    ROW("  core only, recurrent", t_cr, c_cr, f_rec);
    ROW("backward (layer, all grads + dx)", t_bw, c_bw, f_bwd);
    ROW("  core only, backward", t_cb, c_cb, f_bwd_core);
    ROW("forward + backward (chunked)", t_fc + t_bw, c_fc + c_bw, f_proj + f_chk + f_bwd);
    printf("FLOP model: projections %.2f GFLOP fwd; core fwd %.2f (recurrent) / %.2f (chunked); "
           "core bwd %.2f; backward = 2 x projections + core bwd\n",
           f_proj * 1e-9, f_rec * 1e-9, f_chk * 1e-9, f_bwd_core * 1e-9);
    printf("tokens/s and GFLOP/s use wall time; cpu ms = this process's CPU time (threads summed)\n");
    printf("layer buffers (parameters, gradients, activations, scratch) %.1f MiB (checkpoints %.1f MiB)\n",
           ar.off / 1048576.0, (double)B * H * ((T + C - 1) / C) * dk * dv * 4 / 1048576);
    gf_buf all = ar.base;
    be_free(be, &all);
    gdn_params_free(&p);
    free(hx);
    free(hdy);
    return 0;
}
