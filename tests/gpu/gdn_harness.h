/* A minimal CUDA backend for the GDN tests and benchmarks (tests/gpu only):
 * a gf_backend whose impl is a cuda_impl with one stream, device buffers, and
 * host <-> device copies with conversion from / to double. It stands in for the
 * backend core (branch `cuda`) until that is merged; built with -DGDN_EMULATE it
 * runs on the CPU emulation (tests/gpu/emu). */
#ifndef GRAFT_TESTS_GPU_GDN_HARNESS_H
#define GRAFT_TESTS_GPU_GDN_HARNESS_H

#include <stdbool.h>
#include <stddef.h>

#include "backend/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 0, or 77 with a reason in why (no GPU / emulation not built), or -1 with why. */
int gh_open(gf_backend **out, bool fp32, char *why, size_t nwhy);
void gh_close(gf_backend *be);
bool gh_emulated(void);
/* -1 when out of device memory. */
int gh_alloc(gf_backend *be, gf_buf *b, size_t n, gf_dtype t);
void gh_free(gf_backend *be, gf_buf *b);
/* Host doubles <-> the buffer's type (bf16 rounds to nearest even). */
int gh_upload(gf_backend *be, gf_buf dst, const double *src, size_t n);
int gh_download(gf_backend *be, double *dst, gf_buf src, size_t n);
/* Fills with uniform values in [lo, hi) from a hash of (seed, index), on the device. */
int gh_fill_uniform(gf_backend *be, gf_buf b, size_t n, unsigned seed, float lo, float hi);
/* Fills with NaN (every element the op must write is then checked). */
int gh_poison(gf_backend *be, gf_buf b, size_t n);
/* Waits for the stream; -1 and the message in why on any error (sticky ones too). */
int gh_sync(gf_backend *be, char *why, size_t nwhy);
/* Row-major y[M, N] = op(A) op(B) (+ y when accumulate); A stored [M, K] or, when
 * trans_a, [K, M]; B stored [K, N] or, when trans_b, [N, K]. ACT operands, F32 or
 * ACT y, fp32 accumulation (cuBLAS): the benchmarks' projections. */
int gh_gemm(gf_backend *be, gf_buf y, gf_buf A, gf_buf B, int M, int N, int K, bool trans_a, bool trans_b,
            bool accumulate);
/* Device event timing: returns ms between two marks. */
typedef struct gh_timer gh_timer;
gh_timer *gh_timer_new(gf_backend *be);
void gh_timer_start(gh_timer *t);
float gh_timer_stop(gh_timer *t);
void gh_timer_free(gh_timer *t);

#ifdef __cplusplus
}
#endif

#endif
