/* Device memory: allocation, zero, copy with conversion, host <-> device,
 * stream-ordered scratch. Allocation failures are reported at once (-1 and
 * gf_last_error), faults inside queued work through the sticky error. */
#include <stdint.h>
#include <string.h>

#include "backend/cuda/cuda_ops.cuh"
extern "C" {
#include "core/error.h" /* a C header without C++ guards */
}

#define STAGE_BYTES ((size_t)64 << 20) /* conversion chunk for host <-> device */

static double gib(size_t b) { return (double)b / (1024.0 * 1024.0 * 1024.0); }

/* n * size without overflow; false when it would overflow. */
static bool bytes_of(size_t n, gf_dtype t, size_t *out) {
    const size_t s = gf_dtype_size(t);
    if (s && n > SIZE_MAX / s) return false;
    *out = n * s;
    return true;
}

int cuda_alloc(gf_backend *be, gf_buf *out, size_t n, gf_dtype t) {
    cuda_impl *c = cuda_of(be);
    *out = gf_none();
    size_t bytes;
    if (!bytes_of(n, t, &bytes)) return gf_fail("out of memory on cuda:%d: %zu elements of %s do not fit in size_t", c->device, n, gf_dtype_name(t));
    cudaSetDevice(c->device);
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, bytes ? bytes : 256);
    if (e == cudaErrorMemoryAllocation) {
        /* scratch freed into the pool may hold what we need: give it back and retry */
        cudaGetLastError();
        cudaMemPool_t pool;
        if (cudaDeviceGetDefaultMemPool(&pool, c->device) == cudaSuccess) {
            cudaStreamSynchronize(c->stream);
            cudaMemPoolTrimTo(pool, 0);
        }
        e = cudaMalloc(&p, bytes ? bytes : 256);
    }
    if (e != cudaSuccess) {
        cudaGetLastError(); /* an allocation failure is not sticky: clear it */
        size_t f = 0, tot = 0;
        cudaMemGetInfo(&f, &tot);
        if (e == cudaErrorMemoryAllocation)
            return gf_fail("out of memory on cuda:%d: %.1f GiB asked, %.1f GiB free", c->device, gib(bytes), gib(f));
        return gf_fail("cuda:%d: allocating %.1f GiB: %s", c->device, gib(bytes), cudaGetErrorString(e));
    }
    out->ptr = p;
    out->dtype = t;
    return 0;
}

void cuda_free(gf_backend *be, gf_buf *b) {
    if (!b || gf_is_none(*b)) return;
    cudaSetDevice(cuda_of(be)->device);
    cudaError_t e = cudaFree(b->ptr);
    if (e != cudaSuccess) be_set_error(be, "cuda:%d: free: %s", cuda_of(be)->device, cudaGetErrorString(e));
    *b = gf_none();
}

void cuda_zero(gf_backend *be, gf_buf b, size_t n) {
    size_t bytes;
    if (gf_is_none(b) || !n) return;
    if (!bytes_of(n, b.dtype, &bytes)) {
        be_set_error(be, "zero: %zu elements overflow", n);
        return;
    }
    cudaMemsetAsync(b.ptr, 0, bytes, cuda_stream(be));
    cuda_after(be, "zero");
}

void *cuda_scratch(gf_backend *be, size_t bytes, const char *op) {
    void *p = NULL;
    cudaError_t e = cudaMallocAsync(&p, bytes ? bytes : 256, cuda_stream(be));
    if (e != cudaSuccess) {
        cudaGetLastError();
        size_t f = 0, t = 0;
        cudaMemGetInfo(&f, &t);
        be_set_error(be, "%s: out of memory on cuda:%d: %.2f GiB of scratch asked, %.1f GiB free", op,
                     cuda_of(be)->device, gib(bytes), gib(f));
        return NULL;
    }
    return p;
}

void cuda_scratch_free(gf_backend *be, void *p) {
    if (p) cudaFreeAsync(p, cuda_stream(be));
}

