/* Shared bits of the CPU benchmarks: a monotonic clock and the OpenBLAS sgemm
 * rate measured in the same run (the yardstick every figure is set against). */
#ifndef GRAFT_BENCH_UTIL_H
#define GRAFT_BENCH_UTIL_H

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cli/load_env.h"
#include "core/clock.h"

static inline double bench_now(void) { return clock_now_s(); }

/* CPU seconds used by every thread of the process: under a loaded machine,
 * FLOPs per CPU-second stay comparable where wall-clock rates do not. */
static inline double bench_cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The yardstick's line before it: which OpenBLAS kernels ran (src/cli/load_env.h). */
static inline void bench_print_blas_core(void) {
    char line[256];
    load_env_blas_line(line, sizeof line);
    printf("%s\n", line);
}

/* GFLOP per CPU-second of C[M,N] = A[M,K] B[N,K]^T, best of `reps`. */
static inline double bench_sgemm_gflops_cpu(int M, int N, int K, int reps) {
    float *a = calloc((size_t)M * K, sizeof *a), *b = calloc((size_t)N * K, sizeof *b),
          *c = malloc((size_t)M * N * sizeof *c);
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t = bench_cpu_now();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 1.0f, a, K, b, K, 0.0f, c, N);
        t = bench_cpu_now() - t;
        if (t < best) best = t;
    }
    free(a);
    free(b);
    free(c);
    return 2.0 * M * N * K / best * 1e-9;
}

static inline int bench_cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n-1] (n >= 1; v is sorted in place). */
static inline double bench_median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* GFLOP/s of C[M,N] = A[M,K] B[N,K]^T, best of `reps`. */
static inline double bench_sgemm_gflops(int M, int N, int K, int reps) {
    float *a = malloc((size_t)M * K * sizeof *a), *b = malloc((size_t)N * K * sizeof *b),
          *c = malloc((size_t)M * N * sizeof *c);
    for (size_t i = 0; i < (size_t)M * K; i++) a[i] = (float)((i * 7919) % 1000) * 1e-3f;
    for (size_t i = 0; i < (size_t)N * K; i++) b[i] = (float)((i * 104729) % 1000) * 1e-3f;
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t = bench_now();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 1.0f, a, K, b, K, 0.0f, c, N);
        t = bench_now() - t;
        if (t < best) best = t;
    }
    free(a);
    free(b);
    free(c);
    return 2.0 * M * N * K / best * 1e-9;
}

#endif
