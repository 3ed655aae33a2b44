/* Which of OpenBLAS's kernel sets runs this process's matrix products, and a
 * better one when its choice is a fallback.
 *
 * OpenBLAS (built with DYNAMIC_ARCH, as Debian's is) picks a kernel set from
 * the CPU's model number when it loads, before main. A release older than the
 * CPU does not know the model and can fall back to a set without AVX: Debian
 * 12's 0.3.21 chose Prescott (SSE3) on an Emerald Rapids Xeon (family 6, model
 * 207), whose AVX-512 Cooperlake set runs sgemm ~5x faster on one core
 * (32.5 against 159.5 GFLOP/s, docs/benchmarks.md). OPENBLAS_CORETYPE, read at
 * load, forces a set, so the fix is an environment variable and a re-exec
 * (src/cli/load_env.c). */
#ifndef GRAFT_BACKEND_CPU_BLAS_KERNELS_H
#define GRAFT_BACKEND_CPU_BLAS_KERNELS_H

#include <stdbool.h>

/* The set OpenBLAS runs ("Cooperlake", "Haswell", "Prescott", ...). */
const char *blas_kernels_name(void);

/* Whether a set of that name has no AVX kernels (the generic SSE sets). */
bool blas_kernels_lack_avx(const char *name);

/* The set this CPU can run best among those OpenBLAS 0.3.x builds for
 * x86-64 ("Cooperlake" with AVX-512 BF16, "SkylakeX" with AVX-512
 * F/BW/VL/DQ, "Haswell" with AVX2 and FMA), or NULL (another CPU or
 * architecture: nothing to say). */
const char *blas_kernels_for_cpu(void);

/* The decision, apart from the machine: the set to force given what OpenBLAS
 * chose, OPENBLAS_CORETYPE (NULL: unset) and blas_kernels_for_cpu(); NULL when
 * the variable is set, the choice has AVX, or the CPU lacks AVX2 and FMA. */
const char *blas_kernels_pick(const char *chosen, const char *coretype_env, const char *for_cpu);

/* blas_kernels_pick on this process and machine: the OPENBLAS_CORETYPE it
 * should have started with, or NULL. */
const char *blas_kernels_better(void);

#endif
