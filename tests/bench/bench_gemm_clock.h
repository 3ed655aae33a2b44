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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef void (*sgemm_fn)(const enum CBLAS_ORDER, const enum CBLAS_TRANSPOSE, const enum CBLAS_TRANSPOSE,
                         const blasint, const blasint, const blasint, const float, const float *, const blasint,
                         const float *, const blasint, const float, float *, const blasint);

/* Two classes of call: big (at least GEMM_CLOCK_BIG multiply-adds: the projections and the LM head
 * at a training step's rows) and small (the attention's and the GDN core's per-head blocks). */
#define GEMM_CLOCK_BIG ((int64_t)1 << 26)
typedef struct {
    double flops, cpu_s;
    long calls;
} gemm_clock_sum;

/* integers, so that the calls from several threads add with fetch_add */
static atomic_bool gemm_clock_on;
static atomic_llong gemm_clock_macs[2], gemm_clock_ns[2], gemm_clock_calls[2];

static int64_t gemm_clock_ns_now(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Counting from now on, from zero. */
static inline void gemm_clock_start(void) {
    for (int c = 0; c < 2; c++) {
        atomic_store(&gemm_clock_macs[c], 0);
        atomic_store(&gemm_clock_ns[c], 0);
        atomic_store(&gemm_clock_calls[c], 0);
    }
    atomic_store(&gemm_clock_on, true);
}

/* What was counted since gemm_clock_start (counting goes on): s[0] the small calls, s[1] the big. */
static inline void gemm_clock_read(gemm_clock_sum s[2]) {
    for (int c = 0; c < 2; c++)
        s[c] = (gemm_clock_sum){2.0 * (double)atomic_load(&gemm_clock_macs[c]),
                                1e-9 * (double)atomic_load(&gemm_clock_ns[c]), (long)atomic_load(&gemm_clock_calls[c])};
}

/* Counting off, the sums kept; gemm_clock_resume goes on adding to them (a yardstick's own sgemm
 * calls between steps are not the step's). */
static inline void gemm_clock_stop(void) { atomic_store(&gemm_clock_on, false); }
static inline void gemm_clock_resume(void) { atomic_store(&gemm_clock_on, true); }

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
    const int64_t t0 = gemm_clock_ns_now(id);
    f(order, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    const int64_t dt = gemm_clock_ns_now(id) - t0, macs = (int64_t)M * N * K;
    const int c = macs >= GEMM_CLOCK_BIG;
    atomic_fetch_add(&gemm_clock_calls[c], 1);
    atomic_fetch_add(&gemm_clock_ns[c], dt);
    atomic_fetch_add(&gemm_clock_macs[c], macs);
}

#endif
