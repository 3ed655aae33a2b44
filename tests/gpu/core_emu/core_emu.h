/* A CPU emulation of what the CUDA backend's kernels use of CUDA, so that the
 * product's kernel code runs (slowly) where there is no GPU.
 * Forced in front of every file of tests/gpu/core_emu's build (g++ -include,
 * with -DGRAFT_CUDA_EMU); never part of the product.
 *
 * Every thread of a block is a fiber (ucontext). __syncthreads is a barrier
 * over the block's live fibers; the warp-synchronous operations (shuffles,
 * __syncwarp, ldmatrix, mma.m16n8k16) exchange values among the 32 fibers of
 * a warp through barriers; blocks run one after another (so `static` stands
 * for __shared__); device memory is host memory; cp.async copies at once.
 * GRAFT_EMU_ORDER=reverse runs the fibers in reverse order between barriers,
 * which exposes a barrier the code needs and lacks.
 *
 * It checks: indexing, tiling, masking, the fragment layouts of ldmatrix
 * (.trans too) and mma as the PTX ISA defines them, barriers, split/combine
 * logic. It cannot check: timing, bank conflicts, the memory model, or
 * anything about the real instructions beyond their documented semantics. */
#ifndef GRAFT_TESTS_GPU_CORE_EMU_H
#define GRAFT_TESTS_GPU_CORE_EMU_H

#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <functional>

#include "tests/gpu/emu/host_qualifiers.h"
#undef __shared__
#define __shared__ static /* blocks run one at a time */

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

float emu_shfl_xor(float v, int mask);
double emu_shfl_xor_d(double v, int mask);
float emu_shfl_idx(float v, int src);
static inline float __shfl_xor_sync(unsigned, float v, int mask) { return emu_shfl_xor(v, mask); }
static inline double __shfl_xor_sync(unsigned, double v, int mask) { return emu_shfl_xor_d(v, mask); }
static inline float __shfl_sync(unsigned, float v, int src) { return emu_shfl_idx(v, src); }
bool emu_any(bool v);
static inline int __any_sync(unsigned, int v) { return emu_any(v != 0); }

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

/* Fibers switch only at barriers, so a read-modify-write between them is atomic. */
static inline float atomicAdd(float *p, float v) {
    const float o = *p;
    *p = o + v;
    return o;
}
static inline double atomicAdd(double *p, double v) {
    const double o = *p;
    *p = o + v;
    return o;
}
static inline float2 atomicAdd(float2 *p, float2 v) {
    const float2 o = *p;
    p->x += v.x;
    p->y += v.y;
    return o;
}

void emu_cp_async16(void *dst, const void *src, bool valid);
void emu_ldmatrix_x4(uint32_t (&r)[4], const void *p, bool trans);
void emu_mma_bf16_16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1);
void *emu_dynamic_smem();

void emu_run(dim3 grid, dim3 block, size_t smem, const std::function<void()> &body);
template <typename F> static inline void emu_launch(dim3 grid, dim3 block, size_t smem, F f) {
    emu_run(grid, block, smem, std::function<void()>(f));
}

#endif
