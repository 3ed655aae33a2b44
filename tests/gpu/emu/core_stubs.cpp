/* The core family of the CPU emulation (make test-core-emu): what the core's
 * kernel files take from the rest of the CUDA backend, for the emulated build:
 * checks and errors as cuda_backend.cu has them, scratch from the host heap
 * (device memory is host memory here). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "backend/cuda/cuda_ops.cuh"

extern "C" size_t gf_dtype_size(gf_dtype t) { return t == GF_BF16 ? 2 : t == GF_F64 ? 8 : 4; }
extern "C" const char *gf_dtype_name(gf_dtype t) {
    return t == GF_F32 ? "f32" : t == GF_BF16 ? "bf16" : t == GF_F64 ? "f64" : "i32";
}

extern "C" void be_set_error(gf_backend *be, const char *fmt, ...) {
    if (be->error[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(be->error, sizeof be->error, fmt, ap);
    va_end(ap);
}

void cuda_after(gf_backend *be, const char *op) { cuda_st(be)->last_op = op; }

bool cuda_want(gf_backend *be, const char *op, const char *what, gf_buf b, gf_dtype t) {
    if (gf_is_none(b) || b.dtype == t) return true;
    be_set_error(be, "%s: %s is %s, expected %s", op, what, gf_dtype_name(b.dtype), gf_dtype_name(t));
    return false;
}
bool cuda_want_float(gf_backend *be, const char *op, const char *what, gf_buf b) {
    if (gf_is_none(b) || b.dtype == GF_F32 || b.dtype == GF_BF16) return true;
    be_set_error(be, "%s: %s is %s, expected f32 or bf16", op, what, gf_dtype_name(b.dtype));
    return false;
}
bool cuda_need(gf_backend *be, const char *op, const char *what, gf_buf b) {
    if (!gf_is_none(b)) return true;
    be_set_error(be, "%s: %s is required", op, what);
    return false;
}

void *cuda_scratch(gf_backend *be, size_t bytes, const char *op) {
    void *p = malloc(bytes ? bytes : 16);
    if (!p) be_set_error(be, "%s: out of memory", op);
    else memset(p, 0xff, bytes); /* NaN: scratch starts as garbage on the GPU too */
    return p;
}
void cuda_scratch_free(gf_backend *, void *p) { free(p); }
