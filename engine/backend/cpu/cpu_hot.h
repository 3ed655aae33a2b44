/* CPU_HOT: an element loop's function built twice, for x86-64-v2 (the build's
 * target) and for AVX2 + FMA (x86-64-v3), and picked at run time by GCC's
 * function multi-versioning. With libmvec's exps declared simd in the file,
 * its omp simd loops then call the 4-double / 8-float AVX2 forms. Not under
 * clang (the fuzzers) nor ASan (whose interceptors the resolver runs before). */
#ifndef GRAFT_BACKEND_CPU_HOT_H
#define GRAFT_BACKEND_CPU_HOT_H

#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define CPU_HOT __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define CPU_HOT
#endif

#endif
