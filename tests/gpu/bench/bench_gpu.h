/* Helpers for the GPU benchmarks (tests/gpu/bench/bench_*.c): timing through
 * backend.h (the host clock around a batch of calls closed by be_sync; a
 * batch runs for at least ~20 ms, so the sync's few microseconds do not
 * count), the machine's two ceilings measured in the same run, and one JSON
 * line per figure for tests/gpu/bench/table.py.
 *
 * Every figure is printed next to its floor: max(FLOPs / measured bf16 GEMM
 * rate, bytes / measured copy bandwidth); docs/cuda.md explains the counts.
 *
 * Smoke mode (GRAFT_BENCH_SMOKE=1, or GRAFT_GPU_TEST_DEVICE=cpu): the same
 * program at toy shapes on GRAFT_BENCH_DEVICE / GRAFT_GPU_TEST_DEVICE (default
 * cuda; cpu works): a check that it runs where there is no GPU, its figures
 * mean nothing. Without smoke and without a GPU: "SKIP: ..." and exit 77. */
#ifndef GRAFT_TESTS_GPU_BENCH_H
#define GRAFT_TESTS_GPU_BENCH_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/backend.h"
#include "backend/backend_impl.h" /* be_open_variants: the kernel variants forced */
#include "core/error.h"
#include "../gpu_open.h"

static double bench_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void bench_die(gf_backend *be, const char *what) {
    fprintf(stderr, "bench: %s: %s\n", what, gf_last_error());
    if (be) be_close(be);
    exit(1);
}

static bool bench_smoke_mode;

/* The device of this run: CUDA (bf16), or in smoke mode the one the
 * environment names; exits 77 when there is none. */
/* v: kernel variants to force (NULL: the backend chooses). */
static gf_backend *bench_open_variants_or_skip(const gf_backend_variants *v) {
    const char *sm = getenv("GRAFT_BENCH_SMOKE"), *bd = getenv("GRAFT_BENCH_DEVICE");
    const char *td = getenv("GRAFT_GPU_TEST_DEVICE");
    const char *dev = bd && *bd ? bd : td && *td ? td : "cuda";
    bench_smoke_mode = (sm && strcmp(sm, "1") == 0) || strncmp(dev, "cpu", 3) == 0;
    gf_backend_opts o = {dev, 0, false};
    gf_backend *be = NULL;
    if (be_open_variants(&be, &o, v) < 0) exit(gpu_open_failed(dev));
    if (bench_smoke_mode) fprintf(stderr, "SMOKE mode on %s: toy shapes, the figures mean nothing\n", be_name(be));
    return be;
}
static inline gf_backend *bench_open_or_skip(void) { return bench_open_variants_or_skip(NULL); }

/* Median seconds of one fn(ud) over `samples` batches, after warm-up. */
static double bench_time(gf_backend *be, void (*fn)(void *), void *ud, int samples) {
    fn(ud); /* warm-up: module load, plans, pools */
    if (be_sync(be) < 0) bench_die(be, "warm-up");
    double t0 = bench_now();
    fn(ud);
    if (be_sync(be) < 0) bench_die(be, "warm-up");
    const double one = bench_now() - t0;
    int reps = one > 0 ? (int)(0.02 / one) : 1000;
    if (reps < 1) reps = 1;
    if (reps > 1000) reps = 1000;
    double *t = malloc((size_t)samples * sizeof *t);
    for (int s = 0; s < samples; s++) {
        t0 = bench_now();
        for (int r = 0; r < reps; r++) fn(ud);
        if (be_sync(be) < 0) bench_die(be, "timed run");
        t[s] = (bench_now() - t0) / reps;
    }
    for (int i = 1; i < samples; i++) /* insertion sort: a handful of samples */
        for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
            const double x = t[j];
            t[j] = t[j - 1];
            t[j - 1] = x;
        }
    const double med = t[samples / 2];
    free(t);
    return med;
}

/* Random values uniform in [lo, hi), never exactly zero (zeros run faster than data). */
static void bench_fill_range(gf_backend *be, gf_buf b, size_t n, float lo, float hi, uint64_t seed) {
    const size_t chunk = (size_t)1 << 24;
    float *h = malloc((n < chunk ? n : chunk) * sizeof *h);
    uint64_t s = seed * 2654435761u + 1;
    for (size_t off = 0; off < n; off += chunk) {
        const size_t m = n - off < chunk ? n - off : chunk;
        for (size_t i = 0; i < m; i++) {
            s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
            const float u = (float)(((s * 2685821657736338717ull) >> 11) * (1.0 / 9007199254740992.0));
            h[i] = lo + (hi - lo) * u;
            if (h[i] == 0.0f) h[i] = hi * 0.5f;
        }
        if (be_upload(be, gf_at(b, off), h, GF_F32, m) < 0) bench_die(be, "upload");
    }
    free(h);
}
/* Random values in [-a, a], never zeros. */
static void bench_fill(gf_backend *be, gf_buf b, size_t n, float a, uint64_t seed) { bench_fill_range(be, b, n, -a, a, seed); }