/* ------------------------------------------------------------- conversion */

/* out[n] = in[n] converted; 16-byte vectors when both sides are aligned. */
template <typename To, typename Ti> __global__ void convert_kernel(To *out, const Ti *in, size_t n) {
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = from_f<To>(to_f(in[i]));
}

__global__ void convert_f32_bf16_vec(bf16 *out, const float *in, size_t n8) {
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n8; i += stride) {
        const float4 a = ((const float4 *)in)[2 * i], b = ((const float4 *)in)[2 * i + 1];
        __nv_bfloat162 r[4] = {__floats2bfloat162_rn(a.x, a.y), __floats2bfloat162_rn(a.z, a.w),
                               __floats2bfloat162_rn(b.x, b.y), __floats2bfloat162_rn(b.z, b.w)};
        ((uint4 *)out)[i] = *(const uint4 *)r;
    }
}

__global__ void convert_bf16_f32_vec(float *out, const bf16 *in, size_t n8) {
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n8; i += stride) {
        uint4 u = ((const uint4 *)in)[i];
        const __nv_bfloat162 *h = (const __nv_bfloat162 *)&u;
        float2 f0 = __bfloat1622float2(h[0]), f1 = __bfloat1622float2(h[1]);
        float2 f2 = __bfloat1622float2(h[2]), f3 = __bfloat1622float2(h[3]);
        ((float4 *)out)[2 * i] = make_float4(f0.x, f0.y, f1.x, f1.y);
        ((float4 *)out)[2 * i + 1] = make_float4(f2.x, f2.y, f3.x, f3.y);
    }
}

/* dst <- src (device pointers), F32 <-> BF16; false for other pairs. */
static bool convert_on_device(gf_backend *be, void *dst, gf_dtype dt, const void *src, gf_dtype st, size_t n) {
    cudaStream_t s = cuda_stream(be);
    const unsigned th = 256, cap = 8u * (unsigned)cuda_of(be)->prop.multiProcessorCount * 8u;
    const bool vec = cuda_aligned16(dst) && cuda_aligned16(src);
    const size_t n8 = vec ? n / 8 : 0, done = n8 * 8;
    if (dt == GF_BF16 && st == GF_F32) {
        if (n8) cuda_launch(cuda_grid(n8, th, cap), th, 0, s, convert_f32_bf16_vec, (bf16 *)dst, (const float *)src, n8);
        if (n > done)
            cuda_launch(cuda_grid(n - done, th, cap), th, 0, s, convert_kernel<bf16, float>, (bf16 *)dst + done,
                                                                                    (const float *)src + done, n - done);
    } else if (dt == GF_F32 && st == GF_BF16) {
        if (n8) cuda_launch(cuda_grid(n8, th, cap), th, 0, s, convert_bf16_f32_vec, (float *)dst, (const bf16 *)src, n8);
        if (n > done)
            cuda_launch(cuda_grid(n - done, th, cap), th, 0, s, convert_kernel<float, bf16>, (float *)dst + done,
                                                                                    (const bf16 *)src + done, n - done);
    } else {
        return false;
    }
    return true;
}

void cuda_copy(gf_backend *be, gf_buf dst, gf_buf src, size_t n) {
    if (!n) return;
    if (gf_is_none(dst) || gf_is_none(src)) {
        be_set_error(be, "copy: a buffer is none");
        return;
    }
    size_t bytes;
    if (!bytes_of(n, src.dtype, &bytes)) {
        be_set_error(be, "copy: %zu elements overflow", n);
        return;
    }
    if (dst.dtype == src.dtype)
        cudaMemcpyAsync(dst.ptr, src.ptr, bytes, cudaMemcpyDeviceToDevice, cuda_stream(be));
    else if (!convert_on_device(be, dst.ptr, dst.dtype, src.ptr, src.dtype, n)) {
        be_set_error(be, "copy: cannot convert %s to %s", gf_dtype_name(src.dtype), gf_dtype_name(dst.dtype));
        return;
    }
    cuda_after(be, "copy");
}

