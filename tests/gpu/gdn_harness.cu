/* tests/gpu/gdn_harness.h: a stand-in CUDA backend for the GDN tests. */
#include "tests/gpu/gdn_harness.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/cuda_gdn_dev.cuh"

/* backend.c (branch spine) defines these for the product; weak here so that the
 * real ones win once they are linked in. */
extern "C" __attribute__((weak)) void be_set_error(gf_backend *be, const char *fmt, ...) {
    if (be->error[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(be->error, sizeof be->error, fmt, ap);
    va_end(ap);
}
extern "C" __attribute__((weak)) size_t gf_dtype_size(gf_dtype t) {
    return t == GF_BF16 ? 2 : t == GF_F64 ? 8 : 4;
}
extern "C" __attribute__((weak)) const char *gf_dtype_name(gf_dtype t) {
    return t == GF_BF16 ? "bf16" : t == GF_F64 ? "f64" : t == GF_I32 ? "i32" : "f32";
}

static uint16_t bf16_bits(double x) {
    float f = (float)x;
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7f800000u) == 0x7f800000u) return (uint16_t)((u >> 16) | ((u & 0xffffu) ? 0x40u : 0)); /* inf / nan */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}
static double bf16_value(uint16_t b) {
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

#ifdef GDN_EMULATE
extern "C" bool gh_emulated(void) { return true; }
#else
extern "C" bool gh_emulated(void) { return false; }
#endif

static bool cu(gf_backend *be, cudaError_t e, const char *what) {
    if (e == cudaSuccess) return true;
    be_set_error(be, "%s: %s", what, cudaGetErrorString(e));
    return false;
}

extern "C" int gh_open(gf_backend **out, bool fp32, char *why, size_t nwhy) {
    *out = nullptr;
    gf_backend *be = (gf_backend *)calloc(1, sizeof *be);
    cuda_impl *im = (cuda_impl *)calloc(1, sizeof *im);
    if (!be || !im) {
        free(be);
        free(im);
        snprintf(why, nwhy, "out of host memory");
        return -1;
    }
    im->fp32 = fp32;
#ifdef GDN_EMULATE
    im->prop.sharedMemPerBlockOptin = 232448;
    snprintf(im->prop.name, sizeof im->prop.name, "CPU emulation");
#else
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        cudaGetLastError();
        free(be);
        free(im);
        snprintf(why, nwhy, "SKIP: no CUDA GPU on this machine");
        return 77;
    }
    if (cudaSetDevice(0) != cudaSuccess || cudaGetDeviceProperties(&im->prop, 0) != cudaSuccess ||
        cudaStreamCreateWithFlags(&im->stream, cudaStreamNonBlocking) != cudaSuccess ||
        cublasCreate(&im->blas) != CUBLAS_STATUS_SUCCESS || cublasSetStream(im->blas, im->stream) != CUBLAS_STATUS_SUCCESS) {
        snprintf(why, nwhy, "cuda:0: cannot start: %s", cudaGetErrorString(cudaGetLastError()));
        free(be);
        free(im);
        return -1;
    }
    cublasSetMathMode(im->blas, CUBLAS_DEFAULT_MATH);
#endif
    im->device = 0;
    be->impl = im;
    be->act = fp32 ? GF_F32 : GF_BF16;
    be->host = false;
    snprintf(be->name, sizeof be->name, "cuda:0 %.80s (%s, GDN test harness)", im->prop.name, fp32 ? "fp32" : "bf16");
    *out = be;
    return 0;
}

extern "C" void gh_close(gf_backend *be) {
    if (!be) return;
    cuda_impl *im = cuda_of(be);
#ifndef GDN_EMULATE
    if (im->blas) cublasDestroy(im->blas);
    if (im->stream) cudaStreamDestroy(im->stream);
#endif
    free(im);
    free(be);
}

extern "C" int gh_alloc(gf_backend *be, gf_buf *b, size_t n, gf_dtype t) {
    b->dtype = t;
    b->ptr = nullptr;
#ifdef GDN_EMULATE
    b->ptr = malloc(n * gf_dtype_size(t) + 1);
    return b->ptr ? 0 : -1;
#else
    if (cudaMalloc(&b->ptr, n * gf_dtype_size(t) + 1) != cudaSuccess) {
        cudaGetLastError();
        b->ptr = nullptr;
        be_set_error(be, "out of device memory: %.1f MiB asked", (double)n * gf_dtype_size(t) / (1 << 20));
        return -1;
    }
    return 0;
#endif
}

extern "C" void gh_free(gf_backend *be, gf_buf *b) {
    (void)be;
#ifdef GDN_EMULATE
    free(b->ptr);
#else
    if (b->ptr) cudaFree(b->ptr);
#endif
    b->ptr = nullptr;
}

static int copy_to(gf_backend *be, void *dst, const void *src, size_t bytes) {
#ifdef GDN_EMULATE
    (void)be;
    memcpy(dst, src, bytes);
    return 0;
#else
    return cu(be, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, cuda_stream(be)), "copy") &&
                   cu(be, cudaStreamSynchronize(cuda_stream(be)), "copy")
               ? 0
               : -1;
#endif
}

