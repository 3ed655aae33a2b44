/* The CPU time a benchmark's own sgemm calls take, counted from inside the
 * run: a yardstick that moves with the machine. On a shared machine the
 * stand-alone sgemm yardstick (bench_util.h) can move 2x between its passes
 * before and after the runs, so a step's "% of sgemm" against it says little;
 * the step's own GEMMs, timed while the step runs, slow down with it.
 *
 * This header DEFINES cblas_sgemm: the one program that includes it (one
 * translation unit, bench_train.c) then resolves the engine's calls to this
 * definition, which counts 2 M N K FLOPs and the CPU time of the call while
 * counting is on, and calls OpenBLAS's through dlsym(RTLD_NEXT). The time: the
 * process's CPU clock for a call made outside a parallel region (OpenBLAS's
 * own threads run it and are counted), the calling thread's for one made
 * inside (the attention and the GDN core call sgemm from their OpenMP
 * threads, each on one thread); the two never overlap. The includer defines
 * _GNU_SOURCE before its first include (RTLD_NEXT). */
#ifndef GRAFT_BENCH_GEMM_CLOCK_H
#define GRAFT_BENCH_GEMM_CLOCK_H

#include <cblas.h>
#include <dlfcn.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef void (*sgemm_fn)(const enum CBLAS_ORDER, const enum CBLAS_TRANSPOSE, const enum CBLAS_TRANSPOSE,
                         const blasint, const blasint, const blasint, const float, const float *, const blasint,
                         const float *, const blasint, const float, float *, const blasint);

/* Two classes of call: big (at least GEMM_CLOCK_BIG multiply-adds: the projections and the LM head
 * at a training step's rows) and small (the attention's and the GDN core's per-head blocks). */
#define GEMM_CLOCK_BIG ((double)(1 << 26))
typedef struct {
    double flops, cpu_s;
    long calls;
} gemm_clock_sum;

static atomic_bool gemm_clock_on;
static _Atomic double gemm_clock_flops[2], gemm_clock_cpu_s[2];
static _Atomic long gemm_clock_calls[2];

static double gemm_clock_now(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void gemm_clock_add(_Atomic double *a, double x) { /* _Atomic double has no fetch_add */
    double old = atomic_load(a);
    while (!atomic_compare_exchange_weak(a, &old, old + x)) {
    }
}

/* Counting from now on, from zero. */
static inline void gemm_clock_start(void) {
    for (int c = 0; c < 2; c++) {
        atomic_store(&gemm_clock_flops[c], 0.0);
        atomic_store(&gemm_clock_cpu_s[c], 0.0);
        atomic_store(&gemm_clock_calls[c], 0);
    }
    atomic_store(&gemm_clock_on, true);
}

/* What was counted since gemm_clock_start (counting goes on): s[0] the small calls, s[1] the big. */
static inline void gemm_clock_read(gemm_clock_sum s[2]) {
    for (int c = 0; c < 2; c++)
        s[c] = (gemm_clock_sum){atomic_load(&gemm_clock_flops[c]), atomic_load(&gemm_clock_cpu_s[c]),
                                atomic_load(&gemm_clock_calls[c])};
}

static inline void gemm_clock_stop(void) { atomic_store(&gemm_clock_on, false); }

void cblas_sgemm(const enum CBLAS_ORDER order, const enum CBLAS_TRANSPOSE ta, const enum CBLAS_TRANSPOSE tb,
                 const blasint M, const blasint N, const blasint K, const float alpha, const float *A, const blasint lda,
                 const float *B, const blasint ldb, const float beta, float *C, const blasint ldc) {
    static _Atomic(sgemm_fn) real;
    sgemm_fn f = atomic_load(&real);
    if (!f) {
        *(void **)&f = dlsym(RTLD_NEXT, "cblas_sgemm");
        if (!f) {
            fprintf(stderr, "bench: OpenBLAS's cblas_sgemm not found behind the counting one: %s\n", dlerror());
            exit(1);
        }
        atomic_store(&real, f);
    }
    if (!atomic_load(&gemm_clock_on)) {
        f(order, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    const clockid_t id = omp_in_parallel() ? CLOCK_THREAD_CPUTIME_ID : CLOCK_PROCESS_CPUTIME_ID;
    const double t0 = gemm_clock_now(id);
    f(order, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    const double dt = gemm_clock_now(id) - t0, macs = (double)M * N * K;
    const int c = macs >= GEMM_CLOCK_BIG;
    atomic_fetch_add(&gemm_clock_calls[c], 1);
    gemm_clock_add(&gemm_clock_cpu_s[c], dt);
    gemm_clock_add(&gemm_clock_flops[c], 2 * macs);
}

#endif
