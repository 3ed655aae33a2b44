/* OpenBLAS inside the CPU backend's parallel regions (its ops and the GDN templates, which
 * engine/gdn/gdn_ref_f64.c also compiles). */
#ifndef GRAFT_BACKEND_CPU_BLAS_SERIAL_H
#define GRAFT_BACKEND_CPU_BLAS_SERIAL_H

#include <omp.h>

/* First thing in a parallel region whose threads call OpenBLAS: one thread for the BLAS calls this
 * thread makes in it. OpenBLAS (its OpenMP build) keeps to the calling thread only inside an active
 * region; in a region of one thread (too little work to split, or a be_run_tasks sub-backend's) it
 * started a nested team of omp_get_max_threads() threads for every call, and libgomp makes a nested
 * team's threads anew each time: 25,569 threads for one `graft eval` of a stories260K student, which
 * took 10.9 s (3.8 with --threads 1) on an idle 2-core machine and 146 s beside two busy processes.
 * The count is this thread's own (an OpenMP ICV of the region's implicit task): outside the region
 * it is what it was, and OpenBLAS, which follows it, takes its own count back at its next call there.
 * With it that eval takes 5.95 s idle and 26 s beside the two processes. */
static inline void cpu_region_blas_serial(void) { omp_set_num_threads(1); }

#endif
