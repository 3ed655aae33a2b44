/* CUDA's function and variable qualifiers mean nothing to the host compiler:
 * both CPU emulations of the kernels (tests/gpu/emu for the GDN kernels,
 * tests/gpu/core_emu for the core's) define them away after
 * <cuda_runtime.h>. __shared__ is each emulation's own business. */
#ifndef GRAFT_TESTS_GPU_EMU_HOST_QUALIFIERS_H
#define GRAFT_TESTS_GPU_EMU_HOST_QUALIFIERS_H

#include <cuda_runtime.h>

#undef __global__
#undef __device__
#undef __host__
#undef __forceinline__
#undef __launch_bounds__
#undef __align__
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(n)

#endif
