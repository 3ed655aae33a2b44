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

#include "gdn/gdn.h"

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
    gdn_params p, grad;
    gdn_params_alloc(&p, &cfg);
    gdn_params_alloc(&grad, &cfg);
    fill(p.block, p.n, 0.02f);
    for (int h = 0; h < H; h++) {
        p.a_log[h] = logf(1.0f + 15.0f * (0.5f + 0.5f * urand()));
        p.dt_bias[h] = logf(expm1f(0.001f + 0.05f * (0.5f + 0.5f * urand())));
    }
    for (int j = 0; j < hd; j++) p.w_norm[j] = 1;
    size_t nx = (size_t)B * T * D;
    float *x = malloc(nx * sizeof(float)), *y = malloc(nx * sizeof(float));
    float *dy = malloc(nx * sizeof(float)), *dx = malloc(nx * sizeof(float));
    fill(x, nx, 1.7f);   /* ~unit RMS, like a normalized input */
    fill(dy, nx, 1e-3f);
    gdn_cache ca;
    gdn_cache_alloc(&ca, &cfg, B, T);

    double Hd = H, dk = hd, dv = hd, C = cfg.chunk, Dd = D;
    double f_proj = 2 * N * Dd * gdn_in_width(&cfg) + 2 * N * Dd * H * dv;
    double f_rec = N * Hd * 7 * dk * dv;   /* per token-head: S k, update, S q */
    /* per chunk: K K^T + substitution (C^2 (2dk + dv)), S W and S Q (4 C dk dv),
     * intra Q K^T and sum (C^2 (dk + dv)), state update (3 C dk dv) */
    double f_chk = N * Hd * (7 * dk * dv + C * (3 * dk + 2 * dv));
    double f_bwd_core = N * Hd * (5 * dk * dv + 20 * dk * dv);   /* replay + reverse step */
    double f_bwd = 2 * f_proj + f_bwd_core;

    double t_fc, t_fr, t_bw, t_cc, t_cr, t_cb, c_fc, c_fr, c_bw, c_cc, c_cr, c_cb;
    gdn_core_shape s;
    gdn_core_shape_from(&s, &cfg, B, T);
    gdn_forward(&cfg, &p, &ca, x, y); /* warm-up */
    TIME_BEST(3, t_fc, gdn_forward(&cfg, &p, &ca, x, y));
    c_fc = last_cpu;
    TIME_BEST(3, t_cc, gdn_core_forward(&s, ca.q, ca.k, ca.v, ca.g, ca.beta, ca.o, ca.ckpt));
    c_cc = last_cpu;
    s.form = GDN_FORM_RECURRENT;
    TIME_BEST(3, t_cr, gdn_core_forward(&s, ca.q, ca.k, ca.v, ca.g, ca.beta, ca.o, ca.ckpt));
    c_cr = last_cpu;
    cfg.form = GDN_FORM_RECURRENT;
    TIME_BEST(3, t_fr, gdn_forward(&cfg, &p, &ca, x, y));
    c_fr = last_cpu;
    cfg.form = GDN_FORM_CHUNKED;
    gdn_forward(&cfg, &p, &ca, x, y);
    TIME_BEST(3, t_bw, gdn_backward(&cfg, &p, &ca, x, dy, dx, &grad));
    c_bw = last_cpu;
    {
        float *d_o = malloc(N * H * dv * sizeof(float)), *dq = malloc(N * H * (3 * dk + 2) * sizeof(float));
        fill(d_o, (size_t)(N * H * dv), 1e-3f);
        float *dkk = dq + (size_t)(N * H * dk), *dvv = dkk + (size_t)(N * H * dk);
        float *dg = dvv + (size_t)(N * H * dv), *db = dg + (size_t)(N * H);
        s.form = GDN_FORM_CHUNKED;
        TIME_BEST(3, t_cb, gdn_core_backward(&s, ca.q, ca.k, ca.v, ca.g, ca.beta, ca.ckpt, d_o, dq,
                                             dkk, dvv, dg, db));
        c_cb = last_cpu;
        free(d_o);
        free(dq);
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
    printf("activation cache %.1f MiB (checkpoints %.1f MiB)\n", ca.n * 4.0 / 1048576,
           (double)B * H * ca.n_chunks * dk * dv * 4 / 1048576);

    gdn_cache_free(&ca);
    gdn_params_free(&p);
    gdn_params_free(&grad);
    free(x);
    free(y);
    free(dy);
    free(dx);
    return 0;
}
