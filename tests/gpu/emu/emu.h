/* A CPU emulation of what the CUDA backend's kernels use of CUDA, so that the
 * product's kernel code (the .cu files of engine/backend/cuda: the core's
 * kernels and the Gated DeltaNet ones) runs, slowly, where there is no GPU.
 * Test code only: tests/gpu/emu/emu.mk forces this header in front of every
 * file of the emulated builds (g++ -include, with -DGRAFT_CUDA_EMU); no
 * product file includes it.
 *
 * Every thread of a block is a fiber (emu.cpp: entered through makecontext,
 * switched by __builtin_setjmp / __builtin_longjmp). __syncthreads is a barrier
 * over the block's live fibers, bar.sync id, n (emu_bar_sync) one over n of
 * them; the warp-synchronous operations (__syncwarp,
 * shuffles, __any_sync, ldmatrix, mma.m16n8k16, wgmma) exchange values among the
 * lanes of a warp through barriers, and all lanes must meet at the same one;
 * blocks run one after another (so `static` stands for __shared__); device
 * memory is host memory; a cp.async lands at the wait that completes its
 * group, its destination NaN until then. Dynamic shared memory and
 * the scratch the runtime calls below hand out start as garbage (0xff bytes:
 * NaN in fp32 and bf16), so a read of what no thread wrote shows.
 * GRAFT_EMU_ORDER=reverse|shuffle runs the fibers of a block in reverse or in
 * a fresh random order between barriers, which exposes a barrier the code
 * needs and lacks.
 *
 * It checks: indexing, tiling, masking, the fragment layouts of ldmatrix
 * (.trans too), mma and wgmma (its shared-memory descriptors and 128-byte
 * swizzle too) as the PTX ISA defines them, barriers, shared-memory
 * sizes, split/combine logic. It cannot check: timing, bank conflicts, the
 * memory model, or anything about the real instructions beyond their
 * documented semantics. */
#ifndef GRAFT_TESTS_GPU_EMU_EMU_H
#define GRAFT_TESTS_GPU_EMU_EMU_H

/* what engine/backend/cuda/cuda_common.cuh looks for under GRAFT_CUDA_EMU */
#define GRAFT_CUDA_EMU_HARNESS 1

#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <functional>

/* CUDA's qualifiers mean nothing to the host compiler. */
#undef __global__
#undef __device__
#undef __host__
#undef __forceinline__
#undef __launch_bounds__
#undef __align__
#undef __shared__
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(n)
#define __shared__ static /* blocks run one at a time */

/* ------------------------------------------------------------- indexing, barriers */

struct emu_idx {
    unsigned x, y, z;
};
emu_idx emu_thread_idx();
emu_idx emu_block_idx();
emu_idx emu_block_dim();
emu_idx emu_grid_dim();
#define threadIdx (emu_thread_idx())
#define blockIdx (emu_block_idx())
#define blockDim (emu_block_dim())
#define gridDim (emu_grid_dim())

void emu_syncthreads();
void emu_syncwarp();
#define __syncthreads() emu_syncthreads()
#define __syncwarp(...) emu_syncwarp()
/* bar.sync id, n (PTX): barrier id (1..15; 0 is __syncthreads's) lets its
 * threads go once n of them (whole warps: n a multiple of 32) have arrived, so
 * a group of warps meets without the rest of the block (warp specialisation).
 * Every arrival at one barrier must name the same n. */
void emu_bar_sync(int id, int n);
/* bar.arrive id, n (PTX): counts this thread's arrival at barrier id without
 * waiting (a producer signalling a group that waits there with bar.sync); the
 * barrier fills when n threads have arrived or synced. The same checks. The
 * arriving thread then yields to the others, so that threads its arrival
 * released run before it goes on (what it does after the arrive must not be
 * what they read). */
void emu_bar_arrive(int id, int n);

/* ------------------------------------------------------------- warp exchanges */

float emu_shfl_xor(float v, int mask);
double emu_shfl_xor_d(double v, int mask);
float emu_shfl_idx(float v, int src);
bool emu_any(bool v);
static inline float __shfl_xor_sync(unsigned, float v, int mask) { return emu_shfl_xor(v, mask); }
static inline double __shfl_xor_sync(unsigned, double v, int mask) { return emu_shfl_xor_d(v, mask); }
static inline float __shfl_sync(unsigned, float v, int src) { return emu_shfl_idx(v, src); }
static inline int __shfl_sync(unsigned, int v, int src) { return (int)emu_shfl_idx((float)v, src); } /* |v| < 2^24 */
static inline int __any_sync(unsigned, int v) { return emu_any(v != 0); }