/* ------------------------------------------------------------- ceilings */

typedef struct {
    double gemm_tflops; /* bf16 8192^3 through be_linear (cublasLt), random data */
    double copy_gbps;   /* device-to-device copy, bytes read + written */
} bench_ceilings;

typedef struct {
    gf_backend *be;
    gf_buf x, w, y;
    int n;
} gemm_ud;
static void gemm_fn(void *p) {
    gemm_ud *u = p;
    be_linear(u->be, u->y, u->x, u->w, gf_none(), u->n, u->n, u->n, false);
}
typedef struct {
    gf_backend *be;
    gf_buf a, b;
    size_t n;
} copy_ud;
static void copy_fn(void *p) {
    copy_ud *u = p;
    be_copy(u->be, u->b, u->a, u->n);
}

static bench_ceilings bench_measure_ceilings(gf_backend *be) {
    bench_ceilings c;
    const gf_dtype A = be_act(be); /* bf16 on CUDA; the CPU's float32 in smoke mode */
    gemm_ud g = {be, gf_none(), gf_none(), gf_none(), bench_smoke_mode ? 256 : 8192};
    const size_t nn = (size_t)g.n * g.n;
    if (be_alloc(be, &g.x, nn, A) < 0 || be_alloc(be, &g.w, nn, A) < 0 ||
        be_alloc(be, &g.y, nn, A) < 0)
        bench_die(be, "alloc");
    bench_fill(be, g.x, nn, 1.0f, 1);
    bench_fill(be, g.w, nn, 1.0f, 2);
    const double tg = bench_time(be, gemm_fn, &g, 9);
    c.gemm_tflops = 2.0 * g.n * (double)g.n * g.n / tg / 1e12;
    be_free(be, &g.x), be_free(be, &g.w), be_free(be, &g.y);

    copy_ud cp = {be, gf_none(), gf_none(), bench_smoke_mode ? (size_t)1 << 20 : (size_t)1 << 30}; /* 2 GiB of bf16 each way */
    if (be_alloc(be, &cp.a, cp.n, A) < 0 || be_alloc(be, &cp.b, cp.n, A) < 0) bench_die(be, "alloc");
    bench_fill(be, cp.a, cp.n, 1.0f, 3);
    const double tc = bench_time(be, copy_fn, &cp, 9);
    c.copy_gbps = 2.0 * (double)gf_dtype_size(A) * (double)cp.n / tc / 1e9;
    be_free(be, &cp.a), be_free(be, &cp.b);
    printf("{\"bench\":\"ceiling\",\"what\":\"%s GEMM %d^3 (%s)\",\"ms\":%.4f,\"tflops\":%.1f}\n", gf_dtype_name(A), g.n,
           be_is_host(be) ? "cpu smoke" : "cublasLt", tg * 1e3, c.gemm_tflops);
    printf("{\"bench\":\"ceiling\",\"what\":\"device copy %.0f MiB\",\"ms\":%.4f,\"gbps\":%.0f}\n",
           (double)cp.n * gf_dtype_size(A) / (1 << 20), tc * 1e3, c.copy_gbps);
    return c;
}

/* One figure: seconds, FLOPs and bytes it must at least do and move; prints
 * its JSON line with the floor and the rates. extra: more JSON fields
 * (",\"k\":v"), or "". */
static void bench_report(const char *bench, const char *what, double sec, double flops, double bytes,
                         const bench_ceilings *c, const char *extra) {
    const double floor_s = fmax(flops / (c->gemm_tflops * 1e12), bytes / (c->copy_gbps * 1e9));
    printf("{\"bench\":\"%s\",\"what\":\"%s\",\"ms\":%.4f,\"tflops\":%.1f,\"gbps\":%.0f,\"floor_ms\":%.4f,"
           "\"of_floor\":%.3f%s}\n",
           bench, what, sec * 1e3, flops / sec / 1e12, bytes / sec / 1e9, floor_s * 1e3, floor_s / sec, extra);
    fflush(stdout);
}

#endif
