/* Test helpers: host arrays in and out of backend buffers (the default
 * backend, be_default(): the CPU reference unless a test installs another). */
#ifndef GRAFT_TESTS_BE_UTIL_H
#define GRAFT_TESTS_BE_UTIL_H

#include <stdio.h>
#include <stdlib.h>

#include "backend/backend.h"
#include "core/error.h"

/* GRAFT_TEST_DEVICE=cuda[:N] (tests/gpu/run.sh): this program's tests that use
 * the default backend run on that device instead of the CPU reference (with
 * GRAFT_CUDA_FP32=1 in float32). Unset: nothing changes. Exits 77 (skipped)
 * when the device does not open. Call first in main. */
static inline void tb_device_close(void) {
    gf_backend *be = be_default();
    be_set_default(NULL);
    be_close(be);
}
static inline void tb_device_from_env(void) {
    const char *dev = getenv("GRAFT_TEST_DEVICE");
    if (!dev || !*dev) return;
    const gf_backend_opts o = {dev, 0, false};
    gf_backend *be;
    if (be_open(&be, &o) != 0) {
        printf("SKIP: GRAFT_TEST_DEVICE=%s: %s\n", dev, gf_last_error());
        exit(77);
    }
    be_set_default(be);
    atexit(tb_device_close);
    printf("tests on %s\n", be_name(be));
}

/* A buffer of n elements of type t holding host x (NULL: zeroed). */
static inline gf_buf tb_new(gf_dtype t, const void *x, gf_dtype host_t, size_t n) {
    gf_backend *be = be_default();
    gf_buf b;
    if (be_alloc(be, &b, n ? n : 1, t) != 0) abort();
    if (x) be_upload(be, b, x, host_t, n);
    else be_zero(be, b, n ? n : 1);
    return b;
}
static inline gf_buf tb_f32(const float *x, size_t n) { return tb_new(GF_F32, x, GF_F32, n); }
static inline gf_buf tb_act(const float *x, size_t n) { return tb_new(be_act(be_default()), x, GF_F32, n); }
static inline void tb_get(float *dst, gf_buf b, size_t n) {
    if (be_download(be_default(), dst, GF_F32, b, n) != 0) abort();
}
static inline double tb_get_f64(gf_buf b) {
    double x = 0;
    if (be_download(be_default(), &x, GF_F64, b, 1) != 0) abort();
    return x;
}
static inline void tb_free(gf_buf *b) { be_free(be_default(), b); }

/* One AdamW step on host arrays through be_adamw. */
static inline void tb_adamw(float *p, const float *g, float *m, float *v, size_t n, float lr, float b1, float b2,
                            float eps, float wd, int step) {
    gf_buf P = tb_f32(p, n), G = tb_f32(g, n), M = tb_f32(m, n), V = tb_f32(v, n);
    const gf_adamw h = {lr, b1, b2, eps, wd, step, 1.0f};
    be_adamw(be_default(), P, gf_none(), G, M, V, n, &h);
    tb_get(p, P, n), tb_get(m, M, n), tb_get(v, V, n);
    tb_free(&P), tb_free(&G), tb_free(&M), tb_free(&V);
}

#endif
