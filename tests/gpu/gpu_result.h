/* PASS / FAIL lines, the relative error and the device under test for the GPU
 * programs that compare whole results of the device and the CPU
 * (tests/gpu/model/test_*.c); the op-by-op checks have gpu_check.h. Each check
 * prints one line starting with PASS or FAIL (tests/gpu/run.sh counts them);
 * main ends with `return result_summary();`. */
#ifndef GRAFT_TESTS_GPU_RESULT_H
#define GRAFT_TESTS_GPU_RESULT_H

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "backend/backend.h"
#include "core/error.h"
#include "gpu_open.h"

static int result_passed, result_failed;

static inline void result(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void result(bool ok, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    printf("%s  ", ok ? "PASS" : "FAIL");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    ok ? result_passed++ : result_failed++;
}

/* Prints "N passed, N failed"; the exit status: 0 when nothing failed, else 1. */
static inline int result_summary(void) {
    printf("%d passed, %d failed\n", result_passed, result_failed);
    return result_failed ? 1 : 0;
}

/* ||a - b|| / ||b|| (||a - b|| when b is 0); Inf when anything is not finite. */
static inline double rel_l2(const double *a, const double *b, size_t n) {
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(a[i]) || !isfinite(b[i])) return INFINITY;
        num += (a[i] - b[i]) * (a[i] - b[i]);
        den += b[i] * b[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}
/* The same of float arrays, summed in double. */
static inline double rel_l2_f(const float *a, const float *b, size_t n) {
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(a[i]) || !isfinite(b[i])) return INFINITY;
        num += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        den += (double)b[i] * b[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* The device under test: GRAFT_GPU_TEST_DEVICE (default cuda; cpu puts a CPU
 * backend of `threads` threads in the GPU's place), storing float32 (fp32) or
 * its own activation type; *mode is "fp32" or "bf16". NULL after a
 * "SKIP: ..." line when there is no CUDA device (main then exits 77); where
 * there is one, a failure to open fails the check (gpu_open.h: exit 1). */
static inline gf_backend *open_device_or_skip(bool fp32, int threads, const char **mode) {
    const char *dev = getenv("GRAFT_GPU_TEST_DEVICE");
    const gf_backend_opts o = {dev && *dev ? dev : "cuda", threads, fp32};
    gf_backend *be = NULL;
    if (be_open(&be, &o) != 0) {
        const int rc = gpu_open_failed(o.device);
        if (rc != 77) exit(rc);
        return NULL;
    }
    *mode = be_act(be) == GF_F32 ? "fp32" : "bf16";
    printf("== %s\n", be_name(be));
    return be;
}

#endif
