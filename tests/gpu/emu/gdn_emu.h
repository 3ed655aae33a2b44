/* A CPU emulation of what the GDN kernels use of CUDA, so that their logic runs
 * (slowly) on a machine without a GPU: every thread of a block is a fiber
 * (ucontext), __syncthreads and the warp-synchronous operations (__syncwarp,
 * shuffle, mma) are barriers between fibers, blocks run one after another, device memory is
 * host memory. Test code only: tests/gpu/gdn.mk forces it in front of every
 * file of the emulated build (-include, with -DGDN_EMULATE); no product file
 * includes it.
 *
 * What it checks: indexing, tiling, the mma fragment layouts (as the PTX ISA
 * defines them for m16n8k16), barriers (GDN_EMU_ORDER=reverse|shuffle runs the
 * fibers of a block in another order between barriers, which exposes a missing
 * barrier), shared-memory sizes and reads of unwritten shared memory (each
 * block's starts as all-ones bytes: NaN as fp32 and as bf16).
 * What it cannot: timing, bank conflicts, memory-model subtleties. */
#ifndef GRAFT_TESTS_GPU_EMU_GDN_EMU_H
#define GRAFT_TESTS_GPU_EMU_GDN_EMU_H

#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <functional>

#include "tests/gpu/emu/host_qualifiers.h"

struct GdnEmuIdx {
    unsigned x, y, z;
};

GdnEmuIdx gdn_emu_thread_idx();
GdnEmuIdx gdn_emu_block_idx();
GdnEmuIdx gdn_emu_block_dim();
GdnEmuIdx gdn_emu_grid_dim();
#define threadIdx (gdn_emu_thread_idx())
#define blockIdx (gdn_emu_block_idx())
#define blockDim (gdn_emu_block_dim())
#define gridDim (gdn_emu_grid_dim())

void gdn_emu_sync_block();
#define __syncthreads() gdn_emu_sync_block()
void gdn_emu_sync_warp();
float gdn_emu_shfl_xor(float v, int mask);
void gdn_emu_mma_bf16_16816(float d[4], const uint32_t a[4], const uint32_t b[2]);
void gdn_emu_ldmatrix(uint32_t *r, int n, const void *row, bool trans);
char *gdn_emu_smem();
void gdn_emu_run(dim3 grid, dim3 block, size_t smem, const std::function<void()> &body);

template <typename F> inline void gdn_emu_launch(dim3 grid, dim3 block, size_t smem, F f) {
    gdn_emu_run(grid, block, smem, std::function<void()>(f));
}

template <typename T> inline T gdn_emu_atomic_add(T *p, T v) {
    T old = *p;
    *p = old + v; /* fibers switch only at barriers: this is atomic */
    return old;
}
#define atomicAdd gdn_emu_atomic_add

static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline int __ffs(int x) { return __builtin_ffs(x); }

/* Device memory is host memory; these are the runtime calls the GDN code makes. */
static inline cudaError_t gdn_emu_malloc(void **p, size_t n) {
    *p = malloc(n ? n : 1);
    if (!*p) return cudaErrorMemoryAllocation;
    memset(*p, 0xA5, n); /* not zero: unwritten scratch must not look like data */
    return cudaSuccess;
}
#define cudaMallocAsync(p, n, s) gdn_emu_malloc((void **)(p), (n))
#define cudaFreeAsync(p, s) (free(p), cudaSuccess)
#define cudaMemsetAsync(p, v, n, s) (memset((p), (v), (n)), cudaSuccess)
#define cudaMemcpyAsync(d, s_, n, k, st) (memcpy((d), (s_), (n)), cudaSuccess)
#define cudaFuncSetAttribute(k, a, v) cudaSuccess
static inline cudaError_t gdn_emu_last_error() { return cudaSuccess; }
#define cudaGetLastError() gdn_emu_last_error()
#define cudaGetErrorString(e) "emulated CUDA error"

#endif