extern "C" int gh_upload(gf_backend *be, gf_buf dst, const double *src, size_t n) {
    size_t es = gf_dtype_size(dst.dtype);
    char *tmp = (char *)malloc(n * es + 1);
    if (!tmp) return -1;
    for (size_t i = 0; i < n; i++) {
        if (dst.dtype == GF_BF16) {
            uint16_t b = bf16_bits(src[i]);
            memcpy(tmp + 2 * i, &b, 2);
        } else if (dst.dtype == GF_F64) {
            memcpy(tmp + 8 * i, &src[i], 8);
        } else {
            float f = (float)src[i];
            memcpy(tmp + 4 * i, &f, 4);
        }
    }
    int rc = copy_to(be, dst.ptr, tmp, n * es);
    free(tmp);
    return rc;
}

extern "C" int gh_download(gf_backend *be, double *dst, gf_buf src, size_t n) {
    size_t es = gf_dtype_size(src.dtype);
    char *tmp = (char *)malloc(n * es + 1);
    if (!tmp) return -1;
#ifndef GDN_EMULATE
    if (!cu(be, cudaStreamSynchronize(cuda_stream(be)), "download")) {
        free(tmp);
        return -1;
    }
#endif
    int rc = copy_to(be, tmp, src.ptr, n * es);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (src.dtype == GF_BF16) {
            uint16_t b;
            memcpy(&b, tmp + 2 * i, 2);
            dst[i] = bf16_value(b);
        } else if (src.dtype == GF_F64) {
            memcpy(&dst[i], tmp + 8 * i, 8);
        } else {
            float f;
            memcpy(&f, tmp + 4 * i, 4);
            dst[i] = f;
        }
    }
    free(tmp);
    return rc;
}

extern "C" int gh_poison(gf_backend *be, gf_buf b, size_t n) {
    double *nan = (double *)malloc(n * sizeof(double) + 1);
    if (!nan) return -1;
    for (size_t i = 0; i < n; i++) nan[i] = NAN;
    int rc = gh_upload(be, b, nan, n);
    free(nan);
    return rc;
}

__global__ void gh_fill_kernel(void *p, int bf, size_t n, unsigned seed, float lo, float hi) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ ((uint64_t)seed << 32);
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    float u = lo + (hi - lo) * (float)((x >> 40) * (1.0 / 16777216.0));
    if (bf)
        ((bf16 *)p)[i] = __float2bfloat16(u);
    else
        ((float *)p)[i] = u;
}

extern "C" int gh_fill_uniform(gf_backend *be, gf_buf b, size_t n, unsigned seed, float lo, float hi) {
    GDN_LAUNCH(gh_fill_kernel, dim3(cuda_blocks(n, 256)), dim3(256), 0, cuda_stream(be), b.ptr, b.dtype == GF_BF16, n,
               seed, lo, hi);
    return cu(be, cudaGetLastError(), "fill") ? 0 : -1;
}

extern "C" int gh_sync(gf_backend *be, char *why, size_t nwhy) {
#ifndef GDN_EMULATE
    cu(be, cudaStreamSynchronize(cuda_stream(be)), "sync");
    cu(be, cudaGetLastError(), "sync");
#endif
    if (be->error[0]) {
        snprintf(why, nwhy, "%s", be->error);
        be->error[0] = 0;
        return -1;
    }
    return 0;
}

extern "C" int gh_gemm(gf_backend *be, gf_buf y, gf_buf A, gf_buf B, int M, int N, int K, bool trans_a, bool trans_b,
                       bool accumulate) {
#ifdef GDN_EMULATE
    (void)be, (void)y, (void)A, (void)B, (void)M, (void)N, (void)K, (void)trans_a, (void)trans_b, (void)accumulate;
    return -1;
#else
    /* Row-major y = op(A) op(B) is column-major y^T = op(B)^T op(A)^T; a row-major
     * matrix read column-major is its transpose. */
    float one = 1, beta = accumulate ? 1.f : 0.f;
    cudaDataType ta = A.dtype == GF_BF16 ? CUDA_R_16BF : CUDA_R_32F, ty = y.dtype == GF_BF16 ? CUDA_R_16BF : CUDA_R_32F;
    cublasStatus_t st = cublasGemmEx(cuda_of(be)->blas, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                                     trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, &one, B.ptr, ta, trans_b ? K : N,
                                     A.ptr, ta, trans_a ? M : K, &beta, y.ptr, ty, N, CUBLAS_COMPUTE_32F,
                                     CUBLAS_GEMM_DEFAULT);
    if (st != CUBLAS_STATUS_SUCCESS) {
        be_set_error(be, "cublasGemmEx: status %d", (int)st);
        return -1;
    }
    return 0;
#endif
}

struct gh_timer {
    gf_backend *be;
    cudaEvent_t a, b;
};

extern "C" gh_timer *gh_timer_new(gf_backend *be) {
    gh_timer *t = (gh_timer *)calloc(1, sizeof *t);
    if (!t) return nullptr;
    t->be = be;
#ifndef GDN_EMULATE
    cudaEventCreate(&t->a);
    cudaEventCreate(&t->b);
#endif
    return t;
}
extern "C" void gh_timer_start(gh_timer *t) {
#ifndef GDN_EMULATE
    cudaEventRecord(t->a, cuda_stream(t->be));
#else
    (void)t;
#endif
}
extern "C" float gh_timer_stop(gh_timer *t) {
    float ms = 0;
#ifndef GDN_EMULATE
    cudaEventRecord(t->b, cuda_stream(t->be));
    cudaEventSynchronize(t->b);
    cudaEventElapsedTime(&ms, t->a, t->b);
#else
    (void)t;
#endif
    return ms;
}
extern "C" void gh_timer_free(gh_timer *t) {
    if (!t) return;
#ifndef GDN_EMULATE
    cudaEventDestroy(t->a);
    cudaEventDestroy(t->b);
#endif
    free(t);
}
