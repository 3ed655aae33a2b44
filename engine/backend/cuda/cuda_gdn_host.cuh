/* Host-side helpers of the GDN ops: argument checks and stream-ordered scratch.
 * Every failure becomes the backend's sticky error (be_set_error); ops return
 * without launching. */
#ifndef GRAFT_BACKEND_CUDA_GDN_HOST_CUH
#define GRAFT_BACKEND_CUDA_GDN_HOST_CUH

#include <stdint.h>

#include <atomic>

#include "backend/cuda/cuda_gdn_dev.cuh"

/* Scratch comes from the device's default memory pool on the op's stream
 * (cudaMallocAsync): a training step asks for the same sizes every time, so the
 * pool is told to keep what is freed (release threshold: no limit) instead of
 * returning it to the driver at every synchronization. */
static inline void gdn_pool_keep(gf_backend *be) {
#ifndef GRAFT_CUDA_EMU
    static std::atomic<bool> done[64]; /* be_run_tasks' threads come here too; setting it twice is harmless */
    int dev = cuda_of(be)->device;
    if (dev < 0 || dev >= 64 || done[dev].load(std::memory_order_relaxed)) return;
    cudaMemPool_t pool;
    if (cudaDeviceGetDefaultMemPool(&pool, dev) == cudaSuccess) {
        uint64_t keep = UINT64_MAX;
        cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
    }
    done[dev].store(true, std::memory_order_relaxed);
#else
    (void)be;
#endif
}

/* bytes of scratch on the op's stream; false (and the sticky error) when out of memory. */
static inline bool gdn_scratch(gf_backend *be, void **p, size_t bytes, const char *op) {
    *p = nullptr;
    if (bytes == 0) return true;
    gdn_pool_keep(be);
    cudaError_t e = cudaMallocAsync(p, bytes, cuda_stream(be));
    if (e != cudaSuccess) {
        cudaGetLastError(); /* clear it: out of memory is reported, not sticky in CUDA */
        be_set_error(be, "%s: out of device memory for %.1f MiB of scratch", op, (double)bytes / (1 << 20));
        *p = nullptr;
        return false;
    }
    return true;
}

static inline void gdn_scratch_free(gf_backend *be, void *p) {
    if (p) cudaFreeAsync(p, cuda_stream(be));
}

/* Raises a kernel's dynamic shared memory limit (needed above 48 KiB). */
template <typename K> static inline bool gdn_smem_limit(gf_backend *be, K kernel, size_t bytes, const char *op) {
    if (bytes > cuda_of(be)->prop.sharedMemPerBlockOptin) {
        be_set_error(be, "%s: needs %zu bytes of shared memory, the device has %zu", op, bytes,
                     (size_t)cuda_of(be)->prop.sharedMemPerBlockOptin);
        return false;
    }
    cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
    if (e != cudaSuccess) {
        be_set_error(be, "%s: %s", op, cudaGetErrorString(e));
        return false;
    }
    return true;
}

static inline bool gdn_dtype_is(gf_backend *be, gf_buf b, gf_dtype t, const char *op, const char *name) {
    if (gf_is_none(b) || b.dtype == t) return true;
    be_set_error(be, "%s: %s is %s, expected %s", op, name, gf_dtype_name(b.dtype), gf_dtype_name(t));
    return false;
}

static inline bool gdn_present(gf_backend *be, gf_buf b, const char *op, const char *name) {
    if (!gf_is_none(b)) return true;
    be_set_error(be, "%s: %s is missing", op, name);
    return false;
}

#endif