/* ------------------------------------------------------------- host <-> device */

static bool convertible(gf_dtype a, gf_dtype b) {
    return a == b || ((a == GF_F32 || a == GF_BF16) && (b == GF_F32 || b == GF_BF16));
}

int cuda_upload(gf_backend *be, gf_buf dst, const void *src, gf_dtype src_t, size_t n) {
    cuda_impl *c = cuda_of(be);
    if (!n) return 0;
    if (gf_is_none(dst) || !src) return gf_fail("cuda:%d: upload: no buffer", c->device);
    if (!convertible(src_t, dst.dtype))
        return gf_fail("cuda:%d: upload: cannot convert %s to %s", c->device, gf_dtype_name(src_t),
                       gf_dtype_name(dst.dtype));
    size_t bytes;
    if (!bytes_of(n, src_t, &bytes)) return gf_fail("cuda:%d: upload: %zu elements overflow", c->device, n);
    cudaSetDevice(c->device);
    cudaError_t e;
    if (src_t == dst.dtype) {
        /* pageable source: returns once the bytes are staged, so the caller may reuse src */
        e = cudaMemcpyAsync(dst.ptr, src, bytes, cudaMemcpyHostToDevice, c->stream);
        if (e != cudaSuccess) return gf_fail("cuda:%d: upload: %s", c->device, cudaGetErrorString(e));
        return 0;
    }
    const size_t es = gf_dtype_size(src_t), chunk = STAGE_BYTES / es;
    void *stage = cuda_scratch(be, (n < chunk ? n : chunk) * es, "upload");
    if (!stage) return cuda_sync(be);
    for (size_t off = 0; off < n; off += chunk) {
        const size_t m = n - off < chunk ? n - off : chunk;
        e = cudaMemcpyAsync(stage, (const char *)src + off * es, m * es, cudaMemcpyHostToDevice, c->stream);
        if (e != cudaSuccess) {
            cuda_scratch_free(be, stage);
            return gf_fail("cuda:%d: upload: %s", c->device, cudaGetErrorString(e));
        }
        convert_on_device(be, (char *)dst.ptr + off * gf_dtype_size(dst.dtype), dst.dtype, stage, src_t, m);
    }
    cuda_scratch_free(be, stage);
    cuda_after(be, "upload");
    return 0;
}

int cuda_download(gf_backend *be, void *dst, gf_dtype dst_t, gf_buf src, size_t n) {
    cuda_impl *c = cuda_of(be);
    if (!n) return cuda_sync(be);
    if (gf_is_none(src) || !dst) return gf_fail("cuda:%d: download: no buffer", c->device);
    if (!convertible(src.dtype, dst_t))
        return gf_fail("cuda:%d: download: cannot convert %s to %s", c->device, gf_dtype_name(src.dtype),
                       gf_dtype_name(dst_t));
    size_t bytes;
    if (!bytes_of(n, dst_t, &bytes)) return gf_fail("cuda:%d: download: %zu elements overflow", c->device, n);
    cudaSetDevice(c->device);
    void *from = src.ptr, *stage = NULL;
    if (src.dtype != dst_t) {
        if (!(stage = cuda_scratch(be, bytes, "download"))) return cuda_sync(be);
        convert_on_device(be, stage, dst_t, src.ptr, src.dtype, n);
        from = stage;
    }
    cudaError_t e = cudaMemcpyAsync(dst, from, bytes, cudaMemcpyDeviceToHost, c->stream);
    if (stage) cuda_scratch_free(be, stage);
    if (e != cudaSuccess) be_set_error(be, "cuda:%d: download: %s", c->device, cudaGetErrorString(e));
    return cuda_sync(be); /* the bytes are the caller's only once the stream is done */
}