/* ldmatrix.sync.aligned.m8n8.x{n}[.trans].shared.b16 (n = 1, 2 or 4) */
void emu_ldmatrix(uint32_t *r, int n, const void *row, bool trans);
/* mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32: d[4] += A (a[4]) B (b0, b1) */
void emu_mma_bf16_16816(float *d, const uint32_t *a, uint32_t b0, uint32_t b1);
/* wgmma.mma_async.sync.aligned.m64nNk16.f32.bf16.bf16 (N 64 or 128), done at
 * once (so its fence, commit and wait are no-ops): the 64 x N tile of the
 * calling warp's warpgroup (four consecutive warps; this warp's 16 rows are
 * computed by it), d[N / 2] = A B (+ d when acc). A from the warp's registers
 * a[4] (mma.m16n8k16's A layout) or, a null, from shared memory through the
 * descriptor da (K-major or, trans_a, MN-major); B through db, K-major or,
 * trans_b, MN-major. The
 * descriptors are decoded as cuda_wgmma.cuh describes them: 128-byte swizzle
 * only, base offset 0, addresses offsets into dynamic shared memory. A block
 * whose four warps of a warpgroup issued different numbers of wgmma fails at
 * its end (a wgmma in a branch some warps of the group did not take). */
void emu_wgmma_bf16(float *d, int N, const uint32_t *a, uint64_t da, uint64_t db, bool trans_a, bool trans_b, bool acc);
/* cp.async of 16 bytes to dynamic shared memory (zeros when !valid), in the
 * thread's current group; cp.async.commit_group closes the group;
 * cp.async.wait_group n completes every committed group but the newest n.
 * Until its group completes, a copy's destination holds 0xff bytes (NaN). */
void emu_cp_async16(void *dst, const void *src, bool valid);
void emu_cp_commit();
void emu_cp_wait(int n);

/* ------------------------------------------------------------- arithmetic */

/* CUDA's integer min / max */
static inline int min(int a, int b) { return a < b ? a : b; }
static inline int max(int a, int b) { return a > b ? a : b; }

/* Round-to-nearest arithmetic intrinsics (the build has -ffp-contract=off, so
 * nothing is fused into a multiply-add behind their back). */
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fsub_rn(float a, float b) { return a - b; }
static inline float __fdiv_rn(float a, float b) { return a / b; }
static inline float __fsqrt_rn(float a) { return sqrtf(a); }
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline int __ffs(int x) { return __builtin_ffs(x); }

/* Fibers switch only at barriers, so a read-modify-write between them is atomic. */
template <typename T> static inline T atomicAdd(T *p, T v) {
    const T o = *p;
    *p = o + v;
    return o;
}
static inline float2 atomicAdd(float2 *p, float2 v) {
    const float2 o = *p;
    p->x += v.x;
    p->y += v.y;
    return o;
}

/* ------------------------------------------------------------- launches, memory */

/* The running block's dynamic shared memory. */
void *emu_dynamic_smem();

/* Runs body as every thread of every block of grid (block by block). */
void emu_run(dim3 grid, dim3 block, size_t smem, const std::function<void()> &body);
template <typename F> static inline void emu_launch(dim3 grid, dim3 block, size_t smem, F f) {
    emu_run(grid, block, smem, std::function<void()>(f));
}

/* Device memory is host memory; these are the runtime calls the kernels' host
 * code makes. */
static inline cudaError_t emu_malloc(void **p, size_t n) {
    *p = malloc(n ? n : 1);
    if (!*p) return cudaErrorMemoryAllocation;
    memset(*p, 0xA5, n); /* not zero: unwritten scratch must not look like data */
    return cudaSuccess;
}
static inline cudaError_t emu_last_error() { return cudaSuccess; }
#define cudaMallocAsync(p, n, s) emu_malloc((void **)(p), (n))
#define cudaFreeAsync(p, s) (free(p), cudaSuccess)
#define cudaMemsetAsync(p, v, n, s) (memset((p), (v), (n)), cudaSuccess)
#define cudaMemcpyAsync(d, s_, n, k, st) (memcpy((d), (s_), (n)), cudaSuccess)
#define cudaFuncSetAttribute(k, a, v) cudaSuccess
#define cudaGetLastError() emu_last_error()
#define cudaGetErrorString(e) "emulated CUDA error"

#endif
