/* Settings that graft's libraries read when they load, before main, so that
 * setting them means re-executing: graft sets the ones it needs and execs
 * itself once (the same argv, the same process id).
 *   OMP_WAIT_POLICY=passive unless set: libgomp's spinning waiters cost 2-10x
 *     on a busy 2-core machine and steal the workbench's UI thread.
 *   OPENBLAS_CORETYPE unless set, and only when OpenBLAS fell back to kernels
 *     without AVX on a CPU with AVX2 and FMA (engine/backend/cpu/blas_kernels.h):
 *     the set this CPU runs best.
 * Setting either variable yourself keeps graft from touching it (and from the
 * exec, which a valgrind run would not follow). */
#ifndef GRAFT_CLI_LOAD_ENV_H
#define GRAFT_CLI_LOAD_ENV_H

#include <stddef.h>

/* Call first in main. Returns when nothing needed setting, or after a failed
 * exec; one warning line on stderr when OpenBLAS still runs kernels without
 * AVX that graft asked it to replace. */
void load_env_reexec(char **argv);

/* "OpenBLAS kernels: NAME", and when graft chose them, what OpenBLAS had
 * chosen (graft --version). */
void load_env_blas_line(char *buf, size_t n);

#endif
