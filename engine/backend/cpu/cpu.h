/* Internals shared by the CPU backend's files (engine/backend/cpu only): the
 * reference implementation of backend.h in float32 on host memory, with
 * OpenBLAS for matrix products and OpenMP over rows / heads / sequences.
 *
 * Threads: every parallel region names its thread count (be_threads), so a
 * sub-backend of be_run_tasks (threads = 1) runs single-threaded inside its
 * task thread, and OpenBLAS, called inside a parallel region, runs on the
 * calling thread (blas_serial.h: in a region of one thread too). Determinism: work is split into fixed blocks whose partial
 * sums are added in block order, so a fixed thread count gives fixed bits
 * (most reductions here do not depend on the thread count at all). */
#ifndef GRAFT_BACKEND_CPU_CPU_H
#define GRAFT_BACKEND_CPU_CPU_H

#include <stddef.h>

#include "backend/backend_impl.h"

/* Host pointers of CPU buffers (ACT is float32 here). */
static inline float *cpu_f(gf_buf b) { return (float *)b.ptr; }
static inline double *cpu_d(gf_buf b) { return (double *)b.ptr; }
static inline int *cpu_i(gf_buf b) { return (int *)b.ptr; }

/* Threads for a region with `work` independent items (at most be_threads, at least 1). */
int cpu_threads(const gf_backend *be, size_t work);

/* Below this many elements a parallel region costs more than it saves. (Until session 38 the row ops
 * split at 16 rows whatever their width: a stories260K forward of 64 rows x 64 opened ~17,600 regions
 * of two threads for RMSNorm alone, each a futex wake under OMP_WAIT_POLICY=passive; until session 39
 * the losses split from two rows, 1,599 regions in an eval of that model's 512-entry rows.) */
#define CPU_ELEMS_PAR 65536

/* Scratch for an op: malloc or a sticky "out of memory" error (then NULL). */
void *cpu_scratch(gf_backend *be, size_t bytes, const char *what);

/* cpu_NAME for every op of the table (backend_impl.h): the memory ops and
 * tasks in cpu_backend.c, the rest in cpu_dense.c, cpu_attention.c,
 * cpu_gdn.c, cpu_loss.c and cpu_optim.c. */
#define CPU_OP_DECL(ret, name, params) ret cpu_##name params;
GF_BACKEND_OPS(CPU_OP_DECL)
#undef CPU_OP_DECL

#endif
